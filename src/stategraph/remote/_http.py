"""The blocking transport of the built-in client: one request, one connection.

Every socket operation of an exchange goes through :class:`_Guard`: before each
``recv`` and ``sendall`` it sets the socket's timeout to what is left of the current
deadline (connect, read, idle or total), so no drip of bytes (keep-alive comments, a
header line one byte at a time) can stretch a call past its bounds. The guard also
lets another thread :meth:`~Exchange.abort` a call: the socket is shut down and the
blocked read returns at once (the async transport relies on that to cancel).

A run stream counts as ended only when the server said so: the body was framed
(chunked, or a ``Content-Length``) and arrived whole, or the server sent the ``end``
event. A body cut short, or one that just stops without framing or ``end``, is a
:class:`~stategraph.remote.RemoteError`, never a successful run.
"""

from __future__ import annotations

import http.client
import io
import socket
import time
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from stategraph.remote._errors import RemoteError, RemoteTimeoutError, Secrets
from stategraph.remote._json import decode_json
from stategraph.remote._settings import RemoteLimits, RemoteTimeouts
from stategraph.remote._sse import END_EVENT, EventDecoder, StreamPart
from stategraph.remote._wire import Head, Origin, Request, error_of

__all__ = ["SyncTransport", "Exchange"]

_READ_SIZE = 65536
_ERROR_BODY_BYTES = 65536
"""How much of an error answer is read to explain it (the rest is not read at all)."""

_PROTOCOL_ERRORS = (http.client.HTTPException, OSError, ValueError, OverflowError)
"""What ``http.client`` raises on a broken answer (IncompleteRead, a bad chunk line,
a reset connection...); each becomes a RemoteError naming the endpoint."""

_TIMEOUT_WORDS = {
    "connect": "could not connect within {:g} s (timeouts.connect)",
    "read": "the answer took longer than {:g} s (timeouts.read)",
    "idle": "no event for {:g} s (timeouts.idle; comments do not count)",
    "total": "the call took longer than {:g} s (timeouts.total)",
}


class _Aborted(Exception):
    """The exchange was aborted from another thread (the async caller was cancelled)."""


class _Guard:
    """The deadlines of one exchange, and its abort switch."""

    __slots__ = ("aborted", "endpoint", "phase_at", "phase_name", "sock", "timeouts", "total_at")

    def __init__(self, timeouts: RemoteTimeouts, endpoint: str) -> None:
        self.timeouts = timeouts
        self.endpoint = endpoint
        now = time.monotonic()
        self.total_at = None if timeouts.total is None else now + timeouts.total
        self.phase_name = "connect"
        self.phase_at = now + timeouts.connect
        self.aborted = False
        self.sock: socket.socket | None = None

    def phase(self, name: str) -> None:
        """Start waiting for ``name`` (``read`` or ``idle``) from now."""
        self.phase_name = name
        self.phase_at = time.monotonic() + getattr(self.timeouts, name)

    def left(self) -> tuple[float, str]:
        """Seconds left before the nearest deadline, and its name (raises when past)."""
        if self.aborted:
            raise _Aborted
        at, name = self.phase_at, self.phase_name
        if self.total_at is not None and self.total_at <= at:
            at, name = self.total_at, "total"
        left = at - time.monotonic()
        if left <= 0:
            raise self.expired(name)
        return left, name

    def expired(self, name: str) -> RemoteTimeoutError:
        seconds = getattr(self.timeouts, name)
        return RemoteTimeoutError(
            f"{self.endpoint}: {_TIMEOUT_WORDS[name].format(seconds)}.",
            timeout=name,
            endpoint=self.endpoint,
        )

    def abort(self) -> None:
        """Stop the exchange from any thread: a blocked read or write returns now."""
        self.aborted = True
        sock = self.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # not connected yet, or already closed


class _GuardedRaw(io.RawIOBase):
    """The socket's read side, each ``recv`` bounded by the guard."""

    def __init__(self, owner: _GuardedSocket) -> None:
        self._owner = owner
        self._sock = owner.sock
        self._guard = owner.guard

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left, name = self._guard.left()
        self._sock.settimeout(left)
        try:
            return self._sock.recv_into(buffer)
        except TimeoutError:
            raise self._guard.expired(name) from None
        except OSError:
            if self._guard.aborted:
                raise _Aborted from None
            raise

    def close(self) -> None:
        if not self.closed:
            self._owner.file_closed()
        super().close()


class _GuardedSocket:
    """What ``http.client`` sees as its socket: reads and writes go through the guard.

    Like a real socket with its ``makefile`` readers, it closes for real only once the
    connection and every reader are closed (``http.client`` hands an answer that ends
    the connection over to its reader that way).
    """

    def __init__(self, sock: socket.socket, guard: _Guard) -> None:
        self.sock = sock
        self.guard = guard
        self._readers = 0
        self._closing = False

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> io.BufferedReader:
        self._readers += 1
        return io.BufferedReader(_GuardedRaw(self), _READ_SIZE)

    def file_closed(self) -> None:
        self._readers -= 1
        if self._closing and self._readers <= 0:
            self.sock.close()

    def close(self) -> None:
        self._closing = True
        if self._readers <= 0:
            self.sock.close()

    def sendall(self, data: Any) -> None:
        left, name = self.guard.left()
        self.sock.settimeout(left)
        try:
            self.sock.sendall(data)
        except TimeoutError:
            raise self.guard.expired(name) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


class _GuardedConnection:
    """Mixin of the two connection classes: wrap the socket once connected."""

    guard: _Guard
    sock: Any

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        self.guard.sock = self.sock
        if self.guard.aborted:
            raise _Aborted
        self.sock = _GuardedSocket(self.sock, self.guard)


class _HTTP(_GuardedConnection, http.client.HTTPConnection):
    pass


class _HTTPS(_GuardedConnection, http.client.HTTPSConnection):
    pass


class Exchange:
    """One request and its answer on a connection of its own."""

    def __init__(
        self,
        origin: Origin,
        base_headers: Mapping[str, str],
        secrets: Secrets,
        req: Request,
        timeouts: RemoteTimeouts,
        limits: RemoteLimits,
    ) -> None:
        self.req = req
        self.where = req.endpoint
        self._origin = origin
        self._base_headers = base_headers
        self._secrets = secrets.plus((req.headers or {}).values())
        self._limits = limits
        self.guard = _Guard(timeouts, self.where)
        self._conn: http.client.HTTPConnection | None = None
        self._resp: http.client.HTTPResponse | None = None
        self._framed = False

    # -------------------------------------------------------------- plumbing
    def abort(self) -> None:
        """Stop this exchange from another thread (its reader raises, then closes)."""
        self.guard.abort()

    def close(self) -> None:
        """Close the answer and the connection (idempotent)."""
        resp, self._resp = self._resp, None
        conn, self._conn = self._conn, None
        if resp is not None:
            resp.close()
        if conn is not None:
            conn.close()

    def _broken(self, exc: BaseException, doing: str) -> RemoteError:
        if isinstance(exc, _Aborted) or self.guard.aborted:
            return RemoteError(f"{self.where}: cancelled.", endpoint=self.where)
        if isinstance(exc, RemoteError):
            return exc
        if isinstance(exc, http.client.IncompleteRead):
            problem = "the connection closed before the answer was complete"
        else:
            text = self._secrets.clean(str(exc) or type(exc).__name__, 120)
            problem = f"{type(exc).__name__}: {text}"
        return RemoteError(f"{self.where}: {doing} failed: {problem}.", endpoint=self.where)

    # -------------------------------------------------------------- the head
    def open(self) -> None:
        """Connect, send the request and read the answer's head; an answer that is not
        a success of the expected kind is raised as a RemoteError."""
        origin, req = self._origin, self.req
        headers, payload = req.encode(self._base_headers)
        target = req.target(origin)
        cls = _HTTPS if origin.scheme == "https" else _HTTP
        left, deadline = self.guard.left()
        conn = cls(origin.host, origin.port, timeout=left)
        conn.guard = self.guard
        self._conn = conn
        try:
            conn.connect()
        except TimeoutError:
            raise self.guard.expired(deadline) from None
        except (OSError, _Aborted) as exc:
            if self.guard.aborted:
                raise self._broken(exc, "connecting") from None
            reason = self._secrets.clean(str(exc), 200)
            raise RemoteError(
                f"Cannot reach {origin} for {self.where}: {reason}", endpoint=self.where
            ) from None
        self.guard.phase("idle" if req.expect == "events" else "read")
        try:
            conn.request(req.method, target, body=payload, headers=headers)
            resp = conn.getresponse()
        except (*_PROTOCOL_ERRORS, _Aborted) as exc:
            raise self._broken(exc, "reading the answer") from None
        self._resp = resp
        head = Head(
            resp.status,
            resp.reason or "",
            resp.getheader("content-type") or "",
            resp.getheader("location"),
        )
        if not head.ok_for(req.expect):
            body = self._read_some(_ERROR_BODY_BYTES)
            raise error_of(req, head, body, self._secrets, self._limits.max_error_chars)
        self._framed = bool(resp.chunked) or resp.length is not None

    def _read_some(self, limit: int) -> bytes:
        """Up to ``limit`` bytes of the body, for an error message (errors ignored)."""
        assert self._resp is not None
        out = bytearray()
        try:
            while len(out) < limit:
                data = self._resp.read1(min(_READ_SIZE, limit - len(out)))
                if not data:
                    break
                out += data
        except (*_PROTOCOL_ERRORS, _Aborted):
            pass
        return bytes(out)

    def _read1(self) -> bytes:
        """The next bytes of the body; b"" only at its proper end."""
        resp = self._resp
        assert resp is not None
        try:
            data = resp.read1(_READ_SIZE)
            if not data and resp.length:  # read1 does not check a Content-Length
                raise http.client.IncompleteRead(b"", resp.length)
        except (*_PROTOCOL_ERRORS, _Aborted) as exc:
            raise self._broken(exc, "reading the answer") from None
        return data

    # -------------------------------------------------------------- the body
    def json(self) -> Any:
        """Open, then read and decode the whole JSON answer (at most max_body_bytes)."""
        try:
            self.open()
            assert self._resp is not None
            limit = self._limits.max_body_bytes
            if self._resp.length is not None and self._resp.length > limit:
                raise RemoteError(
                    f"{self.where}: the answer ({self._resp.length} bytes) is larger than "
                    f"max_body_bytes={limit}.",
                    endpoint=self.where,
                )
            body = bytearray()
            while True:
                data = self._read1()
                if not data:
                    break
                body += data
                if len(body) > limit:
                    raise RemoteError(
                        f"{self.where}: the answer is larger than max_body_bytes={limit}.",
                        endpoint=self.where,
                    )
        finally:
            self.close()
        if not body:
            raise RemoteError(
                f"{self.where}: the answer is empty where JSON was expected.", endpoint=self.where
            )
        return decode_json(bytes(body), self.where)

    def events(self) -> Iterator[StreamPart]:
        """Open, then yield the events of the run stream until the server says it ended.

        The ``idle`` deadline restarts each time the next event is asked for, so a slow
        consumer does not count against the server; the ``total`` one never restarts.
        """
        try:
            self.open()
            decoder = EventDecoder(self.where, self._limits)
            pending: deque[StreamPart] = deque()
            while True:
                self.guard.phase("idle")
                while not pending:
                    data = self._read1()
                    if not data:
                        self._check_end(decoder)
                        return
                    pending.extend(decoder.feed(data))
                part = pending.popleft()
                yield part
                if part.event == END_EVENT:
                    return
        finally:
            self.close()

    def _check_end(self, decoder: EventDecoder) -> None:
        decoder.finish()
        if not (self._framed or decoder.ended):
            raise RemoteError(
                f"{self.where}: the connection closed without the end of the run (the answer "
                "has no length, is not chunked and sent no 'end' event), so the run may have "
                "been cut short.",
                endpoint=self.where,
            )


@dataclass(frozen=True, eq=False)
class SyncTransport:
    """The blocking transport: one :class:`Exchange` per request.

    Built from checked parts (see ``_client._Client``): the origin, the headers every
    request carries and the secrets among them, the timeouts and the limits.
    """

    origin: Origin
    base_headers: Mapping[str, str]
    secrets: Secrets
    timeouts: RemoteTimeouts
    limits: RemoteLimits

    def exchange(self, req: Request) -> Exchange:
        """A new exchange for ``req`` (not opened yet)."""
        return Exchange(
            self.origin, self.base_headers, self.secrets, req, self.timeouts, self.limits
        )

    def json(self, req: Request) -> Any:
        """The decoded JSON answer to ``req``."""
        return self.exchange(req).json()

    def events(self, req: Request) -> Iterator[StreamPart]:
        """The events of the run stream ``req`` opens (opened on first iteration)."""
        return self.exchange(req).events()
