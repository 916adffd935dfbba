"""Editing saved state: ``update_state`` and ``bulk_update_state`` as generators of saver
effects (driven by :mod:`stategraph.pregel._pregel.state_read`'s drivers): an update
as a node's writes, ``as_node`` routing, forks (``__copy__``), input and end updates.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from stategraph._context import STATE_EDIT
from stategraph.constants import CONF, END, INPUT, INTERRUPT, NULL_TASK_ID, START, TASKS
from stategraph.errors import InvalidUpdateError
from stategraph.pregel import _effects as fx
from stategraph.pregel._pregel.state_read import (
    _UNFINISHED,
    AwaitRoute,
    _mapped,
    _state_config,
    _target,
    _view,
)
from stategraph.types import StateUpdate

if TYPE_CHECKING:
    from stategraph.pregel._loop.drive import Loop
    from stategraph.pregel._roles import PregelGraph


COPY = "__copy__"
"""``as_node`` value of ``update_state`` that forks a checkpoint as it is."""


def _update_gen(
    graph: PregelGraph,
    saver: Any,
    config: Mapping[str, Any],
    updates: Sequence[StateUpdate],
) -> Generator[Any, Any, dict[str, Any]]:
    """Apply one superstep of updates and save it; returns the new checkpoint's config.

    Besides node names, ``as_node`` takes three special values (as in LangGraph):
    ``"__input__"`` writes ``values`` as a new input, ``"__copy__"`` forks the
    checkpoint as it is (then applies ``values``, a list of updates, to the copy), and
    ``"__end__"`` with ``values=None`` ends the tasks that were still to run.
    """
    if not updates:
        raise InvalidUpdateError(
            "bulk_update_state(): a superstep has no updates. Give each superstep at "
            "least one StateUpdate(values, as_node)."
        )
    updates = [_as_update(u) for u in updates]
    graph, cfg = _target(graph, _state_config(config), required=True)
    conf = cfg[CONF]
    tup = yield fx.GetTuple(cfg)
    view = _view(graph, saver, cfg)
    view._restore(tup)
    yield from view._hydrate(tup)
    if tup is not None and conf["checkpoint_ns"]:
        # the new checkpoint of a subgraph hangs from the same parent checkpoints
        view.run.parent_ids = dict((tup.metadata or {}).get("parents") or {})
    step = -1 if tup is None else int(view.metadata.get("step", -1))
    first = updates[0]
    special = first.as_node
    if special in (INPUT, COPY) or (special == END and first.values is None):
        if len(updates) > 1:
            raise InvalidUpdateError(
                f"update_state(as_node={special!r}) must be the only update of its "
                f"superstep; this superstep has {len(updates)} updates."
            )
        if special == INPUT:
            return (yield from _input_update(graph, view, tup, first.values, step))
        if special == COPY:
            return (yield from _copy_update(graph, saver, view, tup, first.values, step))
        return (yield from _end_update(graph, view, tup, step))
    return (yield from _node_updates(graph, view, tup, updates, step))


def _as_update(update: Any) -> StateUpdate:
    if isinstance(update, StateUpdate):
        return update
    if isinstance(update, Sequence) and not isinstance(update, str) and 1 < len(update) < 4:
        return StateUpdate(*update)
    raise InvalidUpdateError(
        f"Invalid update {update!r}: each update is a StateUpdate(values, as_node) or a "
        "(values, as_node) pair."
    )


def _saved_config(view: Loop) -> dict[str, Any]:
    return cast("dict[str, Any]", _mapped(view.checkpoint_config, view.metadata))


def _uuid_for(view: Loop, name: str) -> str:
    """A task id derived from the checkpoint id (LangGraph's ``uuid5(id, name)``)."""
    from uuid import UUID, uuid5

    try:
        return str(uuid5(UUID(view.checkpoint_id), name))
    except ValueError:
        from stategraph.pregel._algo import make_task_id

        return make_task_id(view.checkpoint_id or "none", view.run.ns, name)


def _input_update(
    graph: PregelGraph, view: Loop, tup: Any, values: Any, step: int
) -> Generator[Any, Any, dict[str, Any]]:
    """``as_node="__input__"``: ``values`` become a new input checkpoint of the thread."""
    from stategraph.pregel._io import map_input

    writes = map_input(graph, values)
    if not writes:
        raise InvalidUpdateError(
            f"update_state(as_node='__input__'): {values!r} writes none of the input "
            f"channels {graph.input_channels!r}."
        )
    view._apply_input(writes)
    view.seal_unwritten_deltas()
    input_id = _uuid_for(view, INPUT)
    yield from view._save("input", step + 1 if tup is not None else -1)
    yield fx.PutWrites(view.checkpoint_config, writes, input_id, "", True)
    return _saved_config(view)


def _copy_update(
    graph: PregelGraph, saver: Any, view: Loop, tup: Any, values: Any, step: int
) -> Generator[Any, Any, dict[str, Any]]:
    """``as_node="__copy__"``: fork the checkpoint as a sibling (``source="fork"``).

    ``values``, when a list of updates, is then applied to the copy as one superstep;
    updates for a node that had a task pending reuse that task's id, so the snapshot
    shows the update as the task's result.
    """
    if tup is None:
        raise InvalidUpdateError(
            "update_state(as_node='__copy__'): there is no checkpoint to copy in this "
            "thread. Pass the config of an existing checkpoint."
        )
    parent = tup.parent_config
    if parent is not None:
        view.checkpoint_config = {CONF: {**view._base_configurable(), **parent[CONF]}}
    else:
        view.checkpoint_config = {CONF: view._base_configurable()}
    view.saved_versions = dict(view.checkpoint["channel_versions"])
    yield from view._save("fork", step + 1)
    forked = _saved_config(view)
    if not values:
        return forked
    if not isinstance(values, (list, tuple)):
        raise InvalidUpdateError(
            "update_state(as_node='__copy__'): values must be a list of StateUpdate to "
            f"apply to the copy (or None), got {type(values).__name__}."
        )
    items = [_as_update(v) for v in values]
    view.step = step + 2
    pending: dict[str, list[str]] = {}
    for tid, task in view._prepare(for_execution=False).items():
        pending.setdefault(task.name, []).append(tid)
    by_node: dict[Any, list[StateUpdate]] = {}
    for item in items:
        group = by_node.setdefault(item.as_node, [])
        ids = pending.get(item.as_node or "", [])
        task_id = item.task_id or (ids[len(group)] if len(group) < len(ids) else None)
        group.append(StateUpdate(item.values, item.as_node, task_id))
    regrouped = [u for group in by_node.values() for u in group]
    return (yield from _update_gen(graph, saver, forked, regrouped))


def _end_update(
    graph: PregelGraph, view: Loop, tup: Any, step: int
) -> Generator[Any, Any, dict[str, Any]]:
    """``as_node="__end__"`` with no values: end the pending tasks, so nothing is next.

    Writes of tasks that already finished (and writes made outside any task) are
    applied; the others end as if they had run without writing anything.
    """
    from stategraph.pregel._algo import apply_writes
    from stategraph.pregel._loop.drive import WriteBatch

    if tup is not None:
        view.step = step + 1
        tasks = view._prepare(for_execution=False)
        null_writes = []
        for tid, chan, val in view.pending_writes:
            if chan in _UNFINISHED or chan == "__no_writes__":
                continue
            if tid == NULL_TASK_ID:
                null_writes.append((chan, val))
            elif tid in tasks:
                tasks[tid].writes.append((chan, val))
        if null_writes:
            apply_writes(
                view.checkpoint,
                view.channels,
                [WriteBatch(null_writes)],
                view.get_next_version,
                graph.trigger_to_nodes,
            )
        view.updated = apply_writes(
            view.checkpoint,
            view.channels,
            list(tasks.values()),
            view.get_next_version,
            graph.trigger_to_nodes,
        )
    yield from view._save("update", step + 1)
    return _saved_config(view)


def _node_updates(
    graph: PregelGraph, view: Loop, tup: Any, updates: Sequence[StateUpdate], step: int
) -> Generator[Any, Any, dict[str, Any]]:
    """Updates as if the named nodes returned them, applied together as one step."""
    from stategraph.pregel._algo import apply_writes
    from stategraph.pregel._task import Task

    # an update for a node with a task pending takes that task's id: the writes are
    # saved against the checkpoint as the task's, so its snapshot shows them as the
    # task's result
    pending: dict[str, list[str]] = {}
    if tup is not None:
        view.step = step + 1
        for tid, t in view._prepare(for_execution=False).items():
            pending.setdefault(t.name, []).append(tid)
    if len(updates) == 1:
        named = [(updates[0].as_node or _last_writer(graph, view), updates[0])]
    else:
        named = []
        for u in updates:
            if u.as_node is None:
                raise InvalidUpdateError(
                    "bulk_update_state(): every update of a superstep with several "
                    "updates needs as_node=..., naming the node it is from."
                )
            named.append((u.as_node, u))
    for as_node, _ in named:
        if as_node not in graph.nodes:
            raise InvalidUpdateError(
                f"update_state(as_node={as_node!r}): no such node. Nodes: "
                f"{', '.join(n for n in graph.nodes)}."
            )
    channels = view.channels
    tasks: list[Task] = []
    for i, (as_node, update) in enumerate(named):
        node = graph.nodes[as_node]
        ids = pending.get(as_node)
        tid = update.task_id or (ids.pop(0) if ids else _uuid_for(view, INTERRUPT))
        task = Task(
            id=tid,
            name=as_node,
            path=("__update__", i, as_node),
            node=node,
            input=None,
            triggers=list(node.triggers),
            ns=f"{as_node}:{tid}",
            scratchpad=None,
            retry_policy=(),
            channels=channels,
        )
        edit = f"update_state(as_node={as_node!r})"
        for writer in node.writers:
            token = STATE_EDIT.set(edit)
            try:
                result = writer(task, update.values)
            finally:
                STATE_EDIT.reset(token)
            if result is not None and hasattr(result, "__await__"):
                # an async routing function: the async API awaits it, the sync one
                # cannot (see _drive)
                yield AwaitRoute(result, as_node)
        check = getattr(graph, "check_state_edit", None)
        if check is not None:
            check(task.writes, channels, edit)
        tasks.append(task)
    if tup is not None:
        # only on the thread's head: an older checkpoint keeps the writes it was saved
        # with (a later resume or clear of it would take an edit of a branch that
        # moved on for its pending task's result); the new checkpoint stores the
        # changed delta channels whole either way
        head = yield fx.GetTuple({CONF: view._base_configurable()})
        if head is not None and head.checkpoint["id"] == tup.checkpoint["id"]:
            for task in tasks:
                writes = [(c, v) for c, v in task.writes if c != TASKS]
                if writes:
                    yield fx.PutWrites(view.checkpoint_config, writes, task.id, "", True)
    # all updates of one superstep apply together, as the writes of one step would. As
    # in LangGraph, an update does not count as the node having run (its triggers are
    # not marked seen); the new step clears per-step triggers such as pending edges.
    for task in tasks:
        task.triggers = [INTERRUPT]
    view.updated = apply_writes(
        view.checkpoint, view.channels, tasks, view.get_next_version, graph.trigger_to_nodes
    )
    yield from view._save("update", step + 1)
    return _saved_config(view)


def _last_writer(graph: PregelGraph, view: Loop) -> str:
    if len(graph.nodes) == 1:
        return next(iter(graph.nodes))
    seen = view.checkpoint["versions_seen"]
    best: list[str] = []
    best_v: Any = None
    for name in graph.nodes:
        vs = seen.get(name)
        if not vs:
            continue
        v = max(vs.values())
        if best_v is None or v > best_v:
            best, best_v = [name], v
        elif v == best_v:
            best.append(name)
    if not best:
        if START in graph.nodes:
            return START
        raise InvalidUpdateError(
            "update_state() could not tell which node the update is from: pass as_node=..."
        )
    if len(best) > 1:
        raise InvalidUpdateError(
            f"update_state() is ambiguous: nodes {best!r} ran last. Pass as_node=... to say "
            "which node the update is from."
        )
    return best[0]


def _check_supersteps(supersteps: Sequence[Sequence[StateUpdate]]) -> None:
    """Reject an empty bulk update before anything is saved."""
    if not supersteps:
        raise ValueError(
            "No supersteps provided: bulk_update_state() needs a list of supersteps, each "
            "a list of StateUpdate(values, as_node)."
        )
    empty = [i for i, updates in enumerate(supersteps) if not updates]
    if empty:
        raise ValueError(
            f"No updates provided in superstep(s) {empty}: each superstep of "
            "bulk_update_state() needs at least one StateUpdate(values, as_node)."
        )
