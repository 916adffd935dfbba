"""LangGraph Server's JSON shapes: thread states, threads, assistants."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stategraph.cli._checkpoints import pending_interrupts, pending_nodes, state_values
from stategraph.studio._jsonio import jsonable

__all__ = ["checkpoint_json", "snapshot_json", "tuple_state_json", "thread_json"]


def checkpoint_json(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``{thread_id, checkpoint_ns, checkpoint_id, checkpoint_map}`` of a config."""
    if not config:
        return None
    conf = config.get("configurable") or {}
    if not conf.get("checkpoint_id"):
        return None
    return {
        "thread_id": conf.get("thread_id"),
        "checkpoint_ns": conf.get("checkpoint_ns", ""),
        "checkpoint_id": conf["checkpoint_id"],
        "checkpoint_map": conf.get("checkpoint_map") or {},
    }


def _task_json(task: Any) -> dict[str, Any]:
    child = task.state
    out: dict[str, Any] = {
        "id": task.id,
        "name": task.name,
        "error": None if task.error is None else str(task.error),
        "interrupts": [jsonable(i) for i in task.interrupts],
        "checkpoint": None,
        "state": None,
        "result": jsonable(task.result),
    }
    if hasattr(child, "values") and hasattr(child, "tasks"):
        out["state"] = snapshot_json(child)
    elif isinstance(child, Mapping):
        out["checkpoint"] = (child.get("configurable") or None) and dict(child["configurable"])
    return out


def snapshot_json(snap: Any) -> dict[str, Any]:
    """A ``StateSnapshot`` as LangGraph Server's ThreadState."""
    tasks = [_task_json(t) for t in snap.tasks]
    return {
        "values": jsonable(snap.values),
        "next": list(snap.next),
        "tasks": tasks,
        "metadata": jsonable(snap.metadata),
        "created_at": snap.created_at,
        "checkpoint": checkpoint_json(snap.config),
        "parent_checkpoint": checkpoint_json(snap.parent_config),
        "interrupts": [i for t in tasks for i in t["interrupts"]],
    }


def tuple_state_json(tup: Any) -> dict[str, Any]:
    """A saved ``CheckpointTuple`` as a ThreadState, read without the graph."""
    interrupts: list[dict[str, Any]] = pending_interrupts(tup.pending_writes)
    by_task: dict[str, list[dict[str, Any]]] = {}
    for item in interrupts:
        by_task.setdefault(item["task_id"], []).append(
            {"value": jsonable(item["value"]), "id": item["id"]}
        )
    errors = {t: v for t, ch, v in tup.pending_writes or () if ch == "__error__"}
    tasks = [
        {
            "id": task_id,
            "name": "",
            "error": None if task_id not in errors else str(errors[task_id]),
            "interrupts": by_task.get(task_id, []),
            "checkpoint": None,
            "state": None,
            "result": None,
        }
        for task_id in [*by_task, *(t for t in errors if t not in by_task)]
    ]
    return {
        "values": jsonable(state_values(tup.checkpoint)),
        "next": pending_nodes(tup.checkpoint),
        "tasks": tasks,
        "metadata": jsonable(tup.metadata),
        "created_at": tup.checkpoint.get("ts"),
        "checkpoint": checkpoint_json(tup.config),
        "parent_checkpoint": checkpoint_json(tup.parent_config),
        "interrupts": [i for items in by_task.values() for i in items],
    }


def thread_json(thread_id: str, state: Mapping[str, Any] | None) -> dict[str, Any]:
    """LangGraph Server's Thread: id, times, metadata, status, values, interrupts."""
    if state is None:
        return {
            "thread_id": thread_id,
            "created_at": None,
            "updated_at": None,
            "metadata": {},
            "status": "idle",
            "values": None,
            "interrupts": {},
        }
    interrupts = {t["id"]: t["interrupts"] for t in state["tasks"] if t["interrupts"]}
    errored = any(t.get("error") for t in state["tasks"])
    status = "interrupted" if interrupts else "error" if errored else "idle"
    meta = {
        k: v
        for k, v in (state.get("metadata") or {}).items()
        if k not in ("step", "source", "parents", "writes")
    }
    return {
        "thread_id": thread_id,
        "created_at": state["created_at"],
        "updated_at": state["created_at"],
        "metadata": meta,
        "status": status,
        "values": state["values"],
        "interrupts": interrupts,
    }
