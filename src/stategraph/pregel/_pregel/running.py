"""Running a graph: ``invoke``, ``stream``, ``batch`` and their async twins, and
``stream_events``; each sets up a run and hands its loop to a shell.
"""

from __future__ import annotations

import queue
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from stategraph._notes import add_note
from stategraph.errors import GraphInterrupt, ParentCommand
from stategraph.pregel._pregel.config import _VALID_MODES, _configs_for, _run_kwargs
from stategraph.pregel._pregel.setup import RunSetupMixin
from stategraph.runtime import RunControl

if TYPE_CHECKING:
    from stategraph.observe._typed_output import V2Parts
    from stategraph.pregel._loop.drive import Loop
    from stategraph.pregel.main import Pregel


class RunMixin(RunSetupMixin):
    """The run methods of a :class:`~stategraph.pregel.Pregel` graph."""

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
        from stategraph.pregel._sync_shell import drive_sync

        chunks: queue.SimpleQueue[Any] = queue.SimpleQueue()
        loop, shape = self._open_stream(
            input,
            config,
            lambda ns, mode, payload: chunks.put((ns, mode, payload)),
            context=context,
            stream_mode=stream_mode,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            subgraphs=subgraphs,
            debug=debug,
            version=version,
            control=control,
            print_mode=print_mode,
            multitask_strategy=multitask_strategy,
            kwargs=kwargs,
        )
        gen = drive_sync(loop, chunks)
        try:
            for ns, mode, payload in gen:
                if shape is None:
                    yield payload
                    continue
                chunk = shape(ns, mode, payload)
                if chunk is not _SKIP:
                    yield chunk
        except GraphInterrupt:
            if loop.run.nested:
                raise
        except ParentCommand as exc:
            _note_no_parent(exc, loop)
            raise
        finally:
            # a consumer that stops early closes the run now (lease, step pool), not
            # whenever the collector finds the generator
            gen.close()

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
        from stategraph.pregel._sync_shell import drive_sync

        run = self._open_invoke(
            input,
            config,
            context=context,
            stream_mode=stream_mode,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            version=version,
            control=control,
            multitask_strategy=multitask_strategy,
            kwargs=kwargs,
        )
        if isinstance(run, dict):
            # another mode, or a list of modes: the list of chunks stream() yields
            return list(self.stream(input, config, **run))
        interrupt: GraphInterrupt | None = None
        try:
            for _ in drive_sync(run, None):
                pass
        except GraphInterrupt as exc:
            interrupt = exc
        except ParentCommand as exc:
            _note_no_parent(exc, run)
            raise
        return self._finalize(run, interrupt, version)

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
        from stategraph.pregel._async_chunks import ChunkQueue
        from stategraph.pregel._async_shell import drive_async

        chunks = ChunkQueue()
        loop, shape = self._open_stream(
            input,
            config,
            chunks.put,
            context=context,
            stream_mode=stream_mode,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            subgraphs=subgraphs,
            debug=debug,
            version=version,
            control=control,
            print_mode=print_mode,
            multitask_strategy=multitask_strategy,
            kwargs=kwargs,
        )
        agen = drive_async(loop, chunks)
        try:
            async for ns, mode, payload in agen:
                if shape is None:
                    yield payload
                    continue
                chunk = shape(ns, mode, payload)
                if chunk is not _SKIP:
                    yield chunk
        except GraphInterrupt:
            if loop.run.nested:
                raise
        except ParentCommand as exc:
            _note_no_parent(exc, loop)
            raise
        finally:
            # a consumer that stops early releases the thread's lease and heartbeat now,
            # not when the event loop's async-generator hook gets to it
            await agen.aclose()

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
        from stategraph.pregel._async_shell import drive_async

        run = self._open_invoke(
            input,
            config,
            context=context,
            stream_mode=stream_mode,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            version=version,
            control=control,
            multitask_strategy=multitask_strategy,
            kwargs=kwargs,
        )
        if isinstance(run, dict):
            # another mode, or a list of modes: the list of chunks astream() yields
            return [chunk async for chunk in self.astream(input, config, **run)]
        interrupt: GraphInterrupt | None = None
        try:
            async for _ in drive_async(run, None):
                pass
        except GraphInterrupt as exc:
            interrupt = exc
        except ParentCommand as exc:
            _note_no_parent(exc, run)
            raise
        return self._finalize(run, interrupt, version)

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

            return stream_v3(cast("Pregel", self), input, config, transformers, kwargs)
        from stategraph.observe._events import stream_events

        return stream_events(version)  # v1/v2 events are async only

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

            return astream_v3(cast("Pregel", self), input, config, transformers, kwargs)
        from stategraph.observe._events import astream_events

        return astream_events(cast("Pregel", self), input, config, version, transformers, kwargs)

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

    def _open_stream(
        self,
        input: Any,
        config: Mapping[str, Any] | None,
        sink: Callable[[tuple[str, ...], str, Any], Any],
        *,
        context: Any,
        stream_mode: Any,
        output_keys: str | Sequence[str] | None,
        interrupt_before: Any,
        interrupt_after: Any,
        durability: str | None,
        subgraphs: bool,
        debug: bool | None,
        version: str,
        control: RunControl | None,
        print_mode: Any,
        multitask_strategy: str | None,
        kwargs: Mapping[str, Any],
    ) -> tuple[Loop, _ChunkShaper | None]:
        """The run of a ``stream()``/``astream()`` call, streaming into ``sink``, and the
        shaper of the chunks it yields (``None`` when each chunk is yielded as its
        payload); both methods are shells around this."""
        from stategraph.observe._printing import print_modes

        if kwargs:
            durability = _run_kwargs("stream", kwargs, durability)
        if stream_mode is None:
            stream_mode = self.stream_mode
        modes, single = self._modes(stream_mode)
        printed = print_modes(print_mode, bool(debug or self.debug), _VALID_MODES)
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
        if version != "v2" and single and not subgraphs and not printed:
            return loop, None  # the common case: each chunk is its payload, as it comes
        v2 = self._v2_parts() if version == "v2" else None
        return loop, _chunk_shaper(modes, printed, single, subgraphs, v2)

    def _open_invoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None,
        *,
        context: Any,
        stream_mode: Any,
        output_keys: str | Sequence[str] | None,
        interrupt_before: Any,
        interrupt_after: Any,
        durability: str | None,
        version: str,
        control: RunControl | None,
        multitask_strategy: str | None,
        kwargs: Mapping[str, Any],
    ) -> Loop | dict[str, Any]:
        """The run of an ``invoke()``/``ainvoke()`` call; for a ``stream_mode`` other than
        ``"values"``, the keyword arguments of the ``stream()``/``astream()`` call whose
        chunks it returns as a list instead (both methods are shells around this)."""
        from stategraph.observe._printing import print_modes

        if kwargs:
            durability = _run_kwargs("invoke", kwargs, durability)
        print_mode = kwargs.get("print_mode", ())
        printed = print_modes(print_mode, bool(kwargs.get("debug") or self.debug), _VALID_MODES)
        if stream_mode != "values":
            return {
                "context": context,
                "stream_mode": stream_mode,
                # as for the returned value: the output channels unless told
                "output_keys": output_keys if output_keys is not None else self.output_channels,
                "interrupt_before": interrupt_before,
                "interrupt_after": interrupt_after,
                "durability": durability,
                "subgraphs": bool(kwargs.get("subgraphs")),
                "version": version,
                "control": control,
                "print_mode": print_mode,
                "debug": kwargs.get("debug"),
                "multitask_strategy": multitask_strategy,
            }
        return self._make_run(
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


_SKIP = object()
"""What a chunk shaper returns for a chunk that is printed and not yielded."""

_ChunkShaper = Callable[[tuple[str, ...], str, Any], Any]


def _chunk_shaper(
    modes: frozenset[str],
    printed: frozenset[str],
    single: bool,
    subgraphs: bool,
    v2: V2Parts | None,
) -> _ChunkShaper:
    """What turns the loop's ``(ns, mode, payload)`` chunks into what ``stream()`` and
    ``astream()`` yield: a ``version="v2"`` part, or the payload with its mode and
    namespace as asked. It prints the chunks of printed modes (``print_mode``,
    ``debug``) and answers :data:`_SKIP` for those of modes that are only printed."""
    print_chunk = _printer(printed)

    def shape(ns: tuple[str, ...], mode: str, payload: Any) -> Any:
        if mode in printed:
            print_chunk(ns, mode, payload)
            if mode not in modes:
                return _SKIP
        if v2 is not None:
            return v2(ns, mode, payload)
        if single:
            return (ns, payload) if subgraphs else payload
        return (ns, mode, payload) if subgraphs else (mode, payload)

    return shape


def _note_no_parent(exc: ParentCommand, loop: Loop) -> None:
    """Explain a ``Command(graph=PARENT)`` that reached the caller of a root run (as in
    LangGraph, the ``ParentCommand`` itself is raised, carrying the command)."""
    if loop.run.nested:
        return
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
