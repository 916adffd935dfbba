"""``Pregel``: the compiled, runnable graph (``invoke``, ``stream`` and friends)."""

from __future__ import annotations

import queue
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, cast

from typing_extensions import Self

from stategraph._context import CURRENT_TASK
from stategraph._notes import add_note
from stategraph.channels.base import BaseChannel
from stategraph.constants import CONF, END, INTERRUPT, NS_SEP, TASKS
from stategraph.errors import GraphInterrupt, ParentCommand, sync_timeout_error
from stategraph.observe import observers_for
from stategraph.observe._typed_output import V2Parts
from stategraph.pregel.io import NO_UPDATE, check_output_keys
from stategraph.pregel.loop import Loop
from stategraph.pregel.node import NodeBuilder, PregelNode
from stategraph.pregel.run import ReplayPlan, RunContext, strip_task_ids
from stategraph.pregel.schema import (
    coerce_context,
    context_jsonschema,
    fields_model,
    graph_name,
    io_model,
)
from stategraph.pregel.state import StateMixin
from stategraph.pregel.task import ResumeState, Task
from stategraph.runtime import DEFAULT_RUNTIME, RunControl, Runtime, ServerInfo
from stategraph.types import Command, RetryPolicy, Send
from stategraph.typing import ContextT, InputT, OutputT, StateT
from stategraph.warnings import LangGraphDeprecatedSinceV10, warn_deprecated

if TYPE_CHECKING:
    from stategraph.drawing.graph import Graph

__all__ = ["Pregel", "DEFAULT_RECURSION_LIMIT"]

DEFAULT_RECURSION_LIMIT = 10007
_VALID_MODES = frozenset(
    {"values", "updates", "checkpoints", "tasks", "debug", "messages", "custom", "tools"}
)
_DURABILITY = ("sync", "async", "exit")


_CONFIG_KEYS = frozenset(
    {
        "tags",
        "metadata",
        "callbacks",
        "run_name",
        "max_concurrency",
        "recursion_limit",
        CONF,
        "run_id",
        "durability",
        # stategraph's own run settings (see docs/concurrency.md and docs/scale-out.md)
        "multitask_strategy",
        "lease_timeout",
        "enqueue_timeout",
        "executor",
    }
)


def lift_config_keys(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """``config`` with keys that are not config fields moved into ``configurable``.

    As in LangGraph, ``{"thread_id": "1"}`` means ``{"configurable": {"thread_id":
    "1"}}``; ``None`` values are dropped.
    """
    out = dict(config or {})
    extra = [k for k in out if k not in _CONFIG_KEYS]
    if extra:
        conf = dict(out.get(CONF) or {})
        for key in extra:
            value = out.pop(key)
            if value is not None:
                conf[key] = value
        out[CONF] = conf
    return out


def _merge_configs(
    base: Mapping[str, Any] | None, extra: Mapping[str, Any] | None
) -> dict[str, Any]:
    out: dict[str, Any] = dict(base or {})
    if not extra:
        return out
    for key, value in extra.items():
        if key in (CONF, "metadata") and isinstance(value, Mapping):
            out[key] = {**(out.get(key) or {}), **value}
        elif key == "tags" and value:
            out[key] = [*(out.get(key) or ()), *value]
        else:
            out[key] = value
    return out


class Pregel(StateMixin, Generic[StateT, ContextT, InputT, OutputT]):
    """A graph of nodes exchanging values through channels, run in super-steps.

    Build one directly from :class:`PregelNode` s (or :class:`NodeBuilder` s) and
    channels, or get one from ``StateGraph.compile()``.
    """

    __drawing_kind__ = ("langgraph", "pregel", "main", "Pregel")

    executor: Any = None
    """Where the nodes of this graph's tasks run: a
    :class:`~stategraph.executors.TaskExecutor` (set by ``compile(executor=...)``);
    ``config["executor"]`` overrides it per run. ``None``: the caller's threads."""

    step_timeout: float | None = None
    """Seconds one super-step may take; a step that runs longer raises ``TimeoutError``
    (the async shell cancels the step's tasks; threads cannot be stopped). ``None``:
    no limit."""

    def __init__(
        self,
        *,
        nodes: Mapping[str, PregelNode | NodeBuilder],
        channels: Mapping[str, BaseChannel] | None,
        input_channels: str | Sequence[str],
        output_channels: str | Sequence[str],
        stream_channels: str | Sequence[str] | None = None,
        stream_mode: str = "values",
        interrupt_before_nodes: Sequence[str] | str = (),
        interrupt_after_nodes: Sequence[str] | str = (),
        checkpointer: Any = None,
        store: Any = None,
        cache: Any = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] = (),
        context_schema: type[Any] | None = None,
        config: Mapping[str, Any] | None = None,
        name: str = "LangGraph",
        debug: bool = False,
        strict: bool = False,
        auto_validate: bool = True,
        **deprecated: Any,
    ) -> None:
        if "config_type" in deprecated:
            warn_deprecated(
                LangGraphDeprecatedSinceV10,
                "`config_type` is deprecated and will be removed. Please use `context_schema` "
                "instead.",
            )
            given = deprecated.pop("config_type")
            context_schema = context_schema if context_schema is not None else given
        if deprecated:
            raise TypeError(f"Pregel() got unexpected arguments: {', '.join(deprecated)}")
        built: dict[str, PregelNode] = {}
        for key, node in nodes.items():
            if isinstance(node, NodeBuilder):
                node = node.build(key)
            if not node.name:
                node.name = key
            built[key] = node
        self.nodes = built
        self.channels: dict[str, BaseChannel] = dict(channels or {})
        for key, ch in self.channels.items():
            if not ch.key:
                ch.key = key
        if TASKS not in self.channels:
            from stategraph.channels.topic import Topic

            self.channels[TASKS] = Topic(Send, key=TASKS)
        self.input_channels = input_channels
        self.output_channels = output_channels
        self.stream_channels = stream_channels
        self.stream_mode = stream_mode
        self.interrupt_before_nodes = interrupt_before_nodes
        self.interrupt_after_nodes = interrupt_after_nodes
        _check_checkpointer(checkpointer)
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        if isinstance(retry_policy, RetryPolicy):
            retry_policy = (retry_policy,)
        self.retry_policy: tuple[RetryPolicy, ...] = tuple(retry_policy)
        self.context_schema = context_schema
        self.config: dict[str, Any] = dict(config or {})
        self.name = name
        self.debug = debug
        self.strict = strict
        # StreamTransformer factories every stream_events(version="v3") run registers
        self.stream_transformers: tuple[Any, ...] = ()
        self.trigger_to_nodes: dict[str, list[str]] = {}
        self.node_order: dict[str, int] = {}
        self.step_scoped: tuple[str, ...] = ()
        self._build_trigger_index()
        if auto_validate:
            self.validate()

    # ----------------------------------------------------------------- structure
    def _build_trigger_index(self) -> None:
        from stategraph.pregel.algo import step_scoped_channels

        self.node_order = {name: i for i, name in enumerate(self.nodes)}
        self.step_scoped = step_scoped_channels(self.channels)
        index: dict[str, list[str]] = {}
        for name, node in self.nodes.items():
            for trig in node.triggers:
                index.setdefault(trig, []).append(name)
        self.trigger_to_nodes = index

    @property
    def stream_keys(self) -> str | Sequence[str]:
        """The channels whose values ``stream_mode="values"`` emits."""
        if self.stream_channels is not None:
            return self.stream_channels
        return [k for k in self.channels if k != TASKS and not k.startswith("__")]

    def validate(self) -> Self:
        """Check that every channel a node or the I/O refers to exists; returns self."""
        known = set(self.channels)
        for name, node in self.nodes.items():
            if node.timeout is not None and not (
                getattr(node.proc, "is_async", False) or isinstance(node.proc, Pregel)
            ):
                raise sync_timeout_error(f"Node '{name}'")
            handler = getattr(node, "error_handler", None)
            if handler is not None and handler not in self.nodes:
                raise ValueError(
                    f"Node '{name}' names '{handler}' as its error handler, which is not a "
                    "node of this graph. Add the handler node, or fix the name."
                )
            reads = [node.channels] if isinstance(node.channels, str) else node.channels
            for chan in [*node.triggers, *reads]:
                if chan not in known:
                    raise ValueError(
                        f"Node '{name}' refers to channel '{chan}', which is not declared. "
                        f"Declared channels: {', '.join(sorted(known))}."
                    )
        for label, chans in (
            ("input_channels", self.input_channels),
            ("output_channels", self.output_channels),
        ):
            for chan in [chans] if isinstance(chans, str) else chans:
                if chan not in known:
                    raise ValueError(f"{label} refers to undeclared channel '{chan}'.")
        for label, names in (
            ("interrupt_before", self.interrupt_before_nodes),
            ("interrupt_after", self.interrupt_after_nodes),
        ):
            if names == "*":
                continue
            for n in names:
                if n not in self.nodes:
                    raise ValueError(
                        f"{label} names node '{n}', which is not in the graph. "
                        f"Nodes: {', '.join(self.nodes)}."
                    )
        return self

    def copy(self, update: Mapping[str, Any] | None = None, **attrs: Any) -> Self:
        """A shallow copy with some attributes replaced.

        ``update`` maps attribute names to new values (LangGraph's form); keyword
        arguments do the same.
        """
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        if update:
            new.__dict__.update(update)
        new.__dict__.update(attrs)
        return new

    def with_config(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> Self:
        """A copy whose runs merge ``config`` (and keyword config keys) into their config."""
        return self.copy(config=_merge_configs(self.config, {**(config or {}), **kwargs}))

    def get_subgraphs(
        self, *, namespace: str | None = None, recurse: bool = False
    ) -> Iterator[tuple[str, Pregel]]:
        """Yield ``(namespace, graph)`` for each subgraph of the graph.

        ``namespace`` selects the subgraph at exactly that namespace, compared level by
        level (``"a|b"`` is the subgraph ``b`` inside the subgraph ``a``; task ids are
        ignored). ``recurse`` also yields the subgraphs of subgraphs.
        """
        head = rest = ""
        if namespace is not None:
            head, _, rest = strip_task_ids(namespace).partition(NS_SEP)
        for name, node in self.nodes.items():
            if namespace is not None and name != head:
                continue
            for sub in node.subgraphs:
                if namespace is None or not rest:
                    yield name, sub
                if recurse and (namespace is None or rest):
                    for sub_name, deeper in sub.get_subgraphs(namespace=rest or None, recurse=True):
                        yield f"{name}{NS_SEP}{sub_name}", deeper

    async def aget_subgraphs(
        self, *, namespace: str | None = None, recurse: bool = False
    ) -> AsyncIterator[tuple[str, Pregel]]:
        """Async twin of :meth:`get_subgraphs`."""
        for item in self.get_subgraphs(namespace=namespace, recurse=recurse):
            yield item

    def _cache_namespaces(self, nodes: Sequence[str] | None) -> list[tuple[str, ...]]:
        from stategraph.pregel.cache_io import CACHE_NS

        if self.cache is None:
            raise ValueError(
                "This graph has no cache: compile it with cache=InMemoryCache() (or another "
                "BaseCache) to use node caching."
            )
        names = [n for n, node in self.nodes.items() if node.cache_policy is not None]
        if nodes is not None:
            unknown = [n for n in nodes if n not in self.nodes]
            if unknown:
                raise ValueError(f"clear_cache(): unknown nodes {unknown!r}.")
            names = [n for n in names if n in nodes]
        return [(CACHE_NS, n) for n in names]

    def clear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Forget the cached results of the graph's cached nodes (or only ``nodes``)."""
        namespaces = self._cache_namespaces(nodes)
        if namespaces:
            self.cache.clear(namespaces)

    async def aclear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Async twin of :meth:`clear_cache`."""
        namespaces = self._cache_namespaces(nodes)
        if namespaces:
            await self.cache.aclear(namespaces)

    # ----------------------------------------------------------------- hooks
    def task_update(self, task: Task, keys: str | Sequence[str] | None = None) -> Any:
        """What ``stream_mode="updates"`` shows for a finished task.

        ``keys`` (a run's ``output_keys=``) limits it to those channels: one key gives
        the bare value written to it (``None`` if the task wrote none).
        """
        if task.node.metadata.get("__hidden__"):
            return NO_UPDATE
        if keys is None:
            keys = self.stream_keys
        if isinstance(keys, str):
            for chan, val in task.writes:
                if chan == keys:
                    return val
            return None
        keyset = set(keys)
        out = {c: v for c, v in task.writes if c in keyset}
        return out or None

    def command_update_writes(self, cmd: Command[Any]) -> list[tuple[str, Any]]:
        """Writes made by the ``update`` of a ``Command`` given as input."""
        return list(cmd._update_as_tuples())

    def pull_task_ids(
        self, checkpoint_id: str, checkpoint_ns: str, step: int, node: str, interrupts: int = 0
    ) -> tuple[str, list[str]] | None:
        """The id of ``node``'s task prepared from a checkpoint, and of its interrupts.

        ``step`` is the step the task runs in (the checkpoint's step + 1). Returns
        ``(task_id, [interrupt ids...])`` (``interrupts`` of them), or ``None`` for a node
        this graph does not have. The LangGraph importer uses it to key pending writes
        the way this runtime will look them up.
        """
        from stategraph.constants import PULL
        from stategraph.pregel.algo import make_task_id
        from stategraph.pregel.task import interrupt_id

        spec = self.nodes.get(node)
        if spec is None:
            return None
        task_id = make_task_id(checkpoint_id, checkpoint_ns, step, node, PULL, *spec.triggers)
        task_ns = (
            f"{checkpoint_ns}{NS_SEP}{node}:{task_id}" if checkpoint_ns else f"{node}:{task_id}"
        )
        return task_id, [interrupt_id(task_ns, i) for i in range(interrupts)]

    def check_input(self, value: Any, channels: Mapping[str, BaseChannel]) -> None:
        """Raise before the input checkpoint is saved if ``value`` cannot be applied.

        A plain ``Pregel`` writes its input to its input channels as given; a compiled
        ``StateGraph`` checks it against its reducers.
        """

    def goto_writes(self, goto: Any) -> list[tuple[str, Any]]:
        """Writes made by the ``goto`` of a ``Command`` given as input."""
        targets = goto if isinstance(goto, (list, tuple)) else [goto]
        writes: list[tuple[str, Any]] = []
        for t in targets:
            if isinstance(t, Send):
                writes.append((TASKS, t))
            elif t != END:
                raise ValueError(
                    f"Command(goto={t!r}) as input needs a StateGraph; low-level Pregel graphs "
                    "only accept Send objects."
                )
        return writes

    # ----------------------------------------------------------------- schemas
    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        """The graph's name, with ``suffix`` appended in the name's style
        (``LangGraph`` -> ``LangGraphInput``, ``my_graph`` -> ``my_graph_input``)."""
        return graph_name(name or self.name or type(self).__name__, suffix)

    @property
    def InputType(self) -> Any:
        """The type of the input value when the graph has a single input channel."""
        if isinstance(self.input_channels, str):
            channel = self.channels.get(self.input_channels)
            return None if channel is None else channel.UpdateType
        return dict

    @property
    def OutputType(self) -> Any:
        """The type of the output value when the graph has a single output channel."""
        if isinstance(self.output_channels, str):
            channel = self.channels.get(self.output_channels)
            return None if channel is None else channel.ValueType
        return dict

    def get_input_schema(self, config: Mapping[str, Any] | None = None) -> Any:
        """A pydantic model of the input: the input channel's type, or one optional
        field per input channel."""
        return io_model(self.get_name("Input"), self.channels, self.input_channels, update=True)

    def get_output_schema(self, config: Mapping[str, Any] | None = None) -> Any:
        """A pydantic model of the output: the output channel's type, or one optional
        field per output channel."""
        return io_model(self.get_name("Output"), self.channels, self.output_channels, update=False)

    @property
    def input_schema(self) -> Any:
        """The pydantic model of the graph's input (see :meth:`get_input_schema`)."""
        return self.get_input_schema()

    @property
    def output_schema(self) -> Any:
        """The pydantic model of the graph's output (see :meth:`get_output_schema`)."""
        return self.get_output_schema()

    def get_input_jsonschema(self, config: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """JSON schema of the input."""
        return cast("dict[str, Any]", self.get_input_schema(config).model_json_schema())

    def get_output_jsonschema(self, config: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """JSON schema of the output."""
        return cast("dict[str, Any]", self.get_output_schema(config).model_json_schema())

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        """JSON schema of the ``context_schema`` (``None`` when the graph has none)."""
        return context_jsonschema(self.context_schema)

    def config_schema(self, *, include: Sequence[str] | None = None) -> Any:
        """Deprecated: a model whose ``configurable`` field is the context schema.

        Use :meth:`get_context_jsonschema`.
        """
        warn_deprecated(
            LangGraphDeprecatedSinceV10,
            "`config_schema` is deprecated. Use `get_context_jsonschema` for the relevant "
            "schema instead.",
        )
        return self._config_model()

    def get_config_jsonschema(self, *, include: Sequence[str] | None = None) -> dict[str, Any]:
        """Deprecated: JSON schema of :meth:`config_schema`. Use
        :meth:`get_context_jsonschema`."""
        warn_deprecated(
            LangGraphDeprecatedSinceV10,
            "`get_config_jsonschema` is deprecated. Use `get_context_jsonschema` instead.",
        )
        return cast("dict[str, Any]", self._config_model().model_json_schema())

    def _config_model(self) -> Any:
        fields: dict[str, tuple[Any, Any]] = {}
        if self.context_schema is not None:
            fields["configurable"] = (self.context_schema, None)
        return fields_model(self.get_name("Config"), fields)

    def get_graph(
        self, config: Mapping[str, Any] | None = None, *, xray: int | bool = False
    ) -> Graph:
        """The graph's structure as a drawable :class:`~stategraph.drawing.Graph`.

        Render it with ``draw_mermaid()``, ``draw_ascii()``, ``draw_svg()`` or
        ``draw_png()``. ``xray=True`` draws subgraphs inside their nodes (an int: that
        many levels deep).
        """
        from stategraph.pregel.draw import draw_pregel

        return draw_pregel(self, xray=xray)

    async def aget_graph(
        self, config: Mapping[str, Any] | None = None, *, xray: int | bool = False
    ) -> Graph:
        """Async twin of :meth:`get_graph`."""
        return self.get_graph(config, xray=xray)

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None, **kwargs: Any
    ) -> dict[str, str]:
        """Notebook display: the graph drawn inline (SVG), with its Mermaid source."""
        from stategraph.drawing.notebook import mimebundle

        return mimebundle(self.get_graph(), title=f"{type(self).__name__} '{self.name}'")

    # ----------------------------------------------------------------- run setup
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
            ns = subgraph_namespace(parent_task.ns, parent.next_subgraph_index(), own is True)
            replay = parent_run.replay
        else:
            if own is True:
                raise RuntimeError(_ROOT_CHECKPOINTER_TRUE)
            saver = own if own not in (None, True, False) else None
            conf, replay = _entry_point(conf)
            cfg[CONF] = conf
        lease = None
        if not nested:
            from stategraph.pregel.lease_guard import lease_settings

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
            check_output_keys(self, output_keys)
        ib = self.interrupt_before_nodes if interrupt_before is None else interrupt_before
        ia = self.interrupt_after_nodes if interrupt_after is None else interrupt_after
        run = RunContext(
            graph=self,
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

    # ----------------------------------------------------------------- sync API
    def stream(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        context: Any = None,
        stream_mode: Any = None,
        output_keys: str | Sequence[str] | None = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        durability: str | None = None,
        subgraphs: bool = False,
        debug: bool | None = None,
        version: str = "v1",
        control: RunControl | None = None,
        print_mode: Any = (),
        multitask_strategy: str | None = None,
        **kwargs: Any,
    ) -> Iterator[Any]:
        """Run the graph, yielding chunks for the requested ``stream_mode`` (s).

        One mode yields its payloads; a list of modes yields ``(mode, payload)``;
        ``subgraphs=True`` prefixes a namespace tuple; ``version="v2"`` yields typed
        stream-part dicts instead. ``print_mode`` (and ``debug=True``, which prints
        ``values`` and ``updates``) prints chunks to standard output as they come.
        """
        from stategraph.observe._printing import print_chunk, print_modes
        from stategraph.pregel.sync_shell import drive_sync

        if kwargs:
            durability = _run_kwargs("stream", kwargs, durability)
        if stream_mode is None:
            stream_mode = self.stream_mode
        modes, single = self._modes(stream_mode)
        printed = print_modes(print_mode, bool(debug or self.debug), _VALID_MODES)
        chunks: queue.SimpleQueue[Any] = queue.SimpleQueue()
        loop = self._make_run(
            input,
            config,
            context=context,
            modes=modes | printed,
            sink=lambda ns, mode, payload: chunks.put((ns, mode, payload)),
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            subgraphs=subgraphs,
            control=control,
            multitask_strategy=multitask_strategy,
        )
        v2 = self._v2_parts() if version == "v2" else None
        gen = drive_sync(loop, chunks)
        try:
            for ns, mode, payload in gen:
                if mode in printed:
                    print_chunk(ns, mode, payload)
                    if mode not in modes:
                        continue
                if v2 is not None:
                    yield v2(ns, mode, payload)
                else:
                    yield _shape(ns, mode, payload, single, subgraphs)
        except GraphInterrupt as exc:
            if loop.run.nested:
                raise
            _ = exc
        except ParentCommand as exc:
            if not loop.run.nested:
                _note_no_parent(exc)
            raise

    def invoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        context: Any = None,
        stream_mode: Any = "values",
        output_keys: str | Sequence[str] | None = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        durability: str | None = None,
        version: str = "v1",
        control: RunControl | None = None,
        multitask_strategy: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run the graph to the end (or to an interrupt) and return its output.

        The output is the final value of the output channels; if the run was
        interrupted it carries the interrupts under ``"__interrupt__"``.
        ``multitask_strategy`` (``"reject"``, ``"enqueue"``, ``"interrupt"`` or
        ``"rollback"``; also a config key) says what to do when another run holds the
        thread (see ``docs/concurrency.md``).
        ``print_mode`` / ``debug=True`` print stream chunks as the run goes.
        """
        from stategraph.observe._printing import print_modes
        from stategraph.pregel.sync_shell import drive_sync

        if kwargs:
            durability = _run_kwargs("invoke", kwargs, durability)
        printed = print_modes(
            kwargs.get("print_mode", ()), bool(kwargs.get("debug") or self.debug), _VALID_MODES
        )
        if stream_mode != "values":
            # another mode, or a list of modes: the list of chunks stream() yields
            return list(
                self.stream(
                    input,
                    config,
                    context=context,
                    stream_mode=stream_mode,
                    # as for the returned value: the output channels unless told
                    output_keys=output_keys if output_keys is not None else self.output_channels,
                    interrupt_before=interrupt_before,
                    interrupt_after=interrupt_after,
                    durability=durability,
                    subgraphs=bool(kwargs.get("subgraphs")),
                    version=version,
                    control=control,
                    print_mode=kwargs.get("print_mode", ()),
                    debug=kwargs.get("debug"),
                    multitask_strategy=multitask_strategy,
                )
            )
        loop = self._make_run(
            input,
            config,
            context=context,
            modes=printed,
            sink=_printer(printed),
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            subgraphs=bool(printed and kwargs.get("subgraphs")),
            control=control,
            multitask_strategy=multitask_strategy,
        )
        gen = drive_sync(loop, None)
        interrupt: GraphInterrupt | None = None
        try:
            while True:
                next(gen)
        except StopIteration:
            pass
        except GraphInterrupt as exc:
            interrupt = exc
        except ParentCommand as exc:
            if not loop.run.nested:
                _note_no_parent(exc)
            raise
        return self._finalize(loop, interrupt, version)

    def batch(
        self,
        inputs: Sequence[Any],
        config: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Invoke the graph on each input concurrently (threads); results keep input order."""
        import contextvars
        from concurrent.futures import ThreadPoolExecutor

        configs = _configs_for(inputs, config)

        def one(args: tuple[Any, Any]) -> Any:
            inp, cfg = args
            try:
                return self.invoke(inp, cfg, **kwargs)
            except Exception as exc:
                if return_exceptions:
                    return exc
                raise

        if not inputs:
            return []
        with ThreadPoolExecutor(max_workers=min(len(inputs), 16)) as pool:
            ctx = contextvars.copy_context()
            futures = [
                pool.submit(ctx.copy().run, one, pair) for pair in zip(inputs, configs, strict=True)
            ]
            return [f.result() for f in futures]

    def map(self) -> Callable[[Sequence[Any]], list[Any]]:
        """A function that runs the graph on each item of a list, in order, and returns
        the list of outputs (LangGraph's ``Runnable.map()``; usable as a node action)."""
        graph = self

        def each(inputs: Sequence[Any]) -> list[Any]:
            return [graph.invoke(item) for item in inputs]

        each.__name__ = f"{self.name}_each"
        return each

    def batch_as_completed(
        self,
        inputs: Sequence[Any],
        config: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> Iterator[tuple[int, Any]]:
        """Like :meth:`batch`, but yield ``(index, output)`` as each run finishes."""
        import contextvars
        from concurrent.futures import ThreadPoolExecutor, as_completed

        if not inputs:
            return
        configs = _configs_for(inputs, config)

        def one(i: int, inp: Any, cfg: Any) -> tuple[int, Any]:
            try:
                return i, self.invoke(inp, cfg, **kwargs)
            except Exception as exc:
                if return_exceptions:
                    return i, exc
                raise

        with ThreadPoolExecutor(max_workers=min(len(inputs), 16)) as pool:
            ctx = contextvars.copy_context()
            futures = [
                pool.submit(ctx.copy().run, one, i, inp, cfg)
                for i, (inp, cfg) in enumerate(zip(inputs, configs, strict=True))
            ]
            for future in as_completed(futures):
                yield future.result()

    # ----------------------------------------------------------------- async API
    async def astream(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        context: Any = None,
        stream_mode: Any = None,
        output_keys: str | Sequence[str] | None = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        durability: str | None = None,
        subgraphs: bool = False,
        debug: bool | None = None,
        version: str = "v1",
        control: RunControl | None = None,
        print_mode: Any = (),
        multitask_strategy: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """Async twin of :meth:`stream`."""
        import asyncio
        import threading

        from stategraph.observe._printing import print_chunk, print_modes
        from stategraph.pregel.async_shell import drive_async

        if kwargs:
            durability = _run_kwargs("stream", kwargs, durability)
        if stream_mode is None:
            stream_mode = self.stream_mode
        modes, single = self._modes(stream_mode)
        printed = print_modes(print_mode, bool(debug or self.debug), _VALID_MODES)
        chunks: asyncio.Queue[Any] = asyncio.Queue()
        aloop = asyncio.get_running_loop()
        loop_thread = threading.get_ident()

        def sink(ns: tuple[str, ...], mode: str, payload: Any) -> None:
            if threading.get_ident() == loop_thread:
                chunks.put_nowait((ns, mode, payload))
            else:
                aloop.call_soon_threadsafe(chunks.put_nowait, (ns, mode, payload))

        loop = self._make_run(
            input,
            config,
            context=context,
            modes=modes | printed,
            sink=sink,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            subgraphs=subgraphs,
            control=control,
            multitask_strategy=multitask_strategy,
        )
        v2 = self._v2_parts() if version == "v2" else None
        try:
            async for ns, mode, payload in drive_async(loop, chunks):
                if mode in printed:
                    print_chunk(ns, mode, payload)
                    if mode not in modes:
                        continue
                if v2 is not None:
                    yield v2(ns, mode, payload)
                else:
                    yield _shape(ns, mode, payload, single, subgraphs)
        except GraphInterrupt:
            if loop.run.nested:
                raise
        except ParentCommand as exc:
            if not loop.run.nested:
                _note_no_parent(exc)
            raise

    async def ainvoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        context: Any = None,
        stream_mode: Any = "values",
        output_keys: str | Sequence[str] | None = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        durability: str | None = None,
        version: str = "v1",
        control: RunControl | None = None,
        multitask_strategy: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Async twin of :meth:`invoke`."""
        from stategraph.observe._printing import print_modes
        from stategraph.pregel.async_shell import drive_async

        if kwargs:
            durability = _run_kwargs("invoke", kwargs, durability)
        printed = print_modes(
            kwargs.get("print_mode", ()), bool(kwargs.get("debug") or self.debug), _VALID_MODES
        )
        if stream_mode != "values":
            # another mode, or a list of modes: the list of chunks astream() yields
            return [
                chunk
                async for chunk in self.astream(
                    input,
                    config,
                    context=context,
                    stream_mode=stream_mode,
                    # as for the returned value: the output channels unless told
                    output_keys=output_keys if output_keys is not None else self.output_channels,
                    interrupt_before=interrupt_before,
                    interrupt_after=interrupt_after,
                    durability=durability,
                    subgraphs=bool(kwargs.get("subgraphs")),
                    version=version,
                    control=control,
                    print_mode=kwargs.get("print_mode", ()),
                    debug=kwargs.get("debug"),
                    multitask_strategy=multitask_strategy,
                )
            ]
        loop = self._make_run(
            input,
            config,
            context=context,
            modes=printed,
            sink=_printer(printed),
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            subgraphs=bool(printed and kwargs.get("subgraphs")),
            control=control,
            multitask_strategy=multitask_strategy,
        )
        interrupt: GraphInterrupt | None = None
        try:
            async for _ in drive_async(loop, None):
                pass
        except GraphInterrupt as exc:
            interrupt = exc
        except ParentCommand as exc:
            if not loop.run.nested:
                _note_no_parent(exc)
            raise
        return self._finalize(loop, interrupt, version)

    # ----------------------------------------------------------------- events
    def stream_events(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        version: str = "v2",
        transformers: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Stream the run as events.

        ``version="v3"`` returns a :class:`~stategraph.stream.GraphRunStream` (run
        object with typed projections; ``transformers`` adds projections). ``"v2"``
        and ``"v1"`` iterate LangChain-style event dicts (``on_chain_start``, ...),
        as :meth:`astream_events` does, from synchronous code.
        """
        if version == "v3":
            from stategraph.observe._stream_v3 import stream_v3

            return stream_v3(self, input, config, transformers, kwargs)
        from stategraph.observe._events import stream_events

        return stream_events(self, input, config, version, transformers, kwargs)

    def astream_events(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        version: str = "v2",
        transformers: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Async event stream: ``version="v2"`` (or ``"v1"``) is an async iterator of
        LangChain-style event dicts (``async for event in graph.astream_events(...)``);
        ``version="v3"`` is awaited and returns an
        :class:`~stategraph.stream.AsyncGraphRunStream`."""
        if version == "v3":
            from stategraph.observe._stream_v3 import astream_v3

            return astream_v3(self, input, config, transformers, kwargs)
        from stategraph.observe._events import astream_events

        return astream_events(self, input, config, version, transformers, kwargs)

    async def abatch_as_completed(
        self,
        inputs: Sequence[Any],
        config: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> AsyncIterator[tuple[int, Any]]:
        """Like :meth:`abatch`, but yield ``(index, output)`` as each run finishes."""
        import asyncio

        configs = _configs_for(inputs, config)

        async def one(i: int, inp: Any, cfg: Any) -> tuple[int, Any]:
            try:
                return i, await self.ainvoke(inp, cfg, **kwargs)
            except Exception as exc:
                if return_exceptions:
                    return i, exc
                raise

        pending = [
            asyncio.ensure_future(one(i, inp, cfg))
            for i, (inp, cfg) in enumerate(zip(inputs, configs, strict=True))
        ]
        try:
            for next_done in asyncio.as_completed(pending):
                yield await next_done
        finally:
            for fut in pending:
                fut.cancel()

    async def abatch(
        self,
        inputs: Sequence[Any],
        config: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Async twin of :meth:`batch` (runs the inputs concurrently as asyncio tasks)."""
        import asyncio

        configs = _configs_for(inputs, config)
        return list(
            await asyncio.gather(
                *(self.ainvoke(i, c, **kwargs) for i, c in zip(inputs, configs, strict=True)),
                return_exceptions=return_exceptions,
            )
        )


_ROOT_CHECKPOINTER_TRUE = (
    "checkpointer=True cannot be used for root graphs: it makes a subgraph keep its own "
    "history in the checkpointer of the graph that runs it. Compile the graph you invoke "
    "with a saver, e.g. builder.compile(checkpointer=InMemorySaver()), and use "
    "checkpointer=True only for graphs added as nodes (or called inside nodes)."
)


def subgraph_namespace(task_ns: str, index: int, stateful: bool) -> str:
    """Checkpoint namespace of the ``index``-th graph a task runs.

    The first graph a node runs uses the task's namespace (``node:<task id>``); later
    ones append their number (``node:<task id>|1``). A graph compiled with
    ``checkpointer=True`` drops the task ids, so it finds its state again in every run.
    """
    ns = task_ns if index == 0 else f"{task_ns}{NS_SEP}{index}"
    return strip_task_ids(ns) if stateful else ns


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


_EXTRA_RUN_KWARGS = {
    "invoke": frozenset({"print_mode", "debug", "subgraphs", "checkpoint_during"}),
    "stream": frozenset({"checkpoint_during"}),
}


def _run_kwargs(method: str, kwargs: Mapping[str, Any], durability: str | None) -> str | None:
    """Reject keyword arguments ``method`` does not take; returns the durability.

    LangGraph's deprecated ``checkpoint_during`` is accepted with a warning (``True``
    means durability ``"async"``, ``False`` ``"exit"``).
    """
    unknown = [k for k in kwargs if k not in _EXTRA_RUN_KWARGS[method]]
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        raise TypeError(
            f"{method}() got unexpected keyword argument(s) {names}. Check the spelling; "
            f"see help(Pregel.{method}) for the accepted arguments."
        )
    during = kwargs.get("checkpoint_during")
    if during is not None:
        warn_deprecated(
            LangGraphDeprecatedSinceV10,
            "`checkpoint_during` is deprecated and will be removed. Please use `durability` "
            "instead.",
            stacklevel=4,
        )
        if durability is None:
            durability = "async" if during else "exit"
    return durability


def _configs_for(inputs: Sequence[Any], config: Any) -> list[Any]:
    if isinstance(config, (list, tuple)):
        if len(config) != len(inputs):
            raise ValueError(
                f"batch() got {len(inputs)} inputs but {len(config)} configs; pass one config "
                "or one per input."
            )
        return list(config)
    return [config] * len(inputs)


def _shape(ns: tuple[str, ...], mode: str, payload: Any, single: bool, subgraphs: bool) -> Any:
    """A ``version="v1"`` chunk: the payload, with its mode and namespace as asked."""
    if single:
        return (ns, payload) if subgraphs else payload
    return (ns, mode, payload) if subgraphs else (mode, payload)


def _check_checkpointer(checkpointer: Any) -> None:
    """Reject a checkpointer that is not a saver (or None/True/False) when compiling."""
    if checkpointer is None or isinstance(checkpointer, bool):
        return
    from stategraph.checkpoint.base import BaseCheckpointSaver

    if not isinstance(checkpointer, BaseCheckpointSaver):
        raise TypeError(
            f"Invalid checkpointer provided: {checkpointer!r} is not a BaseCheckpointSaver. "
            "Pass a saver such as InMemorySaver() or SqliteSaver, True (a subgraph saves "
            "with its parent's saver), False or None."
        )


def _max_concurrency(cfg: Mapping[str, Any]) -> int:
    """Check ``config["max_concurrency"]`` before the run starts."""
    value = cfg["max_concurrency"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(
            f"max_concurrency must be a positive integer (the most tasks of one step run "
            f'at once), got {value!r}. Pass e.g. config={{"max_concurrency": 4}}, or leave '
            "it out for no limit."
        )
    return value


def _use_executor(run: RunContext, cfg: Mapping[str, Any], default: Any) -> None:
    """Give ``run`` its executor: ``config["executor"]`` (checked) or the graph's.

    A remote one gets the node calls; an in-process one only bounds how many tasks of
    a step run at once (its ``max_workers``, with ``max_concurrency``).
    """
    from stategraph.executors.base import check_executor
    from stategraph.pregel.remote_tasks import remote_for

    executor = (
        check_executor(cfg["executor"], 'config["executor"]') if "executor" in cfg else default
    )
    if executor is None:
        return
    run.remote = remote_for(executor)
    limit = executor.max_workers
    if limit is not None:
        run.max_concurrency = min(limit, run.max_concurrency or limit)


def _server_info(conf: Mapping[str, Any]) -> ServerInfo | None:
    """``ServerInfo`` from the keys a server puts in ``configurable`` (None without them)."""
    assistant_id = conf.get("assistant_id")
    graph_id = conf.get("graph_id")
    if assistant_id is None and graph_id is None:
        return None
    return ServerInfo(
        assistant_id=str(assistant_id) if assistant_id is not None else "",
        graph_id=str(graph_id) if graph_id is not None else "",
        user=conf.get("langgraph_auth_user"),
    )


def _note_no_parent(exc: ParentCommand) -> None:
    """Explain a ``Command(graph=PARENT)`` that reached the caller (as in LangGraph, the
    ``ParentCommand`` itself is raised, carrying the command)."""
    add_note(
        exc,
        "A node returned Command(graph=Command.PARENT, ...) but this graph has no parent "
        "graph. Use Command.PARENT only in nodes of a graph that runs as a subgraph.",
    )


def _printer(printed: frozenset[str]) -> Any:
    """The sink of an ``invoke`` that prints chunks (``None`` when nothing is printed)."""
    if not printed:
        return None
    from stategraph.observe._printing import print_chunk

    return print_chunk
