"""Reading saved state: the snapshot of a checkpoint (``get_state``, history), and
what reading and editing share: the saver checks, the subgraph a config names, the
loop view of a checkpoint, and the drivers.

The logic is written once as generators that yield saver effects (the records of
:mod:`~stategraph.pregel._effects` the run loop yields, and :class:`AwaitRoute`);
:func:`_drive` and :func:`_adrive` perform them with the saver's sync or async methods.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from stategraph.constants import CONF, ERROR, ERROR_SOURCE, INTERRUPT, NULL_TASK_ID
from stategraph.pregel import _effects as fx
from stategraph.pregel._lease_guard import fenced
from stategraph.pregel.debug import subgraph_task_state
from stategraph.runtime import DEFAULT_RUNTIME
from stategraph.types import PregelTask, StateSnapshot

if TYPE_CHECKING:
    from stategraph.pregel._loop.drive import Loop
    from stategraph.pregel._roles import PregelGraph


@dataclass(frozen=True, slots=True)
class AwaitRoute:
    """Effect of the update generators: an async routing function's result, which
    only the async driver can await (the sync one refuses it)."""

    awaitable: Any
    """What the routing function returned; the async driver sends back its value."""
    node: str
    """The node whose update ran the routing function (named in the sync error)."""


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


def _task_result(graph: PregelGraph, writes: list[tuple[str, Any]]) -> dict[str, Any] | None:
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
    """Run a state generator to its end with the saver's sync methods; its result."""
    try:
        eff = next(gen)
        while True:
            eff = gen.send(_perform(eff, saver, token))
    except StopIteration as stop:
        return stop.value


def _perform(eff: Any, saver: Any, token: int | None) -> Any:
    """Perform one effect of a state generator with the saver's sync methods."""
    match eff:
        case fx.GetTuple(config=config):
            return saver.get_tuple(config)
        case fx.DeltaHistory(config=config, channels=channels):
            return saver.get_delta_channel_history(config=config, channels=channels)
        case fx.GetBefore():
            return fx.get_before(saver, eff)
        case fx.Put() | fx.PutWrites():
            name, args = fx.saver_call(eff, _fence(eff.config, token))
            return getattr(saver, name)(*args)
        case AwaitRoute(awaitable=awaitable, node=node):
            awaitable.close()
            raise TypeError(
                f"Node '{node}' has an async routing function: update its state with "
                "aupdate_state()/abulk_update_state() (or make the routing function "
                "synchronous)."
            )
    return None


async def _adrive(gen: Generator[Any, Any, Any], saver: Any, token: int | None = None) -> Any:
    """Async twin of :func:`_drive` (the saver's async methods; routes are awaited)."""
    try:
        eff = next(gen)
        while True:
            eff = gen.send(await _aperform(eff, saver, token))
    except StopIteration as stop:
        return stop.value


async def _aperform(eff: Any, saver: Any, token: int | None) -> Any:
    """Perform one effect of a state generator with the saver's async methods."""
    match eff:
        case fx.GetTuple(config=config):
            return await saver.aget_tuple(config)
        case fx.DeltaHistory(config=config, channels=channels):
            return await saver.aget_delta_channel_history(config=config, channels=channels)
        case fx.GetBefore():
            return await fx.aget_before(saver, eff)
        case fx.Put() | fx.PutWrites():
            name, args = fx.saver_call(eff, _fence(eff.config, token))
            return await getattr(saver, "a" + name)(*args)
        case AwaitRoute(awaitable=awaitable):
            return await awaitable
    return None


def _graph(obj: Any) -> PregelGraph:
    return cast("PregelGraph", obj)


def _require_saver(graph: PregelGraph, config: Mapping[str, Any]) -> Any:
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


def _graph_at(graph: PregelGraph, ns: str, *, required: bool) -> PregelGraph:
    """The graph whose state lives at namespace ``ns`` (``graph`` itself at the root).

    A namespace run by a graph called inside a node that the parent does not declare
    is read with the parent's own channels; updating it raises, because the parent
    cannot tell which nodes and channels the update is for.
    """
    if not ns:
        return graph
    from stategraph.pregel._run import strip_task_ids

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


def _target(
    graph: PregelGraph, cfg: dict[str, Any], *, required: bool
) -> tuple[PregelGraph, dict[str, Any]]:
    """The graph at ``cfg``'s namespace and the config to read its state with.

    A subgraph compiled with ``checkpointer=True`` keeps one state per thread, saved
    under its namespace without task ids: a task's config (``"child:<task id>"``)
    is read there, as in LangGraph.
    """
    ns = cfg[CONF]["checkpoint_ns"]
    target = _graph_at(graph, ns, required=required)
    if ns and target is not graph and target.checkpointer is True:
        from stategraph.pregel._run import strip_task_ids

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


def _view(graph: PregelGraph, saver: Any, config: Mapping[str, Any]) -> Loop:
    from stategraph.pregel._loop.drive import Loop
    from stategraph.pregel._pregel.config import DEFAULT_RECURSION_LIMIT
    from stategraph.pregel._run import RunContext
    from stategraph.pregel._task import ResumeState

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
    graph: PregelGraph,
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
    from stategraph.pregel._algo import apply_writes
    from stategraph.pregel._io import read_output

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
            from stategraph.pregel._run import strip_task_ids

            sub = task.node.subgraphs[0]
            # a checkpointer=True subgraph keeps its state under the node's name alone
            sub_ns = strip_task_ids(task.ns) if sub.checkpointer is True else task.ns
            sub_conf = {CONF: {"thread_id": view.run.thread_id, "checkpoint_ns": sub_ns}}
            sub_tup = yield fx.GetTuple(sub_conf)
            state = yield from _snapshot_gen(sub, saver, sub_conf, sub_tup, True, True)
        task_objs.append(PregelTask(tid, task.name, task.path, error, t_interrupts, state, result))
    null_writes = [(c, v) for c, v in writes_by_task.get(NULL_TASK_ID, []) if c not in _NOT_RESULT]
    if apply_pending and null_writes:
        from stategraph.pregel._loop.drive import WriteBatch

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
    graph: PregelGraph,
    saver: Any,
    config: Mapping[str, Any],
    subgraphs: bool,
) -> Generator[Any, Any, StateSnapshot]:
    target, cfg = _target(graph, _state_config(config), required=False)
    conf = cfg[CONF]
    tup = yield fx.GetTuple(cfg)
    latest = not conf.get("checkpoint_id")
    return (yield from _snapshot_gen(target, saver, cfg, tup, subgraphs, latest))
