"""Setting up one run: the :class:`~stategraph.pregel._run.RunContext` and
:class:`~stategraph.pregel._loop.drive.Loop` of an ``invoke``/``stream`` call (nested or root,
its saver, namespace, durability, runtime, observers, executor), and the value it returns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from stategraph._context import CURRENT_TASK
from stategraph.constants import CONF, INTERRUPT, NS_SEP
from stategraph.errors import GraphInterrupt
from stategraph.pregel._io import check_output_keys
from stategraph.pregel._pregel.base import PregelBase
from stategraph.pregel._pregel.config import (
    _DURABILITY,
    _ROOT_CHECKPOINTER_TRUE,
    _VALID_MODES,
    DEFAULT_RECURSION_LIMIT,
    _max_concurrency,
    _merge_configs,
    _server_info,
    lift_config_keys,
)
from stategraph.pregel._run import ReplayPlan, RunContext, strip_task_ids
from stategraph.pregel._schema import coerce_context
from stategraph.pregel._task import ResumeState, Task
from stategraph.runtime import DEFAULT_RUNTIME, RunControl, Runtime

if TYPE_CHECKING:
    from stategraph._context import TaskContext
    from stategraph.observe._typed_output import V2Parts
    from stategraph.pregel._loop.drive import Loop
    from stategraph.pregel._roles import PregelGraph


_RUN_PARTS: tuple[type[Loop], Callable[..., Any]] | None = None


def _run_parts() -> tuple[type[Loop], Callable[..., Any]]:
    """The loop class and the observer lookup, imported by the first run rather than
    with the Pregel class (building and compiling a graph need neither). Kept here
    after the first call: an import statement in ``_make_run`` would cost ~7,000
    instructions on every run."""
    global _RUN_PARTS
    if _RUN_PARTS is None:
        from stategraph.observe._registry import observers_for
        from stategraph.pregel._loop.drive import Loop

        _RUN_PARTS = (Loop, observers_for)
    return _RUN_PARTS


class RunSetupMixin(PregelBase):
    """Builds the run of one call and shapes what it returns."""

    def _make_run(
        self,
        input: Any,
        config: Mapping[str, Any] | None,
        *,
        context: Any,
        modes: frozenset[str],
        sink: Any,
        output_keys: str | Sequence[str] | None,
        interrupt_before: Any,
        interrupt_after: Any,
        durability: str | None,
        subgraphs: bool,
        control: RunControl | None = None,
        multitask_strategy: str | None = None,
    ) -> Loop:
        if control is not None and not isinstance(control, RunControl):
            raise TypeError(
                f"control must be a RunControl (stategraph.runtime), got {control!r}. Create "
                "one with RunControl() and pass it to invoke()/stream() to drain the run."
            )
        Loop, observers_for = _run_parts()
        cfg = _merge_configs(self.config, lift_config_keys(config))
        parent = CURRENT_TASK.get()
        parent_run: RunContext | None = None
        parent_task: Task | None = None
        if parent is not None and isinstance(parent.run, tuple):
            parent_run, parent_task = parent.run
        conf = dict(cfg.get(CONF) or {})
        if parent_run is not None:
            own_thread = conf.get("thread_id")
            if own_thread is not None and own_thread != parent_run.thread_id:
                # a graph given a thread of its own inside a node is an independent run
                # (its checkpoints live in that thread, at the root namespace)
                parent = parent_run = parent_task = None
        nested = parent_run is not None and parent_task is not None
        if nested:
            assert parent_run is not None and parent_task is not None
            conf = {**parent_run.configurable, **conf}
            conf["thread_id"] = parent_run.thread_id
            conf.pop("checkpoint_id", None)
            cfg[CONF] = conf
            for k in ("tags", "metadata"):
                cfg.setdefault(k, parent_run.config.get(k))
            cfg.setdefault("recursion_limit", parent_run.recursion_limit)
        # checkpointer
        own = self.checkpointer
        ns = ""
        replay: ReplayPlan | None = None
        if nested:
            assert parent is not None and parent_run is not None and parent_task is not None
            if own is False:
                saver = None
            elif own is None or own is True:
                saver = parent_run.checkpointer
            else:
                saver = own
            ns = subgraph_namespace(
                _caller_namespace(parent, parent_task), parent.next_subgraph_index(), own is True
            )
            replay = parent_run.replay
        else:
            if own is True:
                raise RuntimeError(_ROOT_CHECKPOINTER_TRUE)
            saver = own if own not in (None, True, False) else None
            conf, replay = _entry_point(conf)
            cfg[CONF] = conf
        lease = None
        if not nested:
            from stategraph.pregel._lease_guard import lease_settings

            lease = lease_settings(cfg, multitask_strategy)
        if saver is not None and not nested and conf.get("thread_id") is None:
            raise ValueError(
                "This graph has a checkpointer, so each run needs a thread id: pass "
                'config={"configurable": {"thread_id": "<some id>"}} (missing key: '
                "'configurable.thread_id')."
            )
        recursion_limit = cfg.get("recursion_limit", DEFAULT_RECURSION_LIMIT)
        if not isinstance(recursion_limit, int) or recursion_limit < 1:
            raise ValueError(
                f"recursion_limit must be a positive integer, got {recursion_limit!r}."
            )
        if durability is None:
            durability = (
                parent_run.durability if parent_run is not None else cfg.get("durability", "async")
            )
        if durability not in _DURABILITY:
            raise ValueError(f"durability must be one of {_DURABILITY}, got {durability!r}.")
        store = self.store if self.store is not None else (parent_run.store if parent_run else None)
        cache = self.cache if self.cache is not None else (parent_run.cache if parent_run else None)
        base_runtime: Runtime[Any] = (
            parent_run.runtime if parent_run is not None else DEFAULT_RUNTIME
        )
        if parent_run is not None:
            control = parent_run.control
            server_info = parent_run.server_info
        else:
            if control is None:
                control = RunControl()
            server_info = (
                _server_info(conf) if "assistant_id" in conf or "graph_id" in conf else None
            )
        if isinstance(context, Mapping) and self.context_schema is not None:
            context = coerce_context(self.context_schema, context)
        if context is not None or store is not base_runtime.store:
            base_runtime = base_runtime.override(
                context=context if context is not None else base_runtime.context, store=store
            )
        if parent_run is not None and parent_task is not None:
            stream_ns = tuple(ns.split(NS_SEP))
            if parent_run.subgraphs:
                sink = parent_run.sink
                modes = parent_run.modes
            else:
                sink = None
                modes = frozenset()
            resume_state = parent_run.resume_state
            resuming = parent_task.resuming
            parent_ids = dict(parent_run.parent_ids)
            parent_ids[parent_run.ns] = parent_run_checkpoint_id(parent_run)
        else:
            stream_ns = ()
            resume_state = ResumeState()
            resuming = False
            parent_ids = {}
        if output_keys is not None:
            check_output_keys(cast("PregelGraph", self), output_keys)
        ib = self.interrupt_before_nodes if interrupt_before is None else interrupt_before
        ia = self.interrupt_after_nodes if interrupt_after is None else interrupt_after
        run = RunContext(
            graph=cast("PregelGraph", self),
            config=cfg,
            checkpointer=saver,
            store=store,
            cache=cache,
            runtime=base_runtime,
            modes=modes,
            subgraphs=subgraphs or (parent_run.subgraphs if parent_run else False),
            sink=sink,
            durability=durability,
            resume_state=resume_state,
            resuming=resuming,
            interrupt_before=ib,
            interrupt_after=ia,
            recursion_limit=recursion_limit,
            ns=ns,
            stream_ns=stream_ns,
            parent_ids=parent_ids,
            nested=nested,
            output_keys=output_keys if output_keys is not None else self.output_channels,
            stream_keys=output_keys if output_keys is not None else self.stream_keys,
            update_keys=output_keys,
            max_concurrency=(None if cfg.get("max_concurrency") is None else _max_concurrency(cfg)),
            run_id=str(cfg["run_id"]) if cfg.get("run_id") is not None else None,
            control=control,
            replay=replay,
            stateful=nested and own is True,
        )
        run.configurable = conf
        run.server_info = server_info
        if parent_task is not None:
            run.resume_unfinished = parent_task.resume_unfinished
        run.parent_run = parent_run
        run.parent_task = parent_task
        if parent is not None and parent.call is not None:
            run.parent_call = parent.call[0]
        if parent_run is not None:
            run.guard = parent_run.guard
        elif saver is not None:
            assert lease is not None
            if lease.strategy == "rollback" and not saver.lease_rollback_supported:
                raise ValueError(
                    f"multitask_strategy='rollback' needs a checkpointer that can delete the "
                    f"checkpoints of a run; {type(saver).__name__} cannot (see "
                    "LeaseSupport.lease_rollback). Use 'interrupt', 'enqueue' or 'reject'."
                )
            run.lease_settings = lease
        run.observers = observers_for(cfg, parent_run)
        if "executor" in cfg or self.executor is not None:
            _use_executor(run, cfg, self.executor)
        elif parent_run is not None:
            run.remote = parent_run.remote
        if parent_run is not None:
            run.model_handlers = parent_run.model_handlers
            run.messages = parent_run.messages
        elif "messages" in modes and sink is not None:
            from stategraph.observe._messages import MessagesEmitter

            run.messages = MessagesEmitter(sink, run.subgraphs)
            run.model_handlers = [run.messages]
        if (
            parent_run is None
            and run.observers is not None
            and run.observers.wants("model_started")
        ):
            from stategraph.observe import ModelCallObserving

            run.model_handlers = [*run.model_handlers, ModelCallObserving(run.observers)]  # type: ignore[list-item]
        return Loop(run, input)

    @staticmethod
    def _modes(stream_mode: Any) -> tuple[frozenset[str], bool]:
        single = isinstance(stream_mode, str)
        modes = frozenset([stream_mode] if single else stream_mode)
        bad = modes - _VALID_MODES
        if bad:
            raise ValueError(
                f"Unknown stream_mode {sorted(bad)!r}; choose from {sorted(_VALID_MODES)}."
            )
        return modes, single

    def _finalize(self, loop: Loop, exc: GraphInterrupt | None, version: str = "v1") -> Any:
        """The value ``invoke`` returns: output plus ``__interrupt__`` (or a ``GraphOutput``)."""
        out = self._output(loop, exc)
        if version != "v2":
            return out
        return self._v2_parts().graph_output(out)

    def _v2_parts(self) -> V2Parts:
        """The ``version="v2"`` part builder of a run of this graph."""
        from stategraph.observe._typed_output import V2Parts

        return V2Parts(self._output_class, self._state_class)

    @property
    def _output_class(self) -> Any:
        """The class ``version="v2"`` builds output values as (dicts stay dicts here)."""
        return dict

    @property
    def _state_class(self) -> Any:
        """The class ``version="v2"`` builds checkpoint values as (dicts stay dicts here)."""
        return dict

    def _output(self, loop: Loop, exc: GraphInterrupt | None) -> Any:
        if exc is not None and loop.run.nested:
            # the parent's task stops too (a breakpoint carries no interrupt values)
            raise exc
        if not loop.output_written and not loop.interrupts:
            # nothing was ever written to the output channels during this run
            return None
        if exc is None:
            return loop.output
        output = loop.output
        if loop.interrupts:
            if isinstance(output, dict):
                output = {**output, INTERRUPT: list(loop.interrupts)}
            else:
                output = {INTERRUPT: list(loop.interrupts)}
        return output


def subgraph_namespace(task_ns: str, index: int, stateful: bool) -> str:
    """Checkpoint namespace of the ``index``-th graph a task runs.

    The first graph a node runs uses the task's namespace (``node:<task id>``); later
    ones append their number (``node:<task id>|1``). A graph compiled with
    ``checkpointer=True`` drops the task ids, so it finds its state again in every run.
    """
    ns = task_ns if index == 0 else f"{task_ns}{NS_SEP}{index}"
    return strip_task_ids(ns) if stateful else ns


def _caller_namespace(ctx: TaskContext, task: Task) -> str:
    """The namespace the graphs run by ``ctx`` nest in: the task's, or for a ``@task``
    call, the call's own level under it (``<task ns>|<name>:<call task id>``), as
    LangGraph gives it."""
    if ctx.call is None:
        return task.ns
    from stategraph.observe._run_metadata import call_namespace

    call_id, name = ctx.call
    return call_namespace(task.ns, call_id, name)


def _entry_point(conf: dict[str, Any]) -> tuple[dict[str, Any], ReplayPlan | None]:
    """Where a root run starts when its config names a subgraph's checkpoint.

    A root graph always runs at the root namespace. A config from a subgraph's state
    (``checkpoint_ns`` set, with ``checkpoint_map`` naming a checkpoint per level)
    replays the root at the checkpoint named for it, and each subgraph level at its
    own. Without a map the ancestors are read from the subgraph checkpoint's
    metadata when the run starts.
    """
    entry_ns = conf.get("checkpoint_ns") or ""
    if not entry_ns and "checkpoint_map" not in conf:
        return conf, None
    conf = dict(conf)
    mapping = dict(conf.pop("checkpoint_map", None) or {})
    conf["checkpoint_ns"] = ""
    if not entry_ns:
        return conf, None
    entry_id = conf.pop("checkpoint_id", None)
    if entry_id is not None:
        mapping[entry_ns] = entry_id
    root_id = mapping.pop("", None)
    if root_id is not None:
        conf["checkpoint_id"] = root_id
    if not mapping:
        return conf, None
    return conf, ReplayPlan(targets=mapping)


def parent_run_checkpoint_id(run: RunContext) -> str:
    """The checkpoint id the parent graph's current step started from."""
    return str(run.loop.checkpoint_id) if run.loop is not None else ""


def _use_executor(run: RunContext, cfg: Mapping[str, Any], default: Any) -> None:
    """Give ``run`` its executor: ``config["executor"]`` (checked) or the graph's.

    A remote one gets the node calls; an in-process one only bounds how many tasks of
    a step run at once (its ``max_workers``, with ``max_concurrency``).
    """
    from stategraph.executors.base import check_executor
    from stategraph.pregel._remote_tasks import remote_for

    executor = (
        check_executor(cfg["executor"], 'config["executor"]') if "executor" in cfg else default
    )
    if executor is None:
        return
    run.remote = remote_for(executor)
    limit = executor.max_workers
    if limit is not None:
        run.max_concurrency = min(limit, run.max_concurrency or limit)
