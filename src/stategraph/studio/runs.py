"""Running the graph for a request and streaming what happens as server-sent events.

A run executes ``graph.stream(...)`` in a worker thread (the user's nodes may block);
its chunks cross to the event loop through a queue. Event names follow LangGraph
Server: the stream mode, then ``|``-joined namespace parts for subgraph events;
``metadata`` comes first (the run id) and ``error`` reports a failure.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

from stategraph.studio.context import Studio, StudioError
from stategraph.studio.jsonio import sse
from stategraph.types import Command, Send

__all__ = ["RunRequest", "run_request", "stream_run", "SUPPORTED_MODES"]

SUPPORTED_MODES = ("values", "updates", "messages", "custom", "debug", "tasks", "checkpoints")


class RunRequest:
    """A run as the API body describes it, checked before anything runs."""

    def __init__(
        self,
        input: Any,
        config: dict[str, Any],
        modes: list[str],
        subgraphs: bool,
        context: Any,
        interrupt_before: Any,
        interrupt_after: Any,
    ) -> None:
        self.input = input
        self.config = config
        self.modes = modes
        self.subgraphs = subgraphs
        self.context = context
        self.interrupt_before = interrupt_before
        self.interrupt_after = interrupt_after
        self.run_id = str(uuid.uuid4())


def _command(body: Mapping[str, Any]) -> Command:
    goto = body.get("goto") or ()
    if isinstance(goto, (str, Mapping)):
        goto = [goto]
    sends = [Send(g["node"], g.get("input")) if isinstance(g, Mapping) else g for g in goto]
    return Command(resume=body.get("resume"), update=body.get("update"), goto=sends)


def run_request(studio: Studio, thread_id: str | None, body: Mapping[str, Any]) -> RunRequest:
    """Check a run body (LangGraph Server's fields) and build the run."""
    studio.check_assistant(body.get("assistant_id"))
    if body.get("input") is not None and body.get("command") is not None:
        raise StudioError("Give either input or command, not both.", 422)
    raw_modes = body.get("stream_mode") or ["values"]
    if isinstance(raw_modes, str):
        raw_modes = [raw_modes]
    modes = []
    for mode in raw_modes:
        mode = "messages" if mode == "messages-tuple" else mode
        if mode not in SUPPORTED_MODES:
            raise StudioError(
                f"Unknown stream_mode '{mode}': use one of {', '.join(SUPPORTED_MODES)}, "
                "messages-tuple.",
                422,
            )
        if mode not in modes:
            modes.append(mode)
    config = dict(body.get("config") or {})
    conf = dict(config.get("configurable") or {})
    if thread_id is not None:
        conf["thread_id"] = thread_id
    else:
        conf["thread_id"] = str(uuid.uuid4())
    checkpoint = body.get("checkpoint") or {}
    checkpoint_id = body.get("checkpoint_id") or checkpoint.get("checkpoint_id")
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
        conf["checkpoint_ns"] = checkpoint.get("checkpoint_ns", "")
    config["configurable"] = conf
    if body.get("metadata"):
        config["metadata"] = {**(config.get("metadata") or {}), **body["metadata"]}
    command = body.get("command")
    return RunRequest(
        input=_command(command) if command is not None else body.get("input"),
        config=config,
        modes=modes,
        subgraphs=bool(body.get("stream_subgraphs")),
        context=body.get("context"),
        interrupt_before=body.get("interrupt_before"),
        interrupt_after=body.get("interrupt_after"),
    )


async def stream_run(studio: Studio, run: RunRequest) -> AsyncIterator[bytes]:
    """The run's server-sent events: ``metadata``, one event per chunk, ``error``."""
    graph = studio.need_graph("A run")
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def put(kind: str, value: Any) -> None:
        if not loop.is_closed():
            loop.call_soon_threadsafe(queue.put_nowait, (kind, value))

    def work() -> None:
        try:
            kwargs: dict[str, Any] = {
                "stream_mode": run.modes,
                "subgraphs": True,
                "interrupt_before": run.interrupt_before,
                "interrupt_after": run.interrupt_after,
            }
            if run.context is not None:
                kwargs["context"] = run.context
            for ns, mode, data in graph.stream(run.input, run.config, **kwargs):
                if ns and not run.subgraphs:
                    continue
                put("chunk", ("|".join((mode, *ns)), data))
        except Exception as exc:
            put("error", exc)
        finally:
            put("end", None)

    yield sse("metadata", {"run_id": run.run_id, "attempt": 1})
    threading.Thread(target=work, name=f"studio-run-{run.run_id}", daemon=True).start()
    while True:
        kind, value = await queue.get()
        if kind == "chunk":
            yield sse(value[0], value[1])
        elif kind == "error":
            yield sse("error", {"error": type(value).__name__, "message": str(value)})
        else:
            return
