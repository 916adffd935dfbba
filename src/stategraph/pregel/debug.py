"""Payloads of the ``tasks``, ``checkpoints``, ``debug`` and ``messages`` stream modes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stategraph.constants import CONF, ERROR, INTERRUPT
from stategraph.pregel.io import NO_UPDATE, read_output

if TYPE_CHECKING:
    from stategraph.pregel.loop import Loop
    from stategraph.pregel.main import Pregel
    from stategraph.pregel.run import RunContext
    from stategraph.pregel.task import Task

__all__ = ["task_start_payload", "task_result_payload", "checkpoint_payload", "emit_messages"]


def debug_event(kind: str, step: int, payload: dict[str, Any]) -> dict[str, Any]:
    """A ``debug`` stream event: step, timestamp, type and payload."""
    from datetime import datetime, timezone

    return {
        "step": step,
        "timestamp": datetime.now(timezone.utc).isoformat(),
        "type": kind,
        "payload": payload,
    }


def task_start_payload(task: Task, step: int) -> dict[str, Any]:
    """``tasks`` chunk announcing a task: id, name, input, triggers."""
    return {"id": task.id, "name": task.name, "input": task.input, "triggers": tuple(task.triggers)}


def task_result_payload(task: Task, graph: Pregel) -> dict[str, Any]:
    """``tasks`` chunk reporting a finished task: its result, error and interrupts."""
    update = graph.task_update(task)
    result: dict[str, Any]
    if update is NO_UPDATE or update is None:
        result = {}
    elif isinstance(update, dict):
        result = update
    elif isinstance(update, list):
        result = {}
        for item in update:
            result.update(item)
    else:
        keys = graph.stream_keys
        result = {keys if isinstance(keys, str) else "__root__": update}
    return {
        "id": task.id,
        "name": task.name,
        "error": None if task.error is None else repr(task.error),
        "result": result,
        "interrupts": [
            {"value": i.value, "id": i.id, "response_schema": i.response_schema}
            for i in task.interrupts
        ],
    }


def checkpoint_payload(
    loop: Loop, checkpoint: dict[str, Any], metadata: dict[str, Any]
) -> dict[str, Any]:
    """``checkpoints`` chunk: config, values, metadata, next tasks of a new checkpoint."""
    run = loop.run
    tasks = list(loop._prepare(for_execution=False).values())
    return {
        "config": {
            CONF: {
                "thread_id": run.thread_id,
                "checkpoint_ns": run.ns,
                "checkpoint_id": checkpoint["id"],
            }
        },
        "parent_config": loop.parent_config,
        "values": read_output(loop.channels, run.stream_keys),
        "metadata": metadata,
        "next": [t.name for t in tasks],
        "tasks": [{"id": t.id, "name": t.name, "interrupts": (), "state": None} for t in tasks],
    }


def _is_message(value: Any) -> bool:
    return hasattr(value, "content") and hasattr(value, "type") and hasattr(value, "id")


def emit_messages(run: RunContext, task: Task, step: int) -> None:
    """Emit, on the ``messages`` stream, every message object the task wrote.

    As in LangGraph, a message without an id gets one here, so the id streamed is the
    id the message keeps in the state.
    """
    if "nostream" in task.node.tags or task.node.metadata.get("__hidden__"):
        return
    meta: dict[str, Any] = {
        "langgraph_step": step,
        "langgraph_node": task.name,
        "langgraph_triggers": tuple(task.triggers),
        "langgraph_path": task.path,
        "langgraph_checkpoint_ns": task.ns,
    }
    if run.thread_id is not None:
        meta["thread_id"] = run.thread_id
    for chan, value in task.writes:
        if chan in (ERROR, INTERRUPT):
            continue
        items = value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if _is_message(item) and getattr(item, "type", "") != "remove":
                if item.id is None:
                    import uuid

                    try:
                        item.id = str(uuid.uuid4())
                    except AttributeError:
                        pass
                run.emit("messages", (item, dict(meta)))
