"""What a compiled graph is: :class:`PregelBase` holds the nodes and channels, builds
the trigger index, validates, copies, and answers the loop's questions about the graph
(the hooks ``task_update``, ``command_update_writes``, ``pull_task_ids``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from typing_extensions import Self

from stategraph.channels.base import BaseChannel
from stategraph.constants import END, NS_SEP, TASKS
from stategraph.errors import sync_timeout_error
from stategraph.pregel._io import NO_UPDATE
from stategraph.pregel._pregel.config import _check_checkpointer, _merge_configs
from stategraph.pregel._pregel.marker import GraphMarker
from stategraph.pregel._task import Task
from stategraph.pregel.node import NodeBuilder, PregelNode
from stategraph.types import Command, RetryPolicy, Send
from stategraph.warnings import LangGraphDeprecatedSinceV10, warn_deprecated


class PregelBase(GraphMarker):
    """The structure of a :class:`~stategraph.pregel.Pregel` graph and the hooks the loop calls."""

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
        # per node, the part of its pull task's id key that is the same in every step
        self.pull_id_keys: dict[str, str] = {}
        self.step_scoped: tuple[str, ...] = ()
        self._build_trigger_index()
        if auto_validate:
            self.validate()

    def _build_trigger_index(self) -> None:
        from stategraph._task_ids import task_id_key
        from stategraph.constants import PULL
        from stategraph.pregel._algo import step_scoped_channels

        self.node_order = {name: i for i, name in enumerate(self.nodes)}
        self.step_scoped = step_scoped_channels(self.channels)
        index: dict[str, list[str]] = {}
        for name, node in self.nodes.items():
            for trig in node.triggers:
                index.setdefault(trig, []).append(name)
        self.trigger_to_nodes = index
        self.pull_id_keys = {
            name: task_id_key((name, PULL, *node.triggers)) for name, node in self.nodes.items()
        }

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
                getattr(node.proc, "is_async", False) or isinstance(node.proc, PregelBase)
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

    def _cache_namespaces(self, nodes: Sequence[str] | None) -> list[tuple[str, ...]]:
        from stategraph.pregel._cache_io import CACHE_NS

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
        from stategraph.pregel._algo import make_task_id
        from stategraph.pregel._task import interrupt_id

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
