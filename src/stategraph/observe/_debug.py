"""Payloads of the ``tasks``, ``checkpoints`` and ``debug`` stream modes, shaped from
the records of a run (task announcements, debug events, checkpoint configs).

The payloads that read the loop's own state (a task's result as the graph's output
schema sees it, a checkpoint's pending tasks) are built by the runtime in
:mod:`stategraph.pregel.debug` with these helpers."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stategraph.checkpoint.base import EXCLUDED_METADATA_KEYS
from stategraph.constants import CONF, TAG_HIDDEN

if TYPE_CHECKING:
    from stategraph.observe._protocol import RunRecord as RunContext
    from stategraph.observe._protocol import TaskRecord as Task

__all__ = [
    "map_debug_tasks",
    "task_metadata",
    "task_start_payload",
    "debug_event",
    "checkpoint_config",
    "subgraph_task_state",
]

# Metadata keys the runtime sets on every task (the config keys savers never copy into
# checkpoint metadata): they repeat the task's own fields and namespace, so task
# payloads leave them out.
_FRAMEWORK_METADATA = EXCLUDED_METADATA_KEYS
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


def checkpoint_config(run: RunContext, checkpoint_id: str) -> dict[str, Any]:
    """The config naming checkpoint ``checkpoint_id`` of ``run``'s namespace.

    A subgraph's config also maps each enclosing namespace to the checkpoint it ran
    from (``checkpoint_map``), so the config can replay the whole stack.
    """
    thread = run.thread_id
    conf: dict[str, Any] = {
        "thread_id": thread if thread is None or isinstance(thread, str) else str(thread),
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
