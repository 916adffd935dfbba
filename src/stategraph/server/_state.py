"""Thread state as LangGraph Server shows it (ThreadState), and the summary a thread
record keeps after each run (values, interrupts, status)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stategraph.server._json import dumps, plain

__all__ = ["state_json", "checkpoint_json", "ThreadSummary", "thread_summary", "interrupt_json"]


def checkpoint_json(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``{checkpoint_id, thread_id, checkpoint_ns}`` of a checkpoint config."""
    if not config:
        return None
    conf = config.get("configurable") or {}
    if not conf.get("checkpoint_id"):
        return None
    out = {
        "checkpoint_id": conf["checkpoint_id"],
        "thread_id": conf.get("thread_id"),
        "checkpoint_ns": conf.get("checkpoint_ns", ""),
    }
    if conf.get("checkpoint_map"):
        out["checkpoint_map"] = plain(conf["checkpoint_map"])
    return out


def interrupt_json(item: Any) -> dict[str, Any]:
    """An Interrupt as a thread state shows it: ``{id, value}``."""
    out = {"id": getattr(item, "id", None), "value": plain(getattr(item, "value", item))}
    schema = getattr(item, "response_schema", None)
    if schema is not None:
        out["response_schema"] = plain(schema)
    return out


def _task_json(task: Any) -> dict[str, Any]:
    child = task.state
    out: dict[str, Any] = {
        "id": task.id,
        "name": task.name,
        "path": plain(list(getattr(task, "path", ()) or ())),
        "error": None if task.error is None else str(task.error),
        "interrupts": [interrupt_json(i) for i in task.interrupts],
        "checkpoint": None,
        "state": None,
        "result": plain(task.result),
    }
    if hasattr(child, "values") and hasattr(child, "tasks"):
        out["state"] = state_json(child)
    elif isinstance(child, Mapping):
        conf = child.get("configurable")
        out["checkpoint"] = plain(dict(conf)) if conf else None
    return out


def state_json(snap: Any) -> dict[str, Any]:
    """A ``StateSnapshot`` as LangGraph Server's ThreadState."""
    tasks = [_task_json(t) for t in snap.tasks]
    checkpoint = checkpoint_json(snap.config)
    parent = checkpoint_json(snap.parent_config)
    return {
        "values": plain(snap.values),
        "next": list(snap.next),
        "tasks": tasks,
        "metadata": plain(snap.metadata) if checkpoint is not None else None,
        "created_at": snap.created_at,
        "checkpoint": checkpoint,
        "parent_checkpoint": parent,
        "interrupts": [i for t in tasks for i in t["interrupts"]],
        "checkpoint_id": None if checkpoint is None else checkpoint["checkpoint_id"],
        "parent_checkpoint_id": None if parent is None else parent["checkpoint_id"],
    }


def empty_state() -> dict[str, Any]:
    """The state of a thread with no checkpoint yet."""
    return {
        "values": {},
        "next": [],
        "tasks": [],
        "metadata": None,
        "created_at": None,
        "checkpoint": None,
        "parent_checkpoint": None,
        "interrupts": [],
        "checkpoint_id": None,
        "parent_checkpoint_id": None,
    }


@dataclass
class ThreadSummary:
    """What a thread record keeps of the thread's latest state."""

    values_json: str | None
    interrupts: dict[str, list[dict[str, Any]]]
    next: list[str]

    @property
    def status(self) -> str:
        """``interrupted`` when the thread waits (interrupts or breakpoint), else ``idle``."""
        return "interrupted" if self.interrupts or self.next else "idle"


def summary_of(snap: Any) -> ThreadSummary:
    """The summary of a ``StateSnapshot`` (with or without a checkpoint)."""
    if not (snap.config.get("configurable") or {}).get("checkpoint_id"):
        return ThreadSummary(None, {}, [])
    interrupts = {
        t.id: [interrupt_json(i) for i in t.interrupts] for t in snap.tasks if t.interrupts
    }
    return ThreadSummary(dumps(snap.values), interrupts, list(snap.next))


async def thread_summary(
    saver: Any, thread_id: str, graphs: Any, run: Mapping[str, Any] | None = None
) -> ThreadSummary:
    """The summary of the thread's latest state, read through its graph (the graph of
    the run's assistant) when the server knows it, else from the checkpoint alone."""
    graph_id = None
    if run is not None:
        graph_id = (run.get("metadata") or {}).get("graph_id")
    graph = graphs.static(graph_id) if graph_id in graphs.ids else None
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    if graph is not None:
        return summary_of(await graph.aget_state(config))
    saved = await saver.aget_tuple(config)
    if saved is None:
        return ThreadSummary(None, {}, [])
    # no graph to read it with: the state keys are the non-internal channels
    values = {
        k: v
        for k, v in (saved.checkpoint.get("channel_values") or {}).items()
        if not k.startswith(("branch:", "join:", "__"))
    }
    by_task: dict[str, list[dict[str, Any]]] = {}
    for task_id, channel, value in saved.pending_writes or ():
        if channel == "__interrupt__":
            for item in value if isinstance(value, (list, tuple)) else [value]:
                by_task.setdefault(task_id, []).append(interrupt_json(item))
    return ThreadSummary(dumps(values), by_task, [])
