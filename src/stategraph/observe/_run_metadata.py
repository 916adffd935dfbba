"""The ``metadata`` LangGraph gives a task's config and a ``@task`` call's, and the
namespace of such a call.

Apart from the observer protocol (:mod:`stategraph.observe._protocol`) because every
task attempt builds its config with them, and a run nobody observes need not load it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stategraph.observe._protocol import RunRecord, TaskRecord

__all__ = ["task_run_metadata", "call_run_metadata", "call_namespace"]


def task_run_metadata(run: RunRecord, task: TaskRecord, step: int) -> dict[str, Any]:
    """The ``metadata`` of a task's config: the run's, the node's, and LangGraph's keys.

    (``thread_id`` when the run has a thread, ``langgraph_step``/``_node``/
    ``_triggers``/``_path``/``_checkpoint_ns``, and ``checkpoint_ns`` inside a
    subgraph.)
    """
    node_meta = {k: v for k, v in task.node.metadata.items() if not k.startswith("__")}
    metadata = {**run.metadata, **node_meta}
    if run.thread_id is not None:
        metadata["thread_id"] = run.thread_id
    metadata["langgraph_step"] = step
    metadata["langgraph_node"] = task.name
    metadata["langgraph_triggers"] = tuple(task.triggers)
    metadata["langgraph_path"] = task.path
    metadata["langgraph_checkpoint_ns"] = task.ns
    if run.ns:
        metadata["checkpoint_ns"] = run.ns
    return metadata


def call_run_metadata(
    parent_metadata: Mapping[str, Any], task: TaskRecord, call_id: str, name: str
) -> dict[str, Any]:
    """The ``metadata`` of a ``@task`` call made by ``task``: its caller's, with the
    call's own ``langgraph_*`` keys (a pushed task, as LangGraph attributes it)."""
    from stategraph.constants import PUSH

    index = call_id.rsplit(":", 2)[-2]
    metadata = dict(parent_metadata)
    metadata["langgraph_node"] = name
    metadata["langgraph_triggers"] = (PUSH,)
    metadata["langgraph_path"] = (PUSH, task.path, int(index) if index.isdigit() else 0, True)
    metadata["langgraph_checkpoint_ns"] = call_namespace(task.ns, call_id, name)
    return metadata


def call_namespace(task_ns: str, call_id: str, name: str) -> str:
    """The checkpoint namespace LangGraph gives the ``@task`` call ``call_id``."""
    from stategraph._task_ids import make_task_id

    own = f"{name}:{make_task_id(call_id)}"
    return f"{task_ns}|{own}" if task_ns else own
