"""One chat-model message as it streams through a v3 run (``run.messages`` items)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

__all__ = ["ChatModelStream", "AsyncChatModelStream", "message_to_events"]


def _delta_text(event: dict[str, Any]) -> str:
    delta = event.get("delta") or event.get("content_block") or {}
    if isinstance(delta, dict) and delta.get("type") in ("text", "text-delta"):
        text = delta.get("text")
        return text if isinstance(text, str) else ""
    return ""


def message_to_events(message: Any) -> list[dict[str, Any]]:
    """The protocol events of a complete message (start, one text block, finish)."""
    text = getattr(message, "text", None)
    if callable(text):
        text = text()
    if not isinstance(text, str):
        content = getattr(message, "content", "")
        text = content if isinstance(content, str) else ""
    message_id = getattr(message, "id", None)
    return [
        {"event": "message-start", "role": "ai", "id": message_id},
        {"event": "content-block-start", "index": 0, "content": {"type": "text", "text": ""}},
        {"event": "content-block-delta", "index": 0, "delta": {"type": "text-delta", "text": text}},
        {"event": "content-block-finish", "index": 0, "content": {"type": "text", "text": text}},
        {"event": "message-finish"},
    ]


class _TextProjection:
    """The text deltas received so far."""

    __slots__ = ("_deltas",)

    def __init__(self) -> None:
        self._deltas: list[str] = []


class ChatModelStream:
    """A message streamed by a chat model (or written whole by a node) in a v3 run.

    ``message_id``, ``node`` (the node that produced it) and ``namespace`` identify it;
    ``text`` iterates the text deltas as they arrive, iterating the stream yields the
    protocol events (``message-start``, ``content-block-*``, ``message-finish``), and
    ``output`` is the complete ``AIMessage``. Reading them drives the run forward until
    the message is done.
    """

    def __init__(
        self,
        *,
        message_id: str | None = None,
        node: str | None = None,
        namespace: tuple[str, ...] = (),
        request_more: Callable[[], bool] | None = None,
    ) -> None:
        self.message_id = message_id
        self.node = node
        self.namespace = tuple(namespace)
        self._events: list[dict[str, Any]] = []
        self._text_proj = _TextProjection()
        self._done = False
        self._error: BaseException | None = None
        self._request_more = request_more
        self._message: Any = None

    def __repr__(self) -> str:
        state = "done" if self._done else "streaming"
        return f"{type(self).__name__}(id={self.message_id!r}, node={self.node!r}, {state})"

    @property
    def done(self) -> bool:
        """Whether ``message-finish`` arrived."""
        return self._done

    def set_request_more(self, fn: Callable[[], bool] | None) -> None:
        """The run's pump (called when the consumer needs more events)."""
        self._request_more = fn

    def dispatch(self, event: dict[str, Any]) -> None:
        """Apply one protocol event."""
        self._events.append(event)
        kind = event.get("event")
        if kind == "message-start":
            self.message_id = event.get("message_id") or event.get("id") or self.message_id
        elif kind == "content-block-delta":
            text = _delta_text(event)
            if text:
                self._text_proj._deltas.append(text)
        elif kind == "message-finish":
            self._done = True

    def fail(self, err: BaseException) -> None:
        """The run ended before the message finished."""
        self._error = err

    def _advance(self) -> bool:
        pump = self._request_more
        return bool(pump is not None and pump())

    def _wait_done(self) -> None:
        while not self._done and self._error is None:
            if not self._advance():
                break
        if self._error is not None:
            raise self._error

    def _build(self) -> Any:
        if self._message is None:
            from stategraph.messages import AIMessage

            self._message = AIMessage(content="".join(self._text_proj._deltas), id=self.message_id)
        return self._message

    @property
    def output(self) -> Any:
        """The complete message (drives the run until it is done)."""
        self._wait_done()
        return self._build()

    @property
    def text(self) -> Iterator[str]:
        """The text deltas, as they arrive."""
        return self._iter_list(self._text_proj._deltas)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self._iter_list(self._events)

    def _unread(self, items: list[Any], index: int) -> Iterator[Any]:
        """``items`` from ``index`` on (also those appended meanwhile), then the stream's
        error if it failed: what both iterators yield before asking for more."""
        while index < len(items):
            yield items[index]
            index += 1
        if self._error is not None:
            raise self._error

    def _iter_list(self, items: list[Any]) -> Iterator[Any]:
        index = 0
        while True:
            for item in self._unread(items, index):
                index += 1
                yield item
            if self._done or not self._advance():
                if index >= len(items):
                    return


class AsyncChatModelStream(ChatModelStream):
    """Async twin of :class:`ChatModelStream`: ``await stream.output``, ``async for``."""

    def __init__(
        self,
        *,
        message_id: str | None = None,
        node: str | None = None,
        namespace: tuple[str, ...] = (),
        arequest_more: Callable[[], Awaitable[bool]] | None = None,
    ) -> None:
        super().__init__(message_id=message_id, node=node, namespace=namespace)
        self._arequest_more = arequest_more

    async def _aadvance(self) -> bool:
        pump = self._arequest_more
        return bool(pump is not None and await pump())

    @property
    def output(self) -> Awaitable[Any]:
        """Awaitable of the complete message."""
        return self._aoutput()

    async def _aoutput(self) -> Any:
        while not self._done and self._error is None:
            if not await self._aadvance():
                break
        if self._error is not None:
            raise self._error
        return self._build()

    @property
    def text(self) -> AsyncIterator[str]:  # type: ignore[override]
        """The text deltas, as they arrive."""
        return self._aiter_list(self._text_proj._deltas)

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._aiter_list(self._events)

    async def _aiter_list(self, items: list[Any]) -> AsyncIterator[Any]:
        index = 0
        while True:
            for item in self._unread(items, index):
                index += 1
                yield item
            if self._done or not await self._aadvance():
                if index >= len(items):
                    return
