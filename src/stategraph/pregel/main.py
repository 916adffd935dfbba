"""``Pregel``: the compiled, runnable graph (``invoke``, ``stream`` and friends)."""

from __future__ import annotations

import queue
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

from stategraph._context import CURRENT_TASK
from stategraph.channels.base import BaseChannel
from stategraph.constants import CONF, END, INTERRUPT, NS_END, NS_SEP, TASKS
from stategraph.errors import GraphInterrupt, ParentCommand
from stategraph.pregel.io import NO_UPDATE
from stategraph.pregel.loop import Loop
from stategraph.pregel.node import NodeBuilder, PregelNode
from stategraph.pregel.run import RunContext
from stategraph.pregel.state import StateMixin
from stategraph.pregel.task import ResumeState, Task
from stategraph.runtime import DEFAULT_RUNTIME, Runtime
from stategraph.types import Command, RetryPolicy, Send

__all__ = ["Pregel", "DEFAULT_RECURSION_LIMIT"]

DEFAULT_RECURSION_LIMIT = 10007
_VALID_MODES = frozenset(
    {"values", "updates", "checkpoints", "tasks", "debug", "messages", "custom"}
)
_DURABILITY = ("sync", "async", "exit")


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


class Pregel(StateMixin):
    """A graph of nodes exchanging values through channels, run in super-steps.

    Build one directly from :class:`PregelNode` s (or :class:`NodeBuilder` s) and
    channels, or get one from ``StateGraph.compile()``.
    """

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
    ) -> None:
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

    def validate(self) -> Pregel:
        """Check that every channel a node or the I/O refers to exists; returns self."""
        known = set(self.channels)
        for name, node in self.nodes.items():
            if node.timeout is not None and not (
                getattr(node.proc, "is_async", False) or isinstance(node.proc, Pregel)
            ):
                raise ValueError(
                    f"Node '{name}' has a timeout but is synchronous; timeouts are supported "
                    "for async nodes only (a running thread cannot be stopped safely)."
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

    def copy(self, **update: Any) -> Pregel:
        """A shallow copy with some attributes replaced."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.__dict__.update(update)
        return new

    def with_config(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> Pregel:
        """A copy whose runs merge ``config`` (and keyword config keys) into their config."""
        return self.copy(config=_merge_configs(self.config, {**(config or {}), **kwargs}))

    def get_subgraphs(
        self, *, namespace: str | None = None, recurse: bool = False
    ) -> Iterator[tuple[str, Pregel]]:
        """Yield ``(name, graph)`` for each subgraph node (optionally only ``namespace``)."""
        for name, node in self.nodes.items():
            for sub in node.subgraphs:
                if namespace is not None and name != namespace.split(NS_SEP)[0]:
                    continue
                yield name, sub
                if recurse:
                    for sub_name, deeper in sub.get_subgraphs(recurse=True):
                        yield f"{name}{NS_SEP}{sub_name}", deeper

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
    def task_update(self, task: Task) -> Any:
        """What ``stream_mode="updates"`` shows for a finished task."""
        if task.node.metadata.get("__hidden__"):
            return NO_UPDATE
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

    @property
    def input_schema(self) -> Any:
        """The input type of the graph (dict of input channels for low-level graphs)."""
        return dict

    @property
    def output_schema(self) -> Any:
        """The output type of the graph."""
        return dict

    def get_input_jsonschema(self) -> dict[str, Any]:
        """JSON schema of the input."""
        return {"title": f"{self.name}Input", "type": "object"}

    def get_output_jsonschema(self) -> dict[str, Any]:
        """JSON schema of the output."""
        return {"title": f"{self.name}Output", "type": "object"}

    def get_graph(
        self, config: Mapping[str, Any] | None = None, *, xray: int | bool = False
    ) -> Any:
        """A drawable view of the graph (``draw_mermaid()``, ``draw_ascii()``)."""
        from stategraph.pregel.draw import draw_pregel

        return draw_pregel(self, xray=xray)

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
    ) -> Loop:
        cfg = _merge_configs(self.config, config)
        parent = CURRENT_TASK.get()
        parent_run: RunContext | None = None
        parent_task: Task | None = None
        if parent is not None and isinstance(parent.run, tuple):
            parent_run, parent_task = parent.run
        conf = dict(cfg.get(CONF) or {})
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
        if nested:
            assert parent_run is not None and parent_task is not None
            if own is False:
                saver = None
            elif own is None or own is True:
                saver = parent_run.checkpointer
            else:
                saver = own
            ns = parent_task.ns
            if own is True:
                ns = NS_SEP.join(part.split(NS_END)[0] for part in ns.split(NS_SEP))
        else:
            saver = own if own not in (None, True, False) else None
            ns = conf.get("checkpoint_ns", "") or ""
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
        if context is not None or store is not base_runtime.store:
            base_runtime = base_runtime.override(
                context=context if context is not None else base_runtime.context, store=store
            )
        if parent_run is not None and parent_task is not None:
            stream_ns = (*parent_run.stream_ns, parent_task.ns.split(NS_SEP)[-1])
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
            stream_keys=self.stream_keys,
            max_concurrency=cfg.get("max_concurrency"),
            run_id=str(cfg["run_id"]) if cfg.get("run_id") is not None else None,
        )
        run.configurable = conf
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
        from stategraph.types import GraphOutput

        if isinstance(out, dict) and INTERRUPT in out:
            out = dict(out)
            return GraphOutput(value=out, interrupts=tuple(out.pop(INTERRUPT)))
        return GraphOutput(value=out, interrupts=())

    def _output(self, loop: Loop, exc: GraphInterrupt | None) -> Any:
        if not loop.output_written and not loop.interrupts:
            # nothing was ever written to the output channels during this run
            return None
        if exc is None:
            return loop.output
        if loop.run.nested:
            raise exc
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
        **kwargs: Any,
    ) -> Iterator[Any]:
        """Run the graph, yielding chunks for the requested ``stream_mode`` (s).

        One mode yields its payloads; a list of modes yields ``(mode, payload)``;
        ``subgraphs=True`` prefixes a namespace tuple; ``version="v2"`` yields typed
        stream-part dicts instead.
        """
        from stategraph.pregel.sync_shell import drive_sync

        if stream_mode is None:
            stream_mode = ["debug"] if (debug or self.debug) else self.stream_mode
        modes, single = self._modes(stream_mode)
        chunks: queue.SimpleQueue[Any] = queue.SimpleQueue()
        loop = self._make_run(
            input,
            config,
            context=context,
            modes=modes,
            sink=lambda ns, mode, payload: chunks.put((ns, mode, payload)),
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            subgraphs=subgraphs,
        )
        gen = drive_sync(loop, chunks)
        try:
            for ns, mode, payload in gen:
                yield _shape(ns, mode, payload, single, subgraphs, version)
        except GraphInterrupt as exc:
            if loop.run.nested:
                raise
            _ = exc
        except ParentCommand:
            raise _no_parent_error() from None

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
        **kwargs: Any,
    ) -> Any:
        """Run the graph to the end (or to an interrupt) and return its output.

        The output is the final value of the output channels; if the run was
        interrupted it carries the interrupts under ``"__interrupt__"``.
        """
        from stategraph.pregel.sync_shell import drive_sync

        if stream_mode != "values":
            return self._invoke_via_stream(
                input,
                config,
                context,
                stream_mode,
                output_keys,
                interrupt_before,
                interrupt_after,
                durability,
            )
        loop = self._make_run(
            input,
            config,
            context=context,
            modes=frozenset(),
            sink=None,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            subgraphs=False,
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
        except ParentCommand:
            if loop.run.nested:
                raise
            raise _no_parent_error() from None
        return self._finalize(loop, interrupt, version)

    def _invoke_via_stream(
        self,
        input: Any,
        config: Any,
        context: Any,
        stream_mode: Any,
        output_keys: Any,
        ib: Any,
        ia: Any,
        durability: Any,
    ) -> Any:
        chunks = []
        latest: Any = None
        for mode, chunk in self.stream(
            input,
            config,
            context=context,
            stream_mode=["values", stream_mode],
            output_keys=output_keys,
            interrupt_before=ib,
            interrupt_after=ia,
            durability=durability,
        ):
            if mode == "values":
                latest = chunk
            if mode == stream_mode:
                chunks.append(chunk)
        return chunks if stream_mode != "values" else latest

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
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """Async twin of :meth:`stream`."""
        import asyncio
        import threading

        from stategraph.pregel.async_shell import drive_async

        if stream_mode is None:
            stream_mode = ["debug"] if (debug or self.debug) else self.stream_mode
        modes, single = self._modes(stream_mode)
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
            modes=modes,
            sink=sink,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            subgraphs=subgraphs,
        )
        try:
            async for ns, mode, payload in drive_async(loop, chunks):
                yield _shape(ns, mode, payload, single, subgraphs, version)
        except GraphInterrupt:
            if loop.run.nested:
                raise
        except ParentCommand:
            raise _no_parent_error() from None

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
        **kwargs: Any,
    ) -> Any:
        """Async twin of :meth:`invoke`."""
        from stategraph.pregel.async_shell import drive_async

        if stream_mode != "values":
            chunks = []
            async for mode, chunk in self.astream(
                input,
                config,
                context=context,
                stream_mode=["values", stream_mode],
                output_keys=output_keys,
                interrupt_before=interrupt_before,
                interrupt_after=interrupt_after,
                durability=durability,
            ):
                if mode == stream_mode:
                    chunks.append(chunk)
            return chunks
        loop = self._make_run(
            input,
            config,
            context=context,
            modes=frozenset(),
            sink=None,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            subgraphs=False,
        )
        interrupt: GraphInterrupt | None = None
        try:
            async for _ in drive_async(loop, None):
                pass
        except GraphInterrupt as exc:
            interrupt = exc
        except ParentCommand:
            if loop.run.nested:
                raise
            raise _no_parent_error() from None
        return self._finalize(loop, interrupt, version)

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


def parent_run_checkpoint_id(run: RunContext) -> str:
    """The checkpoint id the parent graph's current step started from."""
    return str(run.loop.checkpoint_id) if run.loop is not None else ""


def _configs_for(inputs: Sequence[Any], config: Any) -> list[Any]:
    if isinstance(config, (list, tuple)):
        if len(config) != len(inputs):
            raise ValueError(
                f"batch() got {len(inputs)} inputs but {len(config)} configs; pass one config "
                "or one per input."
            )
        return list(config)
    return [config] * len(inputs)


def _shape(
    ns: tuple[str, ...], mode: str, payload: Any, single: bool, subgraphs: bool, version: str
) -> Any:
    if version == "v2":
        part: dict[str, Any] = {"type": mode, "ns": ns, "data": payload}
        if mode == "values":
            interrupts: tuple[Any, ...] = ()
            if isinstance(payload, dict) and INTERRUPT in payload:
                interrupts = tuple(payload[INTERRUPT])
                part["data"] = {k: v for k, v in payload.items() if k != INTERRUPT}
            part["interrupts"] = interrupts
        return part
    if single:
        return (ns, payload) if subgraphs else payload
    return (ns, mode, payload) if subgraphs else (mode, payload)


def _no_parent_error() -> RuntimeError:
    return RuntimeError(
        "A node returned Command(graph=Command.PARENT, ...) but this graph has no parent "
        "graph. Use Command.PARENT only in nodes of a graph that runs as a subgraph."
    )
