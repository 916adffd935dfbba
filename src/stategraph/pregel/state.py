"""Reading and editing saved state: ``get_state``, history, ``update_state``.

The logic is written once as generators that yield saver effects (the same effect
tuples the run loop uses); :func:`_drive` and :func:`_adrive` perform them with the
saver's sync or async methods.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from stategraph._context import STATE_EDIT
from stategraph.constants import (
    CONF,
    END,
    ERROR,
    ERROR_SOURCE,
    INPUT,
    INTERRUPT,
    NULL_TASK_ID,
    START,
    TASKS,
)
from stategraph.errors import InvalidUpdateError
from stategraph.pregel import effects as fx
from stategraph.pregel.debug import subgraph_task_state
from stategraph.pregel.lease_guard import fenced
from stategraph.pregel.state_lease import aupdate_lease, update_lease
from stategraph.runtime import DEFAULT_RUNTIME
from stategraph.types import PregelTask, StateSnapshot, StateUpdate

if TYPE_CHECKING:
    from stategraph.pregel.loop import Loop
    from stategraph.pregel.main import Pregel

__all__ = ["StateMixin"]

_AWAIT = "await"
"""Effect of the update generators: ``(_AWAIT, awaitable, node)``, an async routing
function's result that only the async driver can await."""

COPY = "__copy__"
"""``as_node`` value of ``update_state`` that forks a checkpoint as it is."""

_NOT_RESULT = frozenset(
    {
        ERROR,
        ERROR_SOURCE,
        INTERRUPT,
        "__resume__",
        "__resume_asked__",
        "__no_writes__",
        "__call_result__",
        "__call_resume__",
    }
)
_UNFINISHED = frozenset(
    {
        ERROR,
        ERROR_SOURCE,
        INTERRUPT,
        "__resume__",
        "__resume_asked__",
        "__call_result__",
        "__call_resume__",
    }
)


def _task_result(graph: Pregel, writes: list[tuple[str, Any]]) -> dict[str, Any] | None:
    """What a finished task wrote to the state (shown as ``PregelTask.result``)."""
    keys = graph.stream_keys
    if isinstance(keys, str):
        # a single output value (a bare-value state): the value itself
        values = [v for c, v in writes if c == keys]
        if not values:
            return None
        return values[0] if len(values) == 1 else {"$writes": values}
    keyset = set(keys)
    out: dict[str, Any] = {}
    repeated: dict[str, list[Any]] = {}
    for c, v in writes:
        if c in keyset:
            if c in out:
                # written several times by the task: every value, as in LangGraph
                repeated.setdefault(c, [out[c]]).append(v)
            out[c] = v
    for c, values in repeated.items():
        out[c] = {"$writes": values}
    return out or None


def _fence(config: dict[str, Any], token: int | None) -> dict[str, Any]:
    """A write's config with the update's fencing token (when the saver fences)."""
    return config if token is None else fenced(config, token)


def _drive(gen: Generator[Any, Any, Any], saver: Any, token: int | None = None) -> Any:
    value: Any = None
    try:
        while True:
            eff = gen.send(value)
            tag = eff[0]
            if tag == fx.GET_TUPLE:
                value = saver.get_tuple(eff[1])
            elif tag == fx.DELTA_HISTORY:
                value = saver.get_delta_channel_history(config=eff[1], channels=eff[2])
            elif tag == fx.GET_BEFORE:
                value = fx.get_before(saver, eff)
            elif tag == fx.PUT:
                value = saver.put(_fence(eff[1], token), *eff[2:5])
            elif tag == fx.PUT_WRITES:
                value = saver.put_writes(_fence(eff[1], token), *eff[2:5])
            elif tag == _AWAIT:
                eff[1].close()
                raise TypeError(
                    f"Node '{eff[2]}' has an async routing function: update its state with "
                    "aupdate_state()/abulk_update_state() (or make the routing function "
                    "synchronous)."
                )
            else:
                value = None
    except StopIteration as stop:
        return stop.value


async def _adrive(gen: Generator[Any, Any, Any], saver: Any, token: int | None = None) -> Any:
    value: Any = None
    try:
        while True:
            eff = gen.send(value)
            tag = eff[0]
            if tag == fx.GET_TUPLE:
                value = await saver.aget_tuple(eff[1])
            elif tag == fx.DELTA_HISTORY:
                value = await saver.aget_delta_channel_history(config=eff[1], channels=eff[2])
            elif tag == fx.GET_BEFORE:
                value = await fx.aget_before(saver, eff)
            elif tag == fx.PUT:
                value = await saver.aput(_fence(eff[1], token), *eff[2:5])
            elif tag == fx.PUT_WRITES:
                value = await saver.aput_writes(_fence(eff[1], token), *eff[2:5])
            elif tag == _AWAIT:
                value = await eff[1]
            else:
                value = None
    except StopIteration as stop:
        return stop.value


def _graph(obj: Any) -> Pregel:
    return cast("Pregel", obj)


def _require_saver(graph: Pregel, config: Mapping[str, Any]) -> Any:
    from stategraph.pregel._pregel.config import lift_config_keys

    config = lift_config_keys(config)
    saver = graph.checkpointer
    if saver in (None, True, False):
        from stategraph._context import CURRENT_TASK

        ctx = CURRENT_TASK.get()
        if ctx is not None and isinstance(ctx.run, tuple):
            saver = ctx.run[0].checkpointer
        elif saver is True:
            from stategraph.pregel._pregel.config import _ROOT_CHECKPOINTER_TRUE

            raise RuntimeError(_ROOT_CHECKPOINTER_TRUE)
    if saver in (None, True, False):
        raise ValueError(
            "No checkpointer set: get_state/update_state need a graph compiled with a "
            "checkpointer, e.g. builder.compile(checkpointer=InMemorySaver())."
        )
    if not (config.get(CONF) or {}).get("thread_id"):
        raise ValueError(
            'State access needs a thread id: pass {"configurable": {"thread_id": ...}} '
            "(missing key: 'configurable.thread_id')."
        )
    return saver


def _state_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with a ``checkpoint_ns`` (root by default) and no ``checkpoint_map``."""
    from stategraph.pregel._pregel.config import lift_config_keys

    config = lift_config_keys(config)
    conf = dict(config.get(CONF) or {})
    conf.setdefault("checkpoint_ns", "")
    conf.pop("checkpoint_map", None)
    return {**config, CONF: conf}


def _graph_at(graph: Pregel, ns: str, *, required: bool) -> Pregel:
    """The graph whose state lives at namespace ``ns`` (``graph`` itself at the root).

    A namespace run by a graph called inside a node that the parent does not declare
    is read with the parent's own channels; updating it raises, because the parent
    cannot tell which nodes and channels the update is for.
    """
    if not ns:
        return graph
    from stategraph.pregel.run import strip_task_ids

    bare = strip_task_ids(ns)
    for _, sub in graph.get_subgraphs(namespace=bare, recurse=True):
        return sub
    if required:
        raise ValueError(
            f"Subgraph {bare} not found: no node of this graph runs a declared subgraph at "
            f"namespace '{bare}', so the update cannot be applied with the right nodes and "
            "channels. Add the subgraph as a node (or call it from the node so that it is "
            "detected), or update it through the compiled subgraph itself."
        )
    return graph


def _target(graph: Pregel, cfg: dict[str, Any], *, required: bool) -> tuple[Pregel, dict[str, Any]]:
    """The graph at ``cfg``'s namespace and the config to read its state with.

    A subgraph compiled with ``checkpointer=True`` keeps one state per thread, saved
    under its namespace without task ids: a task's config (``"child:<task id>"``)
    is read there, as in LangGraph.
    """
    ns = cfg[CONF]["checkpoint_ns"]
    target = _graph_at(graph, ns, required=required)
    if ns and target is not graph and target.checkpointer is True:
        from stategraph.pregel.run import strip_task_ids

        bare = strip_task_ids(ns)
        if bare != ns:
            cfg = {**cfg, CONF: {**cfg[CONF], "checkpoint_ns": bare}}
    return target, cfg


def _mapped(config: Mapping[str, Any] | None, metadata: Any) -> Any:
    """A subgraph checkpoint's config with its ``checkpoint_map``.

    The map names the checkpoint of each enclosing namespace the subgraph ran from
    (its metadata's ``parents``) and its own, so the config can replay the whole stack.
    """
    if not config:
        return config
    conf = config.get(CONF) or {}
    ns = conf.get("checkpoint_ns")
    if not ns or not conf.get("checkpoint_id"):
        return config
    parents = dict((metadata or {}).get("parents") or {})
    return {**config, CONF: {**conf, "checkpoint_map": {**parents, ns: conf["checkpoint_id"]}}}


def _view(graph: Pregel, saver: Any, config: Mapping[str, Any]) -> Loop:
    from stategraph.pregel._pregel.config import DEFAULT_RECURSION_LIMIT
    from stategraph.pregel.loop import Loop
    from stategraph.pregel.run import RunContext
    from stategraph.pregel.task import ResumeState

    conf = dict(config.get(CONF) or {})
    run = RunContext(
        graph=graph,
        config={**config, CONF: conf},
        checkpointer=saver,
        store=graph.store,
        cache=None,
        runtime=DEFAULT_RUNTIME,
        modes=frozenset(),
        subgraphs=False,
        sink=None,
        durability="sync",
        resume_state=ResumeState(),
        resuming=False,
        interrupt_before=(),
        interrupt_after=(),
        recursion_limit=DEFAULT_RECURSION_LIMIT,
        ns=conf.get("checkpoint_ns", "") or "",
        output_keys=graph.output_channels,
        stream_keys=graph.stream_keys,
    )
    return Loop(run, None)


def _snapshot_gen(
    graph: Pregel,
    saver: Any,
    config: Mapping[str, Any],
    tup: Any,
    subgraphs: bool,
    apply_pending: bool = False,
) -> Generator[Any, Any, StateSnapshot]:
    """Build the snapshot of ``tup``.

    With ``apply_pending`` (the latest state of a thread), the writes of tasks that
    finished in an interrupted step are shown applied and those tasks leave ``next``;
    a checkpoint read by id shows the values from before its step.
    """
    from stategraph.pregel.algo import apply_writes
    from stategraph.pregel.io import read_output

    if tup is None:
        return StateSnapshot(
            values={},
            next=(),
            config=dict(config),
            metadata=None,
            created_at=None,
            parent_config=None,
            tasks=(),
            interrupts=(),
        )
    view = _view(graph, saver, tup.config)
    view._restore(tup)
    yield from view._hydrate(tup)
    view.step = int(view.metadata.get("step", -1)) + 1
    view.stop = view.step + view.run.recursion_limit
    tasks = view._prepare(for_execution=False)
    writes_by_task: dict[str, list[tuple[str, Any]]] = {}
    for tid, chan, val in tup.pending_writes or ():
        writes_by_task.setdefault(tid, []).append((chan, val))
    done: list[Any] = []
    interrupts: list[Any] = []
    task_objs = []
    for tid, task in tasks.items():
        writes = writes_by_task.get(tid, [])
        t_interrupts: tuple[Any, ...] = ()
        error = None
        for chan, val in writes:
            if chan == INTERRUPT:
                t_interrupts = tuple(val)
            elif chan == ERROR:
                error = val
        finished = any(c not in _UNFINISHED for c, _ in writes)
        result = None
        if finished:
            task.writes = [(c, v) for c, v in writes if c not in _NOT_RESULT]
            result = _task_result(graph, task.writes)
            if apply_pending:
                done.append(task)
                t_interrupts = ()
        interrupts.extend(t_interrupts)
        state: Any = subgraph_task_state(task, view.run.thread_id)
        if state is not None and subgraphs:
            from stategraph.pregel.run import strip_task_ids

            sub = task.node.subgraphs[0]
            # a checkpointer=True subgraph keeps its state under the node's name alone
            sub_ns = strip_task_ids(task.ns) if sub.checkpointer is True else task.ns
            sub_conf = {CONF: {"thread_id": view.run.thread_id, "checkpoint_ns": sub_ns}}
            sub_tup = yield (fx.GET_TUPLE, sub_conf)
            state = yield from _snapshot_gen(sub, saver, sub_conf, sub_tup, True, True)
        task_objs.append(PregelTask(tid, task.name, task.path, error, t_interrupts, state, result))
    null_writes = [(c, v) for c, v in writes_by_task.get(NULL_TASK_ID, []) if c not in _NOT_RESULT]
    if apply_pending and null_writes:
        from stategraph.pregel.loop import WriteBatch

        done.insert(0, WriteBatch(null_writes))
    if done:
        cp = view.checkpoint
        apply_writes(
            {
                **cp,
                "channel_versions": dict(cp["channel_versions"]),
                "versions_seen": {k: dict(v) for k, v in cp["versions_seen"].items()},
            },
            view.channels,
            done,
            view.get_next_version,
            graph.trigger_to_nodes,
        )
    done_ids = {t.id for t in done if hasattr(t, "id")}
    return StateSnapshot(
        values=read_output(view.channels, graph.stream_keys),
        next=tuple(t.name for tid, t in tasks.items() if tid not in done_ids),
        config=_mapped(tup.config, tup.metadata),
        metadata=tup.metadata,
        created_at=tup.checkpoint.get("ts"),
        parent_config=_mapped(tup.parent_config, tup.metadata),
        tasks=tuple(task_objs),
        interrupts=tuple(interrupts),
    )


def _get_state_gen(
    graph: Pregel,
    saver: Any,
    config: Mapping[str, Any],
    subgraphs: bool,
) -> Generator[Any, Any, StateSnapshot]:
    target, cfg = _target(graph, _state_config(config), required=False)
    conf = cfg[CONF]
    tup = yield (fx.GET_TUPLE, cfg)
    latest = not conf.get("checkpoint_id")
    return (yield from _snapshot_gen(target, saver, cfg, tup, subgraphs, latest))


def _update_gen(
    graph: Pregel,
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
    tup = yield (fx.GET_TUPLE, cfg)
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
        from stategraph.pregel.algo import make_task_id

        return make_task_id(view.checkpoint_id or "none", view.run.ns, name)


def _input_update(
    graph: Pregel, view: Loop, tup: Any, values: Any, step: int
) -> Generator[Any, Any, dict[str, Any]]:
    """``as_node="__input__"``: ``values`` become a new input checkpoint of the thread."""
    from stategraph.pregel.io import map_input

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
    yield (fx.PUT_WRITES, view.checkpoint_config, writes, input_id, "", True)
    return _saved_config(view)


def _copy_update(
    graph: Pregel, saver: Any, view: Loop, tup: Any, values: Any, step: int
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
    graph: Pregel, view: Loop, tup: Any, step: int
) -> Generator[Any, Any, dict[str, Any]]:
    """``as_node="__end__"`` with no values: end the pending tasks, so nothing is next.

    Writes of tasks that already finished (and writes made outside any task) are
    applied; the others end as if they had run without writing anything.
    """
    from stategraph.pregel.algo import apply_writes
    from stategraph.pregel.loop import WriteBatch

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
    graph: Pregel, view: Loop, tup: Any, updates: Sequence[StateUpdate], step: int
) -> Generator[Any, Any, dict[str, Any]]:
    """Updates as if the named nodes returned them, applied together as one step."""
    from stategraph.pregel.algo import apply_writes, local_read
    from stategraph.pregel.task import Task

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
        )
        task.reader = lambda select, _t=task, _c=channels: local_read(_c, select, _t.writes)
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
                yield (_AWAIT, result, as_node)
        check = getattr(graph, "check_state_edit", None)
        if check is not None:
            check(task.writes, channels, edit)
        tasks.append(task)
    if tup is not None:
        # only on the thread's head: an older checkpoint keeps the writes it was saved
        # with (a later resume or clear of it would take an edit of a branch that
        # moved on for its pending task's result); the new checkpoint stores the
        # changed delta channels whole either way
        head = yield (fx.GET_TUPLE, {CONF: view._base_configurable()})
        if head is not None and head.checkpoint["id"] == tup.checkpoint["id"]:
            for task in tasks:
                writes = [(c, v) for c, v in task.writes if c != TASKS]
                if writes:
                    yield (fx.PUT_WRITES, view.checkpoint_config, writes, task.id, "", True)
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


def _last_writer(graph: Pregel, view: Loop) -> str:
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


class StateMixin:
    """State inspection and editing for :class:`~stategraph.pregel.main.Pregel`."""

    # ------------------------------------------------------------------ helpers
    # ------------------------------------------------------------------ get_state
    def get_state(self, config: Mapping[str, Any], *, subgraphs: bool = False) -> StateSnapshot:
        """The state of the thread at its latest checkpoint (or ``checkpoint_id``)."""
        saver = _require_saver(_graph(self), config)
        return _drive(_get_state_gen(_graph(self), saver, config, subgraphs), saver)

    async def aget_state(
        self, config: Mapping[str, Any], *, subgraphs: bool = False
    ) -> StateSnapshot:
        """Async twin of :meth:`get_state`."""
        saver = _require_saver(_graph(self), config)
        return await _adrive(_get_state_gen(_graph(self), saver, config, subgraphs), saver)

    def get_state_history(
        self,
        config: Mapping[str, Any],
        *,
        filter: dict[str, Any] | None = None,
        before: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[StateSnapshot]:
        """The snapshots of the thread, newest first."""
        saver = _require_saver(_graph(self), config)
        graph, cfg = _target(_graph(self), _state_config(config), required=False)
        for tup in saver.list(cfg, filter=filter, before=before, limit=limit):
            yield _drive(_snapshot_gen(graph, saver, tup.config, tup, False), saver)

    async def aget_state_history(
        self,
        config: Mapping[str, Any],
        *,
        filter: dict[str, Any] | None = None,
        before: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[StateSnapshot]:
        """Async twin of :meth:`get_state_history`."""
        saver = _require_saver(_graph(self), config)
        graph, cfg = _target(_graph(self), _state_config(config), required=False)
        async for tup in saver.alist(cfg, filter=filter, before=before, limit=limit):
            yield await _adrive(_snapshot_gen(graph, saver, tup.config, tup, False), saver)

    # ------------------------------------------------------------------ update_state
    def update_state(
        self,
        config: Mapping[str, Any],
        values: dict[str, Any] | Any | None,
        as_node: str | None = None,
        task_id: str | None = None,
    ) -> dict[str, Any]:
        """Write ``values`` as if node ``as_node`` returned them; returns the new config.

        The update goes through the reducers and decides ``next`` like the node's own
        return would. Updating a past checkpoint forks: the new checkpoint's parent is
        the one named and the old branch stays readable.
        """
        saver = _require_saver(_graph(self), config)
        with update_lease(saver, config) as token:
            gen = _update_gen(_graph(self), saver, config, [StateUpdate(values, as_node, task_id)])
            return cast("dict[str, Any]", _drive(gen, saver, token))

    async def aupdate_state(
        self,
        config: Mapping[str, Any],
        values: dict[str, Any] | Any | None,
        as_node: str | None = None,
        task_id: str | None = None,
    ) -> dict[str, Any]:
        """Async twin of :meth:`update_state`."""
        saver = _require_saver(_graph(self), config)
        async with aupdate_lease(saver, config) as token:
            gen = _update_gen(_graph(self), saver, config, [StateUpdate(values, as_node, task_id)])
            return cast("dict[str, Any]", await _adrive(gen, saver, token))

    def bulk_update_state(
        self, config: Mapping[str, Any], supersteps: Sequence[Sequence[StateUpdate]]
    ) -> dict[str, Any]:
        """Apply several updates, one checkpoint per superstep; returns the last config."""
        _check_supersteps(supersteps)
        saver = _require_saver(_graph(self), config)
        cfg: Mapping[str, Any] = config
        with update_lease(saver, config) as token:  # one lease over every superstep
            for updates in supersteps:
                cfg = _drive(_update_gen(_graph(self), saver, cfg, list(updates)), saver, token)
        return dict(cfg)

    async def abulk_update_state(
        self, config: Mapping[str, Any], supersteps: Sequence[Sequence[StateUpdate]]
    ) -> dict[str, Any]:
        """Async twin of :meth:`bulk_update_state`."""
        _check_supersteps(supersteps)
        saver = _require_saver(_graph(self), config)
        cfg: Mapping[str, Any] = config
        async with aupdate_lease(saver, config) as token:  # one lease over every superstep
            for updates in supersteps:
                gen = _update_gen(_graph(self), saver, cfg, list(updates))
                cfg = await _adrive(gen, saver, token)
        return dict(cfg)
