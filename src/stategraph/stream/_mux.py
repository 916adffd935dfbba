"""``StreamMux``: routes a run's protocol events through its transformers."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from stategraph.stream._types import ProtocolEvent, StreamTransformer, needs_async
from stategraph.stream.stream_channel import StreamChannel

__all__ = ["StreamMux", "TransformerFactory"]

TransformerFactory = Callable[[tuple[str, ...]], StreamTransformer]


class _FirstError:
    """Swallows the exceptions (not ``BaseException`` s) raised in its ``with`` blocks
    and keeps the first one, so that every transformer hears of the end of the run."""

    __slots__ = ("error",)

    def __init__(self) -> None:
        self.error: Exception | None = None

    def note(self, exc: Exception) -> None:
        """Keep ``exc`` unless an earlier error is kept."""
        if self.error is None:
            self.error = exc

    def __enter__(self) -> _FirstError:
        return self

    def __exit__(self, typ: object, exc: BaseException | None, tb: object) -> bool:
        if isinstance(exc, Exception):
            self.note(exc)
            return True
        return False


class StreamMux:
    """Owns a run's main event stream and its transformer pipeline.

    Every event goes through every transformer in order; it reaches the main stream
    (with the next ``seq``) unless a transformer returned ``False``. Named channels
    in the transformers' projections forward their pushes to the main stream.
    ``factories`` (called with the scope) let the mux build a child mux for a
    subgraph handle (:meth:`_make_child`).
    """

    def __init__(
        self,
        transformers: Sequence[StreamTransformer] | None = None,
        *,
        is_async: bool = False,
        factories: Sequence[TransformerFactory] | None = None,
        scope: tuple[str, ...] = (),
        _assign_seq: bool = True,
    ) -> None:
        self.is_async = is_async
        self.scope = tuple(scope)
        self._factories = list(factories) if factories is not None else None
        self._assign_seq = _assign_seq
        self._seq = 0
        self._stamp = 0
        self._closed = False
        self._pump: Callable[[], bool] | None = None
        self._apump: Callable[[], Awaitable[bool]] | None = None
        self._events: StreamChannel[ProtocolEvent] = StreamChannel()
        self._events._bind(is_async=is_async)
        self._events._bind_mux(self)
        self._transformers: list[StreamTransformer] = []
        self._owner: dict[str, StreamTransformer] = {}
        self.extensions: dict[str, Any] = {}
        self.native_keys: set[str] = set()
        built = list(transformers or ())
        if self._factories:
            built.extend(factory(self.scope) for factory in self._factories)
        first = [t for t in built if getattr(t, "before_builtins", False)]
        rest = [t for t in built if not getattr(t, "before_builtins", False)]
        for transformer in (*first, *rest):
            self._register(transformer)

    # ----------------------------------------------------------------- setup
    def _register(self, transformer: StreamTransformer) -> None:
        if not self.is_async and needs_async(transformer) and not transformer.supports_sync:
            raise RuntimeError(
                f"{type(transformer).__name__} requires an async run (it has async methods "
                "or schedules work): use astream_events(version='v3'), or drop it from "
                "stream_events()."
            )
        projection = transformer.init()
        if not isinstance(projection, dict):
            raise TypeError(
                f"{type(transformer).__name__}.init() must return a dict of projections, got "
                f"{type(projection).__name__}."
            )
        for key in projection:
            owner = self._owner.get(key)
            if owner is not None:
                raise ValueError(
                    f"Projection key conflict: {type(transformer).__name__} declares {key!r}, "
                    f"which {type(owner).__name__} already provides. Rename the projection."
                )
        self._transformers.append(transformer)
        native = bool(getattr(transformer, "_native", False))
        for key in projection:
            self._owner[key] = transformer
        self._bind_and_wire(projection, native=native)
        transformer._on_register(self)

    def _bind_and_wire(self, projection: dict[str, Any], *, native: bool = False) -> None:
        for key, value in projection.items():
            self.extensions[key] = value
            if native:
                self.native_keys.add(key)
            if isinstance(value, StreamChannel):
                if value._mode is None:
                    value._bind(is_async=self.is_async)
                value._bind_mux(self)
                if self._pump is not None:
                    value._request_more = self._pump
                if self._apump is not None:
                    value._arequest_more = self._apump
                if value.name:
                    method = value.name if native else f"custom:{value.name}"
                    value._wire(self._forwarder(method))

    def _forwarder(self, method: str) -> Callable[[Any], None]:
        def forward(item: Any) -> None:
            self._forward(method, item)

        return forward

    def transformer_by_key(self, key: str) -> StreamTransformer | None:
        """The transformer that provides projection ``key``."""
        return self._owner.get(key)

    def _next_push_seq(self) -> int:
        self._stamp += 1
        return self._stamp

    def _channels(self) -> list[StreamChannel[Any]]:
        return [v for v in self.extensions.values() if isinstance(v, StreamChannel)]

    def bind_pump(self, fn: Callable[[], bool]) -> None:
        """Let every channel of this mux drive the run with ``fn`` when it runs dry."""
        self._pump = fn
        self._bind("_request_more", "_bind_pump", fn)

    def bind_apump(self, fn: Callable[[], Awaitable[bool]]) -> None:
        """Async twin of :meth:`bind_pump`."""
        self._apump = fn
        self._bind("_arequest_more", "_bind_apump", fn)

    def _bind(self, channel_attr: str, transformer_hook: str, fn: Any) -> None:
        """Give ``fn`` to every channel (as ``channel_attr``) and to every transformer
        that has a ``transformer_hook`` method."""
        for channel in (*self._channels(), self._events):
            setattr(channel, channel_attr, fn)
        for transformer in self._transformers:
            bind = getattr(transformer, transformer_hook, None)
            if bind is not None:
                bind(fn)

    def _make_child(self, scope: tuple[str, ...]) -> StreamMux:
        """A mux for the subgraph at ``scope``, with the same transformer factories."""
        if self._factories is None:
            raise RuntimeError(
                "This StreamMux was built from transformer instances, so it cannot build the "
                "transformers of a subgraph: construct it with factories=[...]."
            )
        child = StreamMux(
            factories=self._factories, is_async=self.is_async, scope=scope, _assign_seq=False
        )
        if self._pump is not None:
            child.bind_pump(self._pump)
        if self._apump is not None:
            child.bind_apump(self._apump)
        return child

    # ----------------------------------------------------------------- events
    def _forward(self, method: str, item: Any) -> None:
        event: ProtocolEvent = {
            "type": "event",
            "method": method,
            "params": {
                "namespace": list(self.scope),
                "timestamp": int(time.time() * 1000),
                "data": item,
            },
        }
        self._emit(event)

    def _emit(self, event: ProtocolEvent) -> None:
        if self._events._closed:
            return
        if self._assign_seq:
            self._seq += 1
            event["seq"] = self._seq
        self._events.push(event)

    def push(self, event: ProtocolEvent) -> None:
        """Run ``event`` through the transformers; then onto the main stream unless
        one of them returned ``False``."""
        if self._closed:
            return
        keep = True
        for transformer in self._transformers:
            if transformer.process(event) is False:
                keep = False
        if keep:
            self._emit(event)

    async def apush(self, event: ProtocolEvent) -> None:
        """Async twin of :meth:`push` (``aprocess`` is awaited, in order)."""
        if self._closed:
            return
        keep = True
        for transformer in self._transformers:
            if needs_async(transformer):
                result = await transformer.aprocess(event)
            else:
                result = transformer.process(event)
            if result is False:
                keep = False
        if keep:
            self._emit(event)

    def close(self) -> None:
        """The run ended: finalize every transformer, then close every channel. The
        first finalize error is raised after all the cleanup."""
        if self._closed:
            return
        self._closed = True
        errors = _FirstError()
        for transformer in self._transformers:
            with errors:
                transformer.finalize()
        self._end(errors.error)

    def _end(self, error: BaseException | None) -> None:
        """Close (or, after a finalize ``error``, fail) the channels; then raise it."""
        self._close_channels(error)
        if error is not None:
            raise error

    def _close_channels(self, error: BaseException | None) -> None:
        for channel in self._channels():
            if error is None:
                channel.close()
            else:
                channel.fail(error)
        if error is None:
            self._events.close()
        else:
            self._events.fail(error)

    def fail(self, err: BaseException) -> None:
        """The run failed with ``err``: every transformer and channel learns it."""
        if self._closed:
            return
        self._closed = True
        for transformer in self._transformers:
            with _FirstError():  # the run's error is the one that counts
                transformer.fail(err)
        self._close_channels(err)

    async def aclose(self) -> None:
        """Async twin of :meth:`close`: scheduled work finishes before ``afinalize``."""
        if self._closed:
            return
        import asyncio

        errors = _FirstError()
        tasks = self._collect_scheduled_tasks()
        if tasks:
            for result in await asyncio.gather(*tasks, return_exceptions=True):
                if isinstance(result, Exception):
                    errors.note(result)
        self._closed = True
        for transformer in self._transformers:
            with errors:
                if needs_async(transformer):
                    await transformer.afinalize()
                else:
                    transformer.finalize()
        self._end(errors.error)

    async def afail(self, err: BaseException) -> None:
        """Async twin of :meth:`fail`: pending scheduled work is cancelled."""
        if self._closed:
            return
        self._closed = True
        import asyncio

        scheduled = self._collect_scheduled_tasks()
        for task in scheduled:
            task.cancel()
        if scheduled:
            await asyncio.gather(*scheduled, return_exceptions=True)
        for transformer in self._transformers:
            with _FirstError():  # the run's error is the one that counts
                if needs_async(transformer):
                    await transformer.afail(err)
                else:
                    transformer.fail(err)
        self._close_channels(err)

    def _collect_scheduled_tasks(self) -> list[Any]:
        tasks: list[Any] = []
        for transformer in self._transformers:
            pending = transformer.__dict__.get("_scheduled_tasks")
            if pending:
                tasks.extend(t for t in pending if not t.done() or not t.cancelled())
                pending.clear()
        return tasks
