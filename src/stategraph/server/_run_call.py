"""How a run is called: the graph's config, context, input and options, built from
the run's record and its assistant (pure functions, no I/O)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stategraph.types import Command, Send

__all__ = ["GraphCall", "graph_call", "command_from_json", "STREAM_MODES", "check_stream_modes"]

STREAM_MODES = (
    "values",
    "updates",
    "messages",
    "messages-tuple",
    "custom",
    "events",
    "debug",
    "tasks",
    "checkpoints",
)
"""The stream modes a run accepts (LangGraph Server's)."""

_LIBRARY_MODES = {
    "values": "values",
    "updates": "updates",
    "messages": "messages",
    "messages-tuple": "messages",
    "custom": "custom",
    "debug": "debug",
    "tasks": "tasks",
    "checkpoints": "checkpoints",
}


def check_stream_modes(raw: Any) -> list[str]:
    """The requested stream modes as a list (default ``["values"]``); 422-worthy
    ``ValueError`` naming an unknown one."""
    if raw is None or raw == []:
        return ["values"]
    modes = [raw] if isinstance(raw, str) else list(raw)
    for mode in modes:
        if mode not in STREAM_MODES:
            raise ValueError(f"Unknown stream_mode {mode!r}: use one of {', '.join(STREAM_MODES)}.")
    return list(dict.fromkeys(modes))


def command_from_json(body: Mapping[str, Any]) -> Command:
    """LangGraph Server's command object (``resume``, ``update``, ``goto``) as a Command."""
    goto_raw = body.get("goto")
    goto: list[Any] = []
    if goto_raw is not None:
        items = goto_raw if isinstance(goto_raw, list) else [goto_raw]
        for item in items:
            if isinstance(item, Mapping):
                if "node" not in item:
                    raise ValueError(
                        'command.goto items must be node names or {"node": ..., "input": ...}.'
                    )
                goto.append(Send(item["node"], item.get("input")))
            else:
                goto.append(item)
    kwargs: dict[str, Any] = {}
    if "resume" in body:
        kwargs["resume"] = body["resume"]
    if body.get("update") is not None:
        update = body["update"]
        if isinstance(update, list):
            update = [tuple(u) if isinstance(u, list) else u for u in update]
        kwargs["update"] = update
    if goto:
        kwargs["goto"] = goto if len(goto) > 1 else goto[0]
    return Command(**kwargs)


@dataclass
class GraphCall:
    """Everything ``graph.astream(...)`` needs for one run."""

    graph_id: str
    input: Any
    config: dict[str, Any]
    context: Any
    modes: list[str]
    """The client's stream modes (``messages-tuple``, ``events``, ...)."""
    library_modes: list[str]
    """What the graph is asked to stream (``values`` always, for the run's result)."""
    subgraphs: bool
    interrupt_before: Any
    interrupt_after: Any
    durability: str | None


def _merge_config(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = {**base, **extra}
    for key in ("configurable", "metadata"):
        if key in base or key in extra:
            out[key] = {**(base.get(key) or {}), **(extra.get(key) or {})}
    tags = [*(base.get("tags") or []), *(extra.get("tags") or [])]
    if tags:
        out["tags"] = list(dict.fromkeys(tags))
    return out


def graph_call(
    run: Mapping[str, Any],
    assistant: Mapping[str, Any],
    *,
    attempt: int,
    api_url: str,
    resume_from_checkpoint: bool,
    version: str,
) -> GraphCall:
    """The call of ``run`` (a run record) on ``assistant``'s graph.

    ``resume_from_checkpoint``: an earlier attempt of this run saved checkpoints (its
    worker died), so the graph continues from the last one instead of taking the input
    again."""
    kwargs = run["kwargs"]
    run_id, thread_id = run["run_id"], run["thread_id"]
    graph_id = assistant["graph_id"]
    config = _merge_config(assistant.get("config") or {}, kwargs.get("config") or {})
    conf = dict(config.get("configurable") or {})
    user = conf.get("langgraph_auth_user")
    user_id = conf.get("langgraph_auth_user_id") or ""
    conf.update(
        thread_id=thread_id,
        run_id=run_id,
        graph_id=graph_id,
        assistant_id=assistant["assistant_id"],
        user_id=user_id,
    )
    checkpoint = kwargs.get("checkpoint") or {}
    if checkpoint.get("checkpoint_id") and not resume_from_checkpoint:
        conf["checkpoint_id"] = checkpoint["checkpoint_id"]
        conf["checkpoint_ns"] = checkpoint.get("checkpoint_ns") or ""
    config["configurable"] = conf
    metadata = {
        **(config.get("metadata") or {}),
        **(run.get("metadata") or {}),
        "graph_id": graph_id,
        "assistant_id": assistant["assistant_id"],
        "run_attempt": attempt,
        "langgraph_version": version,
        "langgraph_api_version": version,
        "langgraph_plan": "developer",
        "langgraph_host": "self-hosted",
        "langgraph_api_url": api_url,
        "thread_id": thread_id,
        "run_id": run_id,
    }
    # user_id and langgraph_auth_user_id stay in configurable only: the library copies
    # them into checkpoint metadata (as LangGraph's does), and LangGraph Server keeps
    # them out of the run's config metadata (what `messages` and `tasks` events show)
    config["metadata"] = metadata
    config["run_id"] = run_id
    config.setdefault("run_name", graph_id)
    # the library's lease fences a worker that lost its claim (see docs/server.md)
    config.setdefault("multitask_strategy", "interrupt")
    if user is not None:
        conf["langgraph_auth_user"] = user
    context = {**(assistant.get("context") or {}), **(kwargs.get("context") or {})} or None
    if resume_from_checkpoint:
        graph_input: Any = None
    elif kwargs.get("command") is not None:
        graph_input = command_from_json(kwargs["command"])
    else:
        graph_input = kwargs.get("input")
    modes = check_stream_modes(kwargs.get("stream_mode"))
    library_modes = ["values"]
    for mode in modes:
        lib = _LIBRARY_MODES.get(mode)
        if lib is not None and lib not in library_modes:
            library_modes.append(lib)
    durability = kwargs.get("durability")
    if durability is None and kwargs.get("checkpoint_during") is False:
        durability = "exit"
    return GraphCall(
        graph_id=graph_id,
        input=graph_input,
        config=config,
        context=context,
        modes=modes,
        library_modes=library_modes,
        subgraphs=bool(kwargs.get("subgraphs")),
        interrupt_before=kwargs.get("interrupt_before"),
        interrupt_after=kwargs.get("interrupt_after"),
        durability=durability,
    )
