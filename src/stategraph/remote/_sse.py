"""Server-sent events from bytes, with bounds (sans-I/O).

:class:`EventDecoder` takes the bytes of a run stream as they arrive
(:meth:`~EventDecoder.feed`) and returns the complete events; the transports only move
bytes. It bounds what it holds (one line, one event), decodes each line as strict UTF-8
and each event's data as strict JSON, and tells comments (``: keep-alive``) apart from
events so that a drip of comments never counts as progress. ``finish()`` is called at
the end of the body: an event cut in the middle is an error, never dropped silently.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from stategraph.remote._errors import RemoteError
from stategraph.remote._json import decode_json
from stategraph.remote._settings import RemoteLimits

__all__ = ["StreamPart", "EventDecoder", "END_EVENT"]

END_EVENT = "end"
"""The event a server may send last to say the run ended (LangGraph Server ends the
body instead; both count)."""


class StreamPart(NamedTuple):
    """One server-sent event of a streaming run: its ``event`` name, decoded ``data``
    and the event ``id`` (None when the server sends none)."""

    event: str
    data: Any
    id: str | None = None


class EventDecoder:
    """Bytes in, :class:`StreamPart` out; ``where`` names the stream in errors."""

    __slots__ = (
        "_after_cr",
        "_buf",
        "_count",
        "_data",
        "_event",
        "_id",
        "_limits",
        "_size",
        "ended",
        "where",
    )

    def __init__(self, where: str, limits: RemoteLimits) -> None:
        self.where = where
        self._limits = limits
        self._buf = bytearray()
        self._event: str | None = None
        self._data: list[str] = []
        self._id: str | None = None
        self._size = 0  # bytes of the event being read
        self._count = 0  # events returned so far
        self._after_cr = False
        self.ended = False
        """Whether the server sent the ``end`` event."""

    def _fail(self, problem: str, field: str | None = None) -> RemoteError:
        return RemoteError(
            f"{self.where}: {problem} (after {self._count} events).",
            endpoint=self.where,
            field=field,
        )

    def feed(self, chunk: bytes) -> list[StreamPart]:
        """The events completed by ``chunk`` (in order; often none or one)."""
        if self._after_cr:
            # the previous chunk ended with "\r", already taken as a line end
            self._after_cr = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        if b"\r" in chunk:
            # "\r\n" and a lone "\r" end lines too (the SSE spec allows all three)
            self._after_cr = chunk.endswith(b"\r")
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        limit = self._limits.max_line_bytes
        lines = chunk.split(b"\n")
        rest = lines.pop()
        out: list[StreamPart] = []
        if lines:
            if self._buf:
                lines[0] = bytes(self._buf) + lines[0]
                self._buf.clear()
            for raw in lines:
                if len(raw) > limit:
                    raise self._fail(f"a line is longer than max_line_bytes={limit}")
                part = self._line(raw)
                if part is not None:
                    out.append(part)
        self._buf += rest
        if len(self._buf) > limit:
            raise self._fail(f"a line is longer than max_line_bytes={limit}")
        return out

    def finish(self) -> None:
        """The body ended: refuse an event (or a line) left unfinished."""
        if self._buf or self._data or self._event is not None:
            raise self._fail("the stream ended in the middle of an event")

    def _line(self, raw: bytes) -> StreamPart | None:
        if not raw:
            return self._dispatch()
        if raw[:1] == b":":
            return None  # a comment: no progress
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self._fail(f"a line is not UTF-8 text (byte {exc.start})") from None
        field, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if field == "data":
            self._size += len(raw) + 1
            if self._size > self._limits.max_event_bytes:
                raise self._fail(
                    f"an event is larger than max_event_bytes={self._limits.max_event_bytes}"
                )
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id":
            self._id = value or None
        return None  # "retry" and unknown fields are ignored, as the SSE spec says

    def _dispatch(self) -> StreamPart | None:
        event, data, ident = self._event, self._data, self._id
        self._event, self._data, self._id, self._size = None, [], None, 0
        if event is None and not data:
            return None
        name = event or "message"
        value = None
        text = "\n".join(data)
        if text:  # an event without data (or with empty data) carries None
            count = self._count + 1
            value = decode_json(
                text, lambda: f"{self.where}: event #{count} '{name}'", field="data"
            )
        self._count += 1
        if name == END_EVENT:
            self.ended = True
        return StreamPart(name, value, ident)
