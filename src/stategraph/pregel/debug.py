"""The ``tasks``, ``checkpoints`` and ``debug`` payloads that read the loop's state.

A finished task's result (seen through the graph's output keys) and a new
checkpoint's payload (values, next tasks, their pending writes) are the runtime's to
compute; the rest of the shaping, and every name a caller imports from here, is in
:mod:`stategraph.observe._debug`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from stategraph.checkpoint.lease import LEASE_TOKEN_KEY
from stategraph.constants import CONF, ERROR, INTERRUPT
from stategraph.observe._debug import (
    checkpoint_config,
    debug_event,
    map_debug_tasks,
    subgraph_task_state,
    task_metadata,
    task_start_payload,
)
from stategraph.pregel._io import NO_UPDATE, read_output

if TYPE_CHECKING:
    from stategraph.channels.base import BaseChannel
    from stategraph.pregel._roles import PregelGraph
    from stategraph.pregel._run import RunContext
    from stategraph.pregel._task import Task

__all__ = [
    "map_debug_tasks",
    "task_metadata",
    "task_start_payload",
    "task_result_payload",
    "checkpoint_payload",
    "checkpoint_config",
    "subgraph_task_state",
    "debug_event",
]


class _CheckpointLoop(Protocol):
    """What a checkpoint's payload reads of the run's
    :class:`~stategraph.pregel._loop.drive.Loop` (the loop calls this module, so it is
    not imported here)."""

    run: RunContext
    graph: PregelGraph
    channels: dict[str, BaseChannel]
    pending_writes: list[tuple[str, str, Any]]
    parent_config: dict[str, Any] | None
    save_loop: bool
    dirty: bool
    _exit_parent: dict[str, Any] | None

    def _prepare(self, for_execution: bool) -> dict[str, Task]:
        """The tasks of the next step (prepared to run when ``for_execution``)."""
        ...


def task_result_payload(task: Task, graph: PregelGraph) -> dict[str, Any]:
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
    elif isinstance(keys, str):
        # a single output channel (an entrypoint's return value): shown under its name,
        # whatever the value is (a dict or a list is not taken apart)
        result = {keys: update}
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


def checkpoint_payload(
    loop: _CheckpointLoop, checkpoint: dict[str, Any], metadata: dict[str, Any]
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
        "config": _with_run_configurable(run, checkpoint_config(run, checkpoint["id"])),
        "parent_config": (
            _with_run_configurable(run, checkpoint_config(run, parent_id)) if parent_id else None
        ),
        "values": read_output(loop.channels, loop.graph.stream_keys),
        "metadata": metadata,
        "next": [t.name for t in tasks],
        "tasks": [_pending_task(loop, t) for t in tasks],
    }


def _with_run_configurable(run: Any, config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with the run's own ``configurable`` values under the checkpoint's
    place keys, as LangGraph's payloads show them (the stategraph lease token, which is
    not the user's, left out)."""
    given = run.configurable
    if not given:
        return config
    extra = {k: v for k, v in given.items() if k != LEASE_TOKEN_KEY}
    return {CONF: {**extra, **config[CONF]}}


def _pending_task(loop: _CheckpointLoop, task: Task) -> dict[str, Any]:
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
