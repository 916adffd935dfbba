"""``StreamChannel``: a single-consumer, drain-on-consume queue of one projection."""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from stategraph.stream._mux import StreamMux

__all__ = ["StreamChannel"]

T = TypeVar("T")


class StreamChannel(Generic[T]):
    """The items of one projection of a run (``run.values``, ``run.messages``...).

    A channel has exactly one subscriber: iterating it a second time raises (use
    :meth:`tee` / :meth:`atee` to fan out). Items are dropped as the subscriber
    advances, and items pushed before anybody subscribed are not kept at all, so an
    unconsumed projection holds no memory. Iterating a channel drives the run: when
    it is empty the channel asks the run for the next event.

    A channel created with a ``name`` is also forwarded to the run's main event
    stream: each push becomes an event whose method is the name (``custom:<name>``
    for transformers that are not native). Before use a channel is bound to sync or
    async iteration by the run (``_bind``); the other protocol then raises.
    ``maxlen`` is validated and kept for transformers that want to size their own
    buffers; the channel itself stays bounded by the consumer's pace.
    """

    def __init__(self, name: str | None = None, *, maxlen: int | None = None) -> None:
        if maxlen is not None and (not isinstance(maxlen, int) or maxlen <= 0):
            raise ValueError(
                f"StreamChannel maxlen must be a positive int or None, got {maxlen!r}."
            )
        self.name = name
        self.maxlen = maxlen
        self._items: deque[tuple[int, T]] = deque()
        self._subscribed = False
        self._closed = False
        self._error: BaseException | None = None
        self._mode: str | None = None
        self._wire_fn: Callable[[T], None] | None = None
        self._mux: StreamMux | None = None
        self._request_more: Callable[[], bool] | None = None
        self._arequest_more: Callable[[], Awaitable[bool]] | None = None
        self._waiter: Any = None

    def __repr__(self) -> str:
        state = "failed" if self._error is not None else "closed" if self._closed else "open"
        return f"StreamChannel({self.name!r}, {state}, {len(self._items)} queued)"

    # ----------------------------------------------------------------- wiring
    def _bind(self, *, is_async: bool) -> None:
        """Fix the iteration protocol (done by the run's mux)."""
        if self._mode is not None:
            raise RuntimeError(f"{self!r} is already bound to {self._mode} mode.")
        self._mode = "async" if is_async else "sync"

    def _bind_mux(self, mux: StreamMux) -> None:
        """Stamp pushes with the mux's arrival counter (for interleaving)."""
        self._mux = mux

    def _wire(self, fn: Callable[[T], None]) -> None:
        """Also call ``fn`` with every pushed item (forwarding to the main stream)."""
        self._wire_fn = fn

    # ----------------------------------------------------------------- producer
    def push(self, item: T) -> None:
        """Add ``item`` (kept only while somebody is subscribed) and forward it."""
        if self._closed:
            raise RuntimeError(
                f"Cannot push to a closed StreamChannel ({self.name or 'unnamed'}): the run "
                "it belongs to has ended."
            )
        if self._subscribed:
            stamp = self._mux._next_push_seq() if self._mux is not None else 0
            self._items.append((stamp, item))
            self._wake()
        if self._wire_fn is not None:
            self._wire_fn(item)

    def close(self) -> None:
        """No more items will come (idempotent)."""
        if not self._closed:
            self._closed = True
            self._wake()

    def fail(self, err: BaseException) -> None:
        """End the channel with ``err``: the subscriber gets the queued items, then it."""
        if not self._closed:
            self._closed = True
            self._error = err
            self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    # ----------------------------------------------------------------- consumer
    def _subscribe(self, mode: str) -> None:
        if self._mode is None:
            raise TypeError(
                "This StreamChannel has not been bound to a run yet; iterate the projections "
                "of a run returned by stream_events()/astream_events()."
            )
        if self._mode != mode:
            hint = "async for" if self._mode == "async" else "a plain for loop"
            raise TypeError(f"This StreamChannel is bound to {self._mode} mode; use {hint}.")
        if self._subscribed:
            raise RuntimeError(
                "This StreamChannel already has a subscriber; a projection can be consumed "
                "once. Use tee(n) / atee(n) to give it several consumers."
            )
        self._subscribed = True

    def _release(self) -> None:
        self._subscribed = False
        self._items.clear()

    def __iter__(self) -> Iterator[T]:
        self._subscribe("sync")
        return self._sync_cursor()

    def __aiter__(self) -> AsyncIterator[T]:
        self._subscribe("async")
        return self._async_cursor()

    def _drain(self) -> Iterator[T]:
        """The buffered items, each taken as it is yielded (also those added meanwhile);
        then, once the channel is closed, the run's error, if it failed. Both cursors
        read through it; what they add is how they ask for more."""
        items = self._items
        while items:
            yield items.popleft()[1]
        if self._closed and self._error is not None:
            raise self._error

    def _sync_cursor(self) -> Iterator[T]:
        try:
            while True:
                yield from self._drain()
                if self._closed:
                    return
                pump = self._request_more
                if pump is None or not pump():
                    if not self._items and not self._closed:
                        return
        finally:
            self._release()

    async def _async_cursor(self) -> AsyncIterator[T]:
        try:
            while True:
                for item in self._drain():
                    yield item
                if self._closed:
                    return
                apump = self._arequest_more
                if apump is not None:
                    if not await apump() and not self._items and not self._closed:
                        return
                    continue
                import asyncio

                self._waiter = asyncio.get_running_loop().create_future()
                await self._waiter
        finally:
            self._release()

    def tee(self, n: int = 2) -> tuple[Iterator[T], ...]:
        """``n`` independent iterators over this channel's items (sync)."""
        source = iter(self)
        buffers: list[deque[T]] = [deque() for _ in range(n)]

        def branch(mine: deque[T]) -> Iterator[T]:
            while True:
                if mine:
                    yield mine.popleft()
                    continue
                try:
                    item = next(source)
                except StopIteration:
                    return
                for buf in buffers:
                    buf.append(item)

        return tuple(branch(buf) for buf in buffers)

    def atee(self, n: int = 2) -> tuple[AsyncIterator[T], ...]:
        """``n`` independent async iterators over this channel's items."""
        source = self.__aiter__()
        buffers: list[deque[T]] = [deque() for _ in range(n)]

        async def branch(mine: deque[T]) -> AsyncIterator[T]:
            while True:
                if mine:
                    yield mine.popleft()
                    continue
                try:
                    item = await source.__anext__()
                except StopAsyncIteration:
                    return
                for buf in buffers:
                    buf.append(item)

        return tuple(branch(buf) for buf in buffers)
