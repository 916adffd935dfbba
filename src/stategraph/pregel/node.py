"""``PregelNode`` (a compiled node) and ``NodeBuilder`` (the low-level way to make one)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stategraph.pregel._call import NodeCall, make_call
from stategraph.pregel._node_alone import NO_RESUME
from stategraph.types import CachePolicy, RetryPolicy, TimeoutPolicy, TracePolicy

if TYPE_CHECKING:
    from stategraph.pregel._task import Task

__all__ = ["PregelNode", "NodeBuilder", "ChannelWrite", "Writer"]

Writer = Callable[["Task", Any], None]
"""Turns a node's output into writes: ``writer(task, output)`` appends to ``task.writes``."""

_SKIP = object()


class ChannelWrite:
    """Writer that sends the node's output (optionally mapped) to one channel.

    ``None`` outputs are skipped unless ``skip_none=False``.
    """

    __slots__ = ("channel", "mapper", "skip_none")

    def __init__(
        self,
        channel: str,
        mapper: Callable[[Any], Any] | None = None,
        *,
        skip_none: bool = True,
    ) -> None:
        self.channel = channel
        self.mapper = mapper
        self.skip_none = skip_none

    def __call__(self, task: Task, output: Any) -> None:
        value = self.mapper(output) if self.mapper is not None else output
        if value is None and self.skip_none:
            return
        task.writes.append((self.channel, value))

    def __repr__(self) -> str:
        return f"ChannelWrite({self.channel!r})"


class PregelNode:
    """A node of the runtime: what triggers it, what it reads, what it runs, where it writes.

    ``channels`` is either one channel name (the node receives that channel's value) or
    a list of names (the node receives a dict of the available ones, passed through
    ``mapper`` when set). ``proc`` is a :class:`~stategraph.pregel._call.NodeCall` or a
    compiled graph (a subgraph). ``writers`` turn the output into channel writes.
    """

    # the kind of node LangGraph's graph JSON reports for a function node
    __drawing_kind__ = ("langgraph", "_internal", "_runnable", "RunnableCallable")

    __slots__ = (
        "cache_policy",
        "channels",
        "defer",
        "error_handler",
        "is_async",
        "managed",
        "mapper",
        "metadata",
        "name",
        "proc",
        "retry_policy",
        "subgraphs",
        "tags",
        "timeout",
        "trace_policy",
        "triggers",
        "writers",
    )

    def __init__(
        self,
        *,
        channels: str | Sequence[str],
        triggers: Sequence[str],
        proc: Any,
        writers: Sequence[Writer] = (),
        mapper: Callable[[Any], Any] | None = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        cache_policy: CachePolicy | None = None,
        timeout: TimeoutPolicy | None = None,
        metadata: dict[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        subgraphs: Sequence[Any] = (),
        managed: dict[str, Any] | None = None,
        defer: bool = False,
        name: str = "",
        error_handler: str | None = None,
        trace_policy: TracePolicy | None = None,
    ) -> None:
        self.name = name
        self.error_handler = error_handler
        # name of the node that handles this node's failures (None: no handler)
        self.channels = channels if isinstance(channels, str) else list(channels)
        self.triggers = list(triggers)
        self.mapper = mapper
        self.proc = proc
        self.writers = list(writers)
        if isinstance(retry_policy, RetryPolicy):
            retry_policy = (retry_policy,)
        self.retry_policy: tuple[RetryPolicy, ...] = tuple(retry_policy or ())
        self.cache_policy = cache_policy
        self.timeout = timeout
        self.metadata = metadata or {}
        self.tags = list(tags or ())
        self.subgraphs = list(subgraphs)
        if not self.subgraphs and _is_graph(proc):
            self.subgraphs = [proc]
        self.is_async = bool(getattr(proc, "is_async", False))
        self.managed = managed or {}
        self.defer = defer
        self.trace_policy = trace_policy

    def __repr__(self) -> str:
        return f"PregelNode({self.name!r}, triggers={self.triggers!r})"

    def copy(self, update: Mapping[str, Any] | None = None) -> PregelNode:
        """A shallow copy with the attributes in ``update`` replaced."""
        new = object.__new__(type(self))
        for attr in self.__slots__:
            setattr(new, attr, getattr(self, attr))
        for attr, value in (update or {}).items():
            if attr not in self.__slots__:
                raise ValueError(
                    f"PregelNode.copy(): '{attr}' is not an attribute of a node. Attributes: "
                    f"{', '.join(self.__slots__)}."
                )
            setattr(new, attr, value)
        return new

    def invoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        context: Any = None,
        store: Any = None,
        resume: Any = NO_RESUME,
        resumes: Sequence[Any] | None = None,
    ) -> Any:
        """Run this node's function alone on ``input`` and return what it returns.

        The way to unit-test one node: ``graph.nodes["review"].invoke(state)``. The
        input is mapped to the node's schema, ``config``, ``context`` and ``store``
        reach the function as in a run, and ``interrupt()`` raises
        :class:`~stategraph.errors.GraphInterrupt` unless ``resume`` (or ``resumes``,
        one answer per ``interrupt()`` call) answers it. No edge is followed and
        nothing is saved. Async nodes need :meth:`ainvoke`.
        """
        from stategraph.pregel._node_alone import call_sync, prepare_alone

        return call_sync(
            prepare_alone(
                self, input, config, context=context, store=store, resume=resume, resumes=resumes
            )
        )

    async def ainvoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        context: Any = None,
        store: Any = None,
        resume: Any = NO_RESUME,
        resumes: Sequence[Any] | None = None,
    ) -> Any:
        """Async twin of :meth:`invoke` (runs sync and async nodes alike)."""
        from stategraph.pregel._node_alone import call_async, prepare_alone

        return await call_async(
            prepare_alone(
                self, input, config, context=context, store=store, resume=resume, resumes=resumes
            )
        )


def _is_graph(obj: Any) -> bool:
    from stategraph.pregel._pregel.marker import GraphMarker

    return isinstance(obj, GraphMarker)


class NodeBuilder:
    """Fluent builder of a low-level :class:`PregelNode`.

    Example::

        node = NodeBuilder().subscribe_only("a").do(lambda x: x + x).write_to("b")
    """

    def __init__(self) -> None:
        self._channels: str | list[str] = []
        self._triggers: list[str] = []
        self._procs: list[Callable[..., Any]] = []
        self._writers: list[Writer] = []
        self._retry: tuple[RetryPolicy, ...] = ()
        self._cache: CachePolicy | None = None
        self._meta: dict[str, Any] = {}
        self._tags: list[str] = []
        self._timeout: TimeoutPolicy | None = None

    def subscribe_only(self, channel: str) -> NodeBuilder:
        """Trigger on ``channel`` and receive its value (not a dict) as input."""
        if self._channels:
            raise ValueError(
                "subscribe_only() must be the only subscription of a node; "
                f"it already reads {self._channels!r}."
            )
        self._channels = channel
        self._triggers.append(channel)
        return self

    def subscribe_to(self, *channels: str, read: bool = True) -> NodeBuilder:
        """Trigger on each of ``channels`` and (unless ``read=False``) receive them in a dict."""
        if isinstance(self._channels, str):
            raise ValueError(
                f"Cannot subscribe_to() after subscribe_only({self._channels!r}); use one or the other."
            )
        if read:
            self._channels.extend(c for c in channels if c not in self._channels)
        self._triggers.extend(c for c in channels if c not in self._triggers)
        return self

    def read_from(self, *channels: str) -> NodeBuilder:
        """Also receive ``channels`` in the input dict, without being triggered by them."""
        if isinstance(self._channels, str):
            raise ValueError(
                f"Cannot read_from() after subscribe_only({self._channels!r}); use subscribe_to()."
            )
        self._channels.extend(c for c in channels if c not in self._channels)
        return self

    def do(self, func: Callable[..., Any]) -> NodeBuilder:
        """Add a function to run; several ``do()`` calls form a sequence."""
        self._procs.append(func)
        return self

    def write_to(self, *channels: str, **mapped: Callable[[Any], Any] | Any) -> NodeBuilder:
        """Write the output to ``channels``; ``name=func`` writes ``func(output)`` to ``name``,
        ``name=value`` writes a constant."""
        for ch in channels:
            self._writers.append(ChannelWrite(ch, skip_none=False))
        for ch, m in mapped.items():
            if callable(m):
                self._writers.append(ChannelWrite(ch, m, skip_none=False))
            else:
                self._writers.append(ChannelWrite(ch, _const(m), skip_none=False))
        return self

    def add_retry_policies(self, *policies: RetryPolicy) -> NodeBuilder:
        """Retry the node according to ``policies`` (the first matching one applies)."""
        self._retry = self._retry + policies
        return self

    def add_cache_policy(self, policy: CachePolicy) -> NodeBuilder:
        """Cache the node's writes per ``policy``."""
        self._cache = policy
        return self

    def set_timeout(self, timeout: float | TimeoutPolicy | None) -> NodeBuilder:
        """Limit each attempt of the node (seconds, or a :class:`TimeoutPolicy`; async only)."""
        if timeout is not None and not isinstance(timeout, TimeoutPolicy):
            timeout = TimeoutPolicy(run_timeout=timeout)
        self._timeout = timeout
        return self

    def meta(self, *tags: str, **metadata: Any) -> NodeBuilder:
        """Attach tags and metadata to the node."""
        self._tags.extend(tags)
        self._meta.update(metadata)
        return self

    def build(self, name: str = "") -> PregelNode:
        """Return the :class:`PregelNode` (``Pregel`` calls this for builders it is given)."""
        if not self._triggers:
            raise ValueError(
                f"Node '{name}' subscribes to no channel: call subscribe_only() or subscribe_to()."
            )
        procs = list(self._procs)
        if not procs:
            proc: Any = make_call(_identity, name)
        elif len(procs) == 1:
            proc = procs[0] if _is_graph(procs[0]) else make_call(procs[0], name)
        else:
            proc = make_call(_Sequence([make_call(p, name) for p in procs]), name)
        return PregelNode(
            channels=self._channels,
            triggers=self._triggers,
            proc=proc,
            writers=self._writers,
            retry_policy=self._retry,
            cache_policy=self._cache,
            metadata=self._meta,
            tags=self._tags,
            timeout=self._timeout,
            name=name,
        )


def _identity(x: Any) -> Any:
    return x


def _const(value: Any) -> Callable[[Any], Any]:
    def constant(_output: Any) -> Any:
        return value

    return constant


class _Sequence:
    """Runs several sync calls one after another, feeding each the previous output."""

    def __init__(self, calls: list[NodeCall]) -> None:
        if any(c.is_async for c in calls):
            raise TypeError("NodeBuilder.do() sequences must be all-sync functions.")
        self.calls = calls

    def __call__(self, value: Any, config: Any = None) -> Any:
        from stategraph._context import current_task

        ctx = current_task("a node sequence")
        for call in self.calls:
            value = call(value, ctx)
        return value
