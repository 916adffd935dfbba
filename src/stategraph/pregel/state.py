"""Reading and editing saved state: ``get_state``, history, ``update_state``.

The logic is written once as generators that yield saver effects (the same effect
tuples the run loop uses); :func:`_drive` and :func:`_adrive` perform them with the
saver's sync or async methods.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from stategraph.constants import CONF, ERROR, INTERRUPT, NS_END, NS_SEP, NULL_TASK_ID, START
from stategraph.errors import InvalidUpdateError
from stategraph.pregel import effects as fx
from stategraph.runtime import DEFAULT_RUNTIME
from stategraph.types import PregelTask, StateSnapshot, StateUpdate

if TYPE_CHECKING:
    from stategraph.pregel.loop import Loop
    from stategraph.pregel.main import Pregel

__all__ = ["StateMixin"]

_NOT_RESULT = frozenset(
    {ERROR, INTERRUPT, "__resume__", "__resume_asked__", "__no_writes__", "__call_result__"}
)
_UNFINISHED = frozenset({ERROR, INTERRUPT, "__resume__", "__resume_asked__", "__call_result__"})


def _task_result(graph: Pregel, writes: list[tuple[str, Any]]) -> dict[str, Any] | None:
    """What a finished task wrote to the state (shown as ``PregelTask.result``)."""
    keys = graph.stream_keys
    keyset = {keys} if isinstance(keys, str) else set(keys)
    out = {c: v for c, v in writes if c in keyset}
    return out or None


def _drive(gen: Generator[Any, Any, Any], saver: Any) -> Any:
    value: Any = None
    try:
        while True:
            eff = gen.send(value)
            tag = eff[0]
            if tag == fx.GET_TUPLE:
                value = saver.get_tuple(eff[1])
            elif tag == fx.PUT:
                value = saver.put(*eff[1:5])
            elif tag == fx.PUT_WRITES:
                value = saver.put_writes(*eff[1:5])
            else:
                value = None
    except StopIteration as stop:
        return stop.value


async def _adrive(gen: Generator[Any, Any, Any], saver: Any) -> Any:
    value: Any = None
    try:
        while True:
            eff = gen.send(value)
            tag = eff[0]
            if tag == fx.GET_TUPLE:
                value = await saver.aget_tuple(eff[1])
            elif tag == fx.PUT:
                value = await saver.aput(*eff[1:5])
            elif tag == fx.PUT_WRITES:
                value = await saver.aput_writes(*eff[1:5])
            else:
                value = None
    except StopIteration as stop:
        return stop.value


def _graph(obj: Any) -> Pregel:
    return cast("Pregel", obj)


def _require_saver(graph: Pregel, config: Mapping[str, Any]) -> Any:
    saver = graph.checkpointer
    if saver in (None, True, False):
        from stategraph._context import CURRENT_TASK

        ctx = CURRENT_TASK.get()
        if ctx is not None and isinstance(ctx.run, tuple):
            saver = ctx.run[0].checkpointer
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


def _view(graph: Pregel, saver: Any, config: Mapping[str, Any]) -> Loop:
    from stategraph.pregel.loop import Loop
    from stategraph.pregel.main import DEFAULT_RECURSION_LIMIT
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
        state: Any = None
        if task.node.subgraphs:
            sub_conf = {
                CONF: {
                    "thread_id": view.run.thread_id,
                    "checkpoint_ns": task.ns,
                }
            }
            if subgraphs:
                sub = task.node.subgraphs[0]
                sub_tup = yield (fx.GET_TUPLE, sub_conf)
                state = yield from _snapshot_gen(sub, saver, sub_conf, sub_tup, True)
            else:
                state = sub_conf
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
        config=tup.config,
        metadata=tup.metadata,
        created_at=tup.checkpoint.get("ts"),
        parent_config=tup.parent_config,
        tasks=tuple(task_objs),
        interrupts=tuple(interrupts),
    )


def _get_state_gen(
    graph: Pregel,
    saver: Any,
    config: Mapping[str, Any],
    subgraphs: bool,
) -> Generator[Any, Any, StateSnapshot]:
    conf = dict(config.get(CONF) or {})
    conf.setdefault("checkpoint_ns", "")
    tup = yield (fx.GET_TUPLE, {**config, CONF: conf})
    latest = not conf.get("checkpoint_id")
    return (yield from _snapshot_gen(graph, saver, {**config, CONF: conf}, tup, subgraphs, latest))


def _history_config(graph: Pregel, config: Mapping[str, Any]) -> dict[str, Any]:
    conf = dict(config.get(CONF) or {})
    conf.setdefault("checkpoint_ns", "")
    return {**config, CONF: conf}


def _update_gen(
    graph: Pregel,
    saver: Any,
    config: Mapping[str, Any],
    updates: Sequence[StateUpdate],
) -> Generator[Any, Any, dict[str, Any]]:
    from stategraph.pregel.algo import apply_writes, make_task_id
    from stategraph.pregel.attempt import run_writers
    from stategraph.pregel.task import Task

    conf = dict(config.get(CONF) or {})
    conf.setdefault("checkpoint_ns", "")
    cfg = {**config, CONF: conf}
    tup = yield (fx.GET_TUPLE, cfg)
    view = _view(graph, saver, cfg)
    view._restore(tup)
    if tup is not None and conf.get("checkpoint_id"):
        # updating a past checkpoint forks: the new one is parented on it
        view.checkpoint_config = {
            CONF: {**view._base_configurable(), "checkpoint_id": tup.checkpoint["id"]}
        }
    step = -1 if tup is None else int(view.metadata.get("step", -1))
    from stategraph.pregel.algo import local_read

    channels = view.channels
    tasks: list[Task] = []
    for i, update in enumerate(updates):
        values, as_node = update.values, update.as_node
        if as_node is None:
            as_node = _last_writer(graph, view)
        if as_node not in graph.nodes:
            raise InvalidUpdateError(
                f"update_state(as_node={as_node!r}): no such node. Nodes: "
                f"{', '.join(n for n in graph.nodes)}."
            )
        node = graph.nodes[as_node]
        cp_id = view.checkpoint_id or "none"
        tid = update.task_id or make_task_id(cp_id, view.run.ns, "update", as_node, step, i)
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
        run_writers(task, values)
        tasks.append(task)
    # all updates of one superstep apply together, as the writes of one step would. As
    # in LangGraph, an update does not count as the node having run (its triggers are
    # not marked seen); the new step clears per-step triggers such as pending edges.
    for task in tasks:
        task.triggers = [INTERRUPT]
    view.updated = apply_writes(
        view.checkpoint, view.channels, tasks, view.get_next_version, graph.trigger_to_nodes
    )
    yield from view._save("update", step + 1)
    return view.checkpoint_config


def _last_writer(graph: Pregel, view: Loop) -> str:
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
        cfg = _history_config(_graph(self), config)
        for tup in saver.list(cfg, filter=filter, before=before, limit=limit):
            yield _drive(_snapshot_gen(_graph(self), saver, tup.config, tup, False), saver)

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
        cfg = _history_config(_graph(self), config)
        async for tup in saver.alist(cfg, filter=filter, before=before, limit=limit):
            yield await _adrive(_snapshot_gen(_graph(self), saver, tup.config, tup, False), saver)

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
        gen = _update_gen(_graph(self), saver, config, [StateUpdate(values, as_node, task_id)])
        return _drive(gen, saver)

    async def aupdate_state(
        self,
        config: Mapping[str, Any],
        values: dict[str, Any] | Any | None,
        as_node: str | None = None,
        task_id: str | None = None,
    ) -> dict[str, Any]:
        """Async twin of :meth:`update_state`."""
        saver = _require_saver(_graph(self), config)
        gen = _update_gen(_graph(self), saver, config, [StateUpdate(values, as_node, task_id)])
        return await _adrive(gen, saver)

    def bulk_update_state(
        self, config: Mapping[str, Any], supersteps: Sequence[Sequence[StateUpdate]]
    ) -> dict[str, Any]:
        """Apply several updates, one checkpoint per superstep; returns the last config."""
        if not supersteps:
            raise ValueError("bulk_update_state() needs at least one superstep of updates.")
        saver = _require_saver(_graph(self), config)
        cfg: Mapping[str, Any] = config
        for updates in supersteps:
            cfg = _drive(_update_gen(_graph(self), saver, cfg, list(updates)), saver)
        return dict(cfg)

    async def abulk_update_state(
        self, config: Mapping[str, Any], supersteps: Sequence[Sequence[StateUpdate]]
    ) -> dict[str, Any]:
        """Async twin of :meth:`bulk_update_state`."""
        if not supersteps:
            raise ValueError("bulk_update_state() needs at least one superstep of updates.")
        saver = _require_saver(_graph(self), config)
        cfg: Mapping[str, Any] = config
        for updates in supersteps:
            cfg = await _adrive(_update_gen(_graph(self), saver, cfg, list(updates)), saver)
        return dict(cfg)


_ = (NS_END, NS_SEP)
