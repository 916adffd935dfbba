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

from stategraph.studio._context import Studio, StudioError
from stategraph.studio._jsonio import sse
from stategraph.studio._params import (
    checkpoint_ref,
    flag,
    identifier,
    mapping,
    optional_id,
    text,
    whole,
)
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


_COMMAND_FIELDS = ("resume", "update", "goto")


def _command(body: Mapping[str, Any]) -> Command:
    """``Command(resume=, update=, goto=)`` of a run's ``command`` object (checked)."""
    unknown = [k for k in body if k not in _COMMAND_FIELDS]
    if unknown:
        raise StudioError(
            f"'command' has unknown field(s) {', '.join(map(repr, unknown))}: it takes "
            "resume, update and goto.",
            422,
        )
    if all(body.get(k) is None for k in _COMMAND_FIELDS):
        raise StudioError("'command' needs resume, update or goto.", 422)
    goto = body.get("goto") or ()
    if isinstance(goto, (str, Mapping)):
        goto = [goto]
    if not isinstance(goto, (list, tuple)):
        raise StudioError(
            "'command.goto' must be a node name, a {node, input} object or a list.", 422
        )
    sends: list[Any] = []
    for item in goto:
        if isinstance(item, Mapping):
            node = item.get("node")
            if not isinstance(node, str) or not node:
                raise StudioError("'command.goto' objects need a 'node' (a node name).", 422)
            sends.append(Send(node, item.get("input")))
        elif isinstance(item, str) and item:
            sends.append(item)
        else:
            raise StudioError(f"'command.goto' holds {item!r:.40}, not a node name.", 422)
    update = body.get("update")
    if update is not None and not isinstance(update, (dict, list)):
        raise StudioError("'command.update' must be a JSON object or a list of [key, value].", 422)
    return Command(resume=body.get("resume"), update=update, goto=sends)


def _check_input(studio: Studio, value: Any) -> Any:
    """Refuse an ``input`` that is not an object for a graph whose input is one."""
    if value is None or isinstance(value, dict):
        return value
    try:
        schema = studio.graph.get_input_jsonschema()
    except Exception:  # a schema pydantic cannot express: let the graph judge
        return value
    if isinstance(schema, dict) and schema.get("type") == "object":
        raise StudioError(
            f"'input' must be a JSON object of the graph's state keys (or null to "
            f"continue), got {type(value).__name__}.",
            422,
        )
    return value


def _nodes(studio: Studio, body: Mapping[str, Any], name: str) -> Any:
    """``interrupt_before``/``interrupt_after``: ``"*"`` or a list of the graph's nodes."""
    value = body.get(name)
    if value is None or value == "*":
        return value
    nodes = set(getattr(studio.graph, "nodes", None) or ())
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise StudioError(f"'{name}' must be \"*\" or a list of node names.", 422)
    unknown = [v for v in value if nodes and v not in nodes]
    if unknown:
        raise StudioError(
            f"'{name}' names {', '.join(map(repr, unknown))}, which the graph does not have "
            f"(nodes: {', '.join(sorted(n for n in nodes if not n.startswith('__')))}).",
            422,
        )
    return value


def run_request(studio: Studio, thread_id: str | None, body: Mapping[str, Any]) -> RunRequest:
    """Check a run body (LangGraph Server's fields) and build the run."""
    studio.check_assistant(text(body, "assistant_id"))
    if body.get("input") is not None and body.get("command") is not None:
        raise StudioError("Give either input or command, not both.", 422)
    raw_modes = body.get("stream_mode") or ["values"]
    if isinstance(raw_modes, str):
        raw_modes = [raw_modes]
    if not isinstance(raw_modes, list) or not all(isinstance(m, str) for m in raw_modes):
        raise StudioError("'stream_mode' must be a mode name or a list of them.", 422)
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
    config = dict(mapping(body, "config") or {})
    conf = dict(mapping(config, "configurable") or {})
    for key in ("checkpoint_id", "checkpoint_ns"):
        if conf.get(key) is not None:
            conf[key] = identifier(conf[key], f"config.configurable.{key}")
    for key, top in (("recursion_limit", 10**6), ("max_concurrency", 10**6)):
        if config.get(key) is not None:
            config[key] = whole(config, key, None, minimum=1, maximum=top)
    if thread_id is not None:
        conf["thread_id"] = thread_id
    else:
        conf["thread_id"] = str(uuid.uuid4())
    ref_id, ref_ns = checkpoint_ref(body)
    checkpoint_id = optional_id(body, "checkpoint_id") or ref_id
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
        conf["checkpoint_ns"] = ref_ns
    config["configurable"] = conf
    metadata = mapping(body, "metadata")
    if metadata:
        config["metadata"] = {**(mapping(config, "metadata") or {}), **metadata}
    command = body.get("command")
    if command is not None and not isinstance(command, Mapping):
        raise StudioError("'command' must be a JSON object (resume, update, goto).", 422)
    return RunRequest(
        input=_command(command) if command is not None else _check_input(studio, body.get("input")),
        config=config,
        modes=modes,
        subgraphs=flag(body, "stream_subgraphs"),
        context=body.get("context"),
        interrupt_before=_nodes(studio, body, "interrupt_before"),
        interrupt_after=_nodes(studio, body, "interrupt_after"),
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
