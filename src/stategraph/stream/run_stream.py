"""The v3 run objects: :class:`GraphRunStream` (sync) and :class:`AsyncGraphRunStream`.

Nothing runs in the background: consuming any projection (``run.values``, raw events,
``run.output``...) pulls the next stream part from the graph and pushes it through the
run's :class:`~stategraph.stream._mux.StreamMux`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from types import MappingProxyType, TracebackType
from typing import Any, NoReturn

from stategraph.stream._convert import convert_to_protocol_event
from stategraph.stream._mux import StreamMux
from stategraph.stream._types import ProtocolEvent
from stategraph.stream.stream_channel import StreamChannel

__all__ = ["GraphRunStream", "AsyncGraphRunStream", "SubgraphRunStream", "AsyncSubgraphRunStream"]


def _raise_missing_projection(obj: Any, name: str) -> NoReturn:
    mux = obj.__dict__.get("_mux")
    if mux is None or name.startswith("__"):
        raise AttributeError(name)
    known = ", ".join(sorted(mux.extensions)) or "none"
    raise AttributeError(
        f"{type(obj).__name__} has no projection {name!r}; registered projections: {known}. "
        "Register a transformer that provides it with transformers=[...]."
    )


class _RunState:
    """What the run object tracks from the events of its own scope."""

    def _init_state(self, mux: StreamMux) -> None:
        self._mux = mux
        self.extensions = MappingProxyType(mux.extensions)
        self._output: Any = None
        self._interrupted = False
        self._interrupts: list[Any] = []
        self._exhausted = False
        for key in mux.native_keys:
            self.__dict__[key] = mux.extensions[key]

    def _observe_event(self, event: ProtocolEvent) -> None:
        if event["method"] != "values":
            return
        params = event["params"]
        if tuple(params["namespace"]) != self._mux.scope:
            return
        self._output = params["data"]
        interrupts = params.get("interrupts")
        if interrupts:
            self._interrupted = True
            self._interrupts.extend(interrupts)

    def _error(self) -> BaseException | None:
        return self._mux._events._error

    def __getattr__(self, name: str) -> StreamChannel[Any]:
        _raise_missing_projection(self, name)


class GraphRunStream(_RunState):
    """A synchronous v3 run (what ``stream_events(..., version="v3")`` returns).

    Projections: ``values``, ``messages``, ``lifecycle``, ``subgraphs`` always; the
    opt-in transformers add theirs (``updates``, ``custom``, ``tasks``,
    ``checkpoints``, ``debug``...). Every projection is in ``extensions`` (read-only);
    native ones are also attributes. Each projection has one consumer. Iterating the
    run itself yields the raw protocol events. ``output``, ``interrupted`` and
    ``interrupts`` run the graph to its end. Use it as a context manager, or call
    :meth:`abort`, to stop a run early.
    """

    def __init__(
        self, graph_iter: Iterator[Any] | None, mux: StreamMux, *, wire_pump: bool = True
    ) -> None:
        self._init_state(mux)
        self._graph_iter = graph_iter
        if wire_pump:
            self._wire_request_more(mux)

    def _wire_request_more(self, mux: StreamMux) -> None:
        mux.bind_pump(self._pump_next)

    def _pump_next(self) -> bool:
        """Pull one stream part from the graph; False once the run has ended."""
        if self._exhausted or self._graph_iter is None:
            return False
        try:
            part = next(self._graph_iter)
        except StopIteration:
            self._exhausted = True
            self._mux.close()
            return False
        except BaseException as exc:
            self._exhausted = True
            self._mux.fail(exc)
            return False
        event = convert_to_protocol_event(part)
        self._observe_event(event)
        try:
            self._mux.push(event)
        except BaseException as exc:
            self._exhausted = True
            self._close_graph()
            self._mux.fail(exc)
            return False
        return True

    def _close_graph(self) -> None:
        close = getattr(self._graph_iter, "close", None)
        if close is not None:
            close()

    def _drive_until_done(self) -> None:
        while self._pump_next():
            pass
        error = self._error()
        if error is not None:
            raise error

    def abort(self) -> None:
        """Stop the run (idempotent): the graph is closed, projections end."""
        if self._exhausted:
            return
        self._exhausted = True
        try:
            self._close_graph()
        finally:
            try:
                self._mux.close()
            except Exception:
                pass

    def __enter__(self) -> GraphRunStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.abort()

    @property
    def output(self) -> Any:
        """The run's final values (runs it to the end; raises the run's error)."""
        self._drive_until_done()
        return self._output

    @property
    def interrupted(self) -> bool:
        """Whether the run ended on an interrupt (runs it to the end)."""
        self._drive_until_done()
        return self._interrupted

    @property
    def interrupts(self) -> list[Any]:
        """The interrupts the run ended on (runs it to the end)."""
        self._drive_until_done()
        return list(self._interrupts)

    def __iter__(self) -> Iterator[ProtocolEvent]:
        return iter(self._mux._events)

    def interleave(self, *names: str) -> Iterator[tuple[str, Any]]:
        """Yield ``(name, item)`` from several projections, in arrival order."""
        channels: list[tuple[str, StreamChannel[Any]]] = []
        try:
            for name in names:
                channel = self._mux.extensions[name]
                if channel._subscribed:
                    raise RuntimeError(
                        f"Projection {name!r} already has a subscriber; a projection can be "
                        "consumed once."
                    )
                channel._subscribed = True
                channels.append((name, channel))
        except BaseException:
            for _, channel in channels:
                channel._release()
            raise
        return self._interleave(channels)

    def _interleave(
        self, channels: list[tuple[str, StreamChannel[Any]]]
    ) -> Iterator[tuple[str, Any]]:
        try:
            while True:
                best: tuple[str, StreamChannel[Any]] | None = None
                for name, channel in channels:
                    if channel._items and (
                        best is None or channel._items[0][0] < best[1]._items[0][0]
                    ):
                        best = (name, channel)
                if best is not None:
                    yield best[0], best[1]._items.popleft()[1]
                    continue
                if all(channel._closed for _, channel in channels):
                    for _, channel in channels:
                        if channel._error is not None:
                            raise channel._error
                    return
                pump = self._mux._pump
                if pump is None or not pump():
                    if not any(channel._items for _, channel in channels):
                        if all(channel._closed for _, channel in channels):
                            continue
                        return
        finally:
            for _, channel in channels:
                channel._release()


class _SubgraphRunStreamMixin:
    """What a subgraph handle adds: where it is and how it ended."""

    path: tuple[str, ...]
    graph_name: str | None
    trigger_call_id: str | None
    status: str
    error: str | None

    def __init__(
        self,
        mux: StreamMux,
        *,
        path: tuple[str, ...],
        graph_name: str | None = None,
        trigger_call_id: str | None = None,
    ) -> None:
        # the run stream class that follows this mixin, fed by the parent's pump
        super().__init__(None, mux, wire_pump=False)  # type: ignore[call-arg]
        self.path = tuple(path)
        self.graph_name = graph_name
        self.trigger_call_id = trigger_call_id
        self.status = "started"
        self.error = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(path={self.path!r}, status={self.status!r})"

    def _terminal_error(self) -> None:
        if self.status == "failed":
            raise RuntimeError(self.error or f"subgraph {self.path} failed")


class SubgraphRunStream(_SubgraphRunStreamMixin, GraphRunStream):
    """A subgraph run seen from its parent's ``run.subgraphs`` (sync)."""

    def _pump_next(self) -> bool:
        if self.status != "started" or self._mux._closed:
            return False
        pump = self._mux._pump
        return bool(pump is not None and pump())

    def _drive_until_done(self) -> None:
        while self.status == "started" and self._pump_next():
            pass
        self._terminal_error()

    def abort(self) -> None:
        """Stop following this subgraph (the run goes on)."""
        if not self._mux._closed:
            self._mux.close()


class AsyncGraphRunStream(_RunState):
    """An asynchronous v3 run (what ``await astream_events(..., version="v3")`` gives).

    Same projections as :class:`GraphRunStream`, consumed with ``async for``;
    ``await run.output()``, ``await run.interrupted()``, ``await run.interrupts()``.
    Concurrent consumers share one pump. Use ``async with run:`` or ``await
    run.abort()`` to stop early: the running graph (and its subgraphs) is cancelled.
    """

    def __init__(
        self, graph_aiter: AsyncIterator[Any] | None, mux: StreamMux, *, wire_pump: bool = True
    ) -> None:
        self._init_state(mux)
        self._graph_aiter = graph_aiter
        self._lock: Any = None
        self._inflight: Any = None
        self._aborted = False
        if wire_pump:
            self._wire_arequest_more(mux)

    def _wire_arequest_more(self, mux: StreamMux) -> None:
        mux.bind_apump(self._apump_next)

    async def _apump_next(self) -> bool:
        """Pull one stream part from the graph; False once the run has ended."""
        import asyncio

        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._exhausted or self._graph_aiter is None:
                return False
            self._inflight = asyncio.ensure_future(self._graph_aiter.__anext__())
            try:
                part = await self._inflight
            except StopAsyncIteration:
                self._exhausted = True
                await self._mux.aclose()
                return False
            except BaseException as exc:
                self._exhausted = True
                if isinstance(exc, asyncio.CancelledError) and self._aborted:
                    # abort() cancelled the pull: the stream ends, it did not fail
                    await self._mux.aclose()
                    return False
                await self._mux.afail(exc)
                if isinstance(exc, asyncio.CancelledError):
                    raise
                return False
            finally:
                self._inflight = None
            event = convert_to_protocol_event(part)
            self._observe_event(event)
            try:
                await self._mux.apush(event)
            except BaseException as exc:
                self._exhausted = True
                await self._aclose_graph()
                await self._mux.afail(exc)
                return False
            return True

    async def _aclose_graph(self) -> None:
        aclose = getattr(self._graph_aiter, "aclose", None)
        if aclose is not None:
            try:
                await aclose()
            except RuntimeError:
                pass

    async def _adrive_until_done(self) -> None:
        while await self._apump_next():
            pass
        error = self._error()
        if error is not None:
            raise error

    async def abort(self) -> None:
        """Stop the run (idempotent): the running graph is cancelled."""
        if self._exhausted:
            return
        self._exhausted = True
        self._aborted = True
        inflight = self._inflight
        if inflight is not None and not inflight.done():
            inflight.cancel()
            try:
                await inflight
            except BaseException:
                pass
        await self._aclose_graph()
        try:
            await self._mux.aclose()
        except Exception:
            pass

    async def __aenter__(self) -> AsyncGraphRunStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.abort()

    async def output(self) -> Any:
        """The run's final values (runs it to the end; raises the run's error)."""
        await self._adrive_until_done()
        return self._output

    async def interrupted(self) -> bool:
        """Whether the run ended on an interrupt."""
        await self._adrive_until_done()
        return self._interrupted

    async def interrupts(self) -> list[Any]:
        """The interrupts the run ended on."""
        await self._adrive_until_done()
        return list(self._interrupts)

    def __aiter__(self) -> AsyncIterator[ProtocolEvent]:
        return self._mux._events.__aiter__()


class AsyncSubgraphRunStream(_SubgraphRunStreamMixin, AsyncGraphRunStream):
    """A subgraph run seen from its parent's ``run.subgraphs`` (async)."""

    async def _apump_next(self) -> bool:
        if self.status != "started" or self._mux._closed:
            return False
        apump = self._mux._apump
        return bool(apump is not None and await apump())

    async def _adrive_until_done(self) -> None:
        while self.status == "started" and await self._apump_next():
            pass
        self._terminal_error()

    async def abort(self) -> None:
        """Stop following this subgraph (the run goes on)."""
        if not self._mux._closed:
            await self._mux.aclose()
