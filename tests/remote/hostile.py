"""A hostile (or just broken) HTTP server on loopback, for RemoteGraph's tests.

Each request is answered by a *script*: a function that gets the parsed request and a
:class:`Wire` to write raw bytes with. Scripts can answer properly (:func:`json_answer`,
:func:`sse_answer`) or do what real servers and proxies get wrong: cut a stream, drip
comments, send a line that never ends, a wrong content type, a redirect, garbage
JSON, a malformed chunk, a slow body... The server records what it saw: each request,
how many bytes each answer managed to write, and when each connection closed.
"""

from __future__ import annotations

import json
import socket
import socketserver
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Received:
    """A request as the server read it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class Connection:
    """What the server knows of one connection."""

    request: Received | None = None
    written: int = 0
    closed_at: float | None = None
    peer_closed: threading.Event = field(default_factory=threading.Event)
    """Set once the client closed its side (seen by a read or a failed write)."""


class Wire:
    """Raw writing on one connection, for scripts."""

    def __init__(self, sock: socket.socket, record: Connection) -> None:
        self.sock = sock
        self.record = record

    def send(self, data: bytes) -> bool:
        """Write ``data``; False once the client has gone."""
        try:
            self.sock.sendall(data)
        except OSError:
            self.record.peer_closed.set()
            return False
        self.record.written += len(data)
        return True

    def head(
        self, status: int = 200, headers: Mapping[str, str] | None = None, reason: str = "OK"
    ) -> bool:
        lines = [f"HTTP/1.1 {status} {reason}"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        return self.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def chunk(self, data: bytes) -> bool:
        """One chunk of a chunked body."""
        return self.send(b"%x\r\n%s\r\n" % (len(data), data))

    def last_chunk(self) -> bool:
        return self.send(b"0\r\n\r\n")

    def wait_client_gone(self, timeout: float) -> bool:
        """Block until the client closes the connection (True) or ``timeout``."""
        self.sock.settimeout(0.05)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.sock.recv(65536) == b"":
                    self.record.peer_closed.set()
                    return True
            except TimeoutError:
                continue
            except OSError:
                self.record.peer_closed.set()
                return True
        return False


Script = Callable[[Received, Wire], None]


def event(name: str, data: Any, ident: str | None = None) -> bytes:
    """One server-sent event, its data as JSON."""
    out = f"event: {name}\n"
    if ident is not None:
        out += f"id: {ident}\n"
    return (out + f"data: {json.dumps(data)}\n\n").encode()


SSE = {"Content-Type": "text/event-stream"}
JSON = {"Content-Type": "application/json"}


def sse_answer(events: Iterable[bytes], *, framing: str = "chunked") -> Script:
    """A script answering an event stream, framed as ``chunked``, ``length`` or
    ``close`` (no framing: the body ends when the connection closes)."""
    items = list(events)

    def script(req: Received, wire: Wire) -> None:
        body = b"".join(items)
        if framing == "chunked":
            wire.head(200, {**SSE, "Transfer-Encoding": "chunked"})
            for item in items:
                wire.chunk(item)
            wire.last_chunk()
        elif framing == "length":
            wire.head(200, {**SSE, "Content-Length": str(len(body))})
            wire.send(body)
        else:
            wire.head(200, {**SSE, "Connection": "close"})
            wire.send(body)

    return script


def raw_answer(
    status: int, body: bytes, headers: Mapping[str, str] | None = None, reason: str = "OK"
) -> Script:
    """A script answering ``body`` as is, with a Content-Length."""

    def script(req: Received, wire: Wire) -> None:
        wire.head(status, {**(headers or {}), "Content-Length": str(len(body))}, reason)
        wire.send(body)

    return script


def json_answer(value: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Script:
    """A script answering ``value`` as JSON."""
    return raw_answer(status, json.dumps(value).encode(), {**JSON, **(headers or {})})


def state(
    values: Any = None,
    *,
    interrupts: Iterable[Mapping[str, Any]] = (),
    next: Iterable[str] = (),
    thread_id: str = "t1",
) -> dict[str, Any]:
    """A well-formed thread state (LangGraph Server's ThreadState)."""
    items = list(interrupts)
    tasks = [{"id": "task-1", "name": "ask", "interrupts": items}] if items else []
    return {
        "values": values if values is not None else {},
        "next": list(next) or (["ask"] if items else []),
        "tasks": tasks,
        "metadata": {},
        "created_at": "2026-01-01T00:00:00+00:00",
        "checkpoint": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": "c1"},
        "parent_checkpoint": None,
        "interrupts": items,
    }


class _Handler(socketserver.BaseRequestHandler):
    server: HostileServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        record = Connection()
        self.server.connections.append(record)
        try:
            req = self._read_request(sock)
            if req is None:
                return
            record.request = req
            self.server.requests.append(req)
            self.server.script_for(req)(req, Wire(sock, record))
        except OSError:
            record.peer_closed.set()
        finally:
            record.closed_at = time.monotonic()
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    @staticmethod
    def _read_request(sock: socket.socket) -> Received | None:
        buf = b""
        while b"\r\n\r\n" not in buf:
            data = sock.recv(65536)
            if not data:
                return None
            buf += data
        head, _, rest = buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length") or 0)
        while len(rest) < length:
            data = sock.recv(65536)
            if not data:
                break
            rest += data
        return Received(method, target, headers, rest[:length])


class HostileServer(socketserver.ThreadingTCPServer):
    """The server: ``route(method, path, script)``; unknown requests get a 404."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.routes: list[tuple[str, str, Script]] = []
        self.requests: list[Received] = []
        self.connections: list[Connection] = []
        self._thread = threading.Thread(target=self.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def route(self, method: str, path: str, script: Script) -> None:
        """Answer ``method path`` (the path before any ``?``; a trailing ``*`` matches
        any rest) with ``script``; later routes win."""
        self.routes.insert(0, (method, path, script))

    def script_for(self, req: Received) -> Script:
        path = req.path.split("?", 1)[0]
        for method, pattern, script in self.routes:
            if method != req.method:
                continue
            if pattern == path or (pattern.endswith("*") and path.startswith(pattern[:-1])):
                return script
        return json_answer({"detail": f"no route for {req.method} {path}"}, 404)

    def runs(self) -> list[Received]:
        """The run requests received, in order."""
        return [r for r in self.requests if r.path.endswith("/runs/stream")]

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()
        self.server_close()
