"""Payloads of the ``tasks``, ``checkpoints`` and ``debug`` stream modes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stategraph.constants import CONF, ERROR, INTERRUPT, TAG_HIDDEN
from stategraph.pregel.io import NO_UPDATE, read_output

if TYPE_CHECKING:
    from stategraph.pregel.loop import Loop
    from stategraph.pregel.main import Pregel
    from stategraph.pregel.run import RunContext
    from stategraph.pregel.task import Task

__all__ = [
    "map_debug_tasks",
    "task_metadata",
    "task_start_payload",
    "task_result_payload",
    "checkpoint_payload",
    "checkpoint_config",
    "subgraph_task_state",
]

# Metadata keys the runtime sets on every task: they repeat the task's own fields and
# namespace, so task payloads leave them out.
_FRAMEWORK_METADATA = frozenset(
    {
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "checkpoint_map",
        "langgraph_step",
        "langgraph_node",
        "langgraph_path",
        "langgraph_triggers",
        "langgraph_checkpoint_ns",
    }
)
# Tags LangChain adds to mark the position of a runnable in a sequence.
_SEQUENCE_TAG = "seq:step"


def task_metadata(
    metadata: Mapping[str, Any] | None, tags: Sequence[Any] | None
) -> dict[str, Any] | None:
    """The metadata a task payload carries: the user's keys plus the run's tags.

    Keys the runtime itself sets (thread id, namespace, step, node, path, triggers) are
    dropped; the tags, without LangChain's ``seq:step:*`` markers, go under ``"tags"``.
    Returns ``None`` when nothing is left.
    """
    out = {k: v for k, v in (metadata or {}).items() if k not in _FRAMEWORK_METADATA}
    kept = [t for t in tags or () if not (isinstance(t, str) and t.startswith(_SEQUENCE_TAG))]
    if kept:
        out["tags"] = kept
    return out or None


def map_debug_tasks(tasks: Iterable[Any]) -> Iterator[dict[str, Any]]:
    """The ``tasks``/``debug`` payloads announcing ``tasks`` (objects with ``id``,
    ``name``, ``input``, ``triggers`` and ``config``).

    Each payload holds the task's id, name, input and triggers, and its metadata (see
    :func:`task_metadata`) when there is any. Tasks tagged ``langsmith:hidden`` are
    skipped.
    """
    for task in tasks:
        config = getattr(task, "config", None) or {}
        tags = config.get("tags")
        if tags and TAG_HIDDEN in tags:
            continue
        payload: dict[str, Any] = {
            "id": task.id,
            "name": task.name,
            "input": task.input,
            "triggers": task.triggers,
        }
        metadata = task_metadata(config.get("metadata"), tags)
        if metadata:
            payload["metadata"] = metadata
        yield payload


def debug_event(kind: str, step: int, payload: dict[str, Any]) -> dict[str, Any]:
    """A ``debug`` stream event: step, timestamp, type and payload."""
    from stategraph import _clock

    return {
        "step": step,
        "timestamp": _clock.utc_now().isoformat(),
        "type": kind,
        "payload": payload,
    }


def task_start_payload(
    task: Task, step: int, run: RunContext | None = None
) -> dict[str, Any] | None:
    """``tasks`` chunk announcing a task: id, name, input, triggers (and metadata).

    The metadata joins the run's and the node's metadata and tags, as a node's config
    would; ``None`` for a task whose node is tagged ``langsmith:hidden``.
    """
    node = task.node
    if TAG_HIDDEN in node.tags:
        return None
    payload: dict[str, Any] = {
        "id": task.id,
        "name": task.name,
        "input": task.input,
        "triggers": tuple(task.triggers),
    }
    if run is not None and (run.metadata or run.tags or node.tags or node.metadata):
        node_meta = {k: v for k, v in node.metadata.items() if not k.startswith("__")}
        metadata = task_metadata({**run.metadata, **node_meta}, [*run.tags, *node.tags])
        if metadata:
            payload["metadata"] = metadata
    return payload


def task_result_payload(task: Task, graph: Pregel) -> dict[str, Any]:
    """``tasks`` chunk reporting a finished task: its result, error and interrupts."""
    update = graph.task_update(task)
    result: dict[str, Any]
    keys = graph.stream_keys
    if (
        update is NO_UPDATE
        or (update is None and not isinstance(keys, str))
        or (isinstance(keys, str) and all(chan != keys for chan, _ in task.writes))
    ):
        # nothing written to the output (an interrupted entrypoint wrote no return value)
        result = {}
    elif isinstance(update, dict):
        result = update
    elif isinstance(update, list):
        result = {}
        for item in update:
            result.update(item)
    else:
        result = {keys if isinstance(keys, str) else "__root__": update}
    if result:
        repeated = _repeated_writes(task.writes)
        if repeated:
            # as in LangGraph: a key written several times by one task shows every value
            result = {
                k: ({"$writes": repeated[k]} if k in repeated else v) for k, v in result.items()
            }
    return {
        "id": task.id,
        "name": task.name,
        "error": task.error,
        "result": result,
        "interrupts": [
            {"value": i.value, "id": i.id, "response_schema": i.response_schema}
            for i in task.interrupts
        ],
    }


def _repeated_writes(writes: list[tuple[str, Any]]) -> dict[str, list[Any]]:
    """Channels a task wrote more than once, with all the values in order."""
    by_channel: dict[str, list[Any]] = {}
    for chan, value in writes:
        by_channel.setdefault(chan, []).append(value)
    return {k: v for k, v in by_channel.items() if len(v) > 1 and not k.startswith("__")}


def checkpoint_config(run: RunContext, checkpoint_id: str) -> dict[str, Any]:
    """The config naming checkpoint ``checkpoint_id`` of ``run``'s namespace.

    A subgraph's config also maps each enclosing namespace to the checkpoint it ran
    from (``checkpoint_map``), so the config can replay the whole stack.
    """
    conf: dict[str, Any] = {
        "thread_id": run.thread_id,
        "checkpoint_ns": run.ns,
        "checkpoint_id": checkpoint_id,
    }
    if run.ns:
        conf["checkpoint_map"] = {**run.parent_ids, run.ns: checkpoint_id}
    return {CONF: conf}


def subgraph_task_state(task: Any, thread_id: Any) -> dict[str, Any] | None:
    """``PregelTask.state`` of a task that runs a subgraph: the config of its namespace.

    ``None`` when the node runs no subgraph, or one compiled with ``checkpointer=False``
    (it keeps no state to point at).
    """
    subgraphs = task.node.subgraphs
    if not subgraphs or subgraphs[0].checkpointer is False:
        return None
    return {CONF: {"thread_id": thread_id, "checkpoint_ns": task.ns}}


def checkpoint_payload(
    loop: Loop, checkpoint: dict[str, Any], metadata: dict[str, Any]
) -> dict[str, Any]:
    """``checkpoints`` chunk: config, values, metadata, next tasks of a new checkpoint.

    With ``durability="exit"`` the parent is the checkpoint the saved one will hang
    from (none for a new thread), as the saved history will show.
    """
    run = loop.run
    tasks = list(loop._prepare(for_execution=False).values())
    if loop.save_loop or not loop.dirty:
        parent = loop.parent_config
    else:
        parent = loop._exit_parent
    parent_id = ((parent or {}).get(CONF) or {}).get("checkpoint_id")
    return {
        "config": checkpoint_config(run, checkpoint["id"]),
        "parent_config": checkpoint_config(run, parent_id) if parent_id else None,
        "values": read_output(loop.channels, loop.graph.stream_keys),
        "metadata": metadata,
        "next": [t.name for t in tasks],
        "tasks": [_pending_task(loop, t) for t in tasks],
    }


def _pending_task(loop: Loop, task: Task) -> dict[str, Any]:
    """One task of a checkpoint payload, with what its saved writes say: its error,
    or its pending interrupts and (if it already finished) its result."""
    writes = [(chan, value) for tid, chan, value in loop.pending_writes if tid == task.id]
    state = subgraph_task_state(task, loop.run.thread_id)
    error = next((value for chan, value in writes if chan == ERROR), None)
    if error is not None:
        return {"id": task.id, "name": task.name, "error": error, "state": state}
    interrupts = tuple(
        {"value": i.value, "id": i.id, "response_schema": i.response_schema}
        for chan, value in writes
        if chan == INTERRUPT
        for i in value
    )
    out: dict[str, Any] = {"id": task.id, "name": task.name, "interrupts": interrupts}
    keys = loop.graph.stream_keys
    if isinstance(keys, str):
        result = {chan: value for chan, value in writes if chan == keys}
    else:
        shown = set(keys)
        result = {chan: value for chan, value in writes if chan in shown}
    if result:
        out["result"] = result
    out["state"] = state
    return out
