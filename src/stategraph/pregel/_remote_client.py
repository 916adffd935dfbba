"""A small client for LangGraph Server's HTTP API, on the standard library alone.

:class:`~stategraph.pregel.remote.RemoteGraph` talks to a server through an object with
the shape of LangGraph's SDK client (``client.assistants``, ``client.threads``,
``client.runs``, each with the SDK's method names). When no SDK client is given, it uses
:class:`HttpClient` (blocking, ``http.client``) or :class:`AsyncHttpClient` (the same
requests run in worker threads), so ``RemoteGraph`` needs no third-party package.
Streaming runs arrive as server-sent events and are read line by line.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any, NamedTuple
from urllib.parse import quote, urlencode, urlsplit

__all__ = ["StreamPart", "RemoteError", "HttpClient", "AsyncHttpClient", "parse_sse"]


class StreamPart(NamedTuple):
    """One server-sent event of a streaming run: its ``event`` name, decoded ``data``
    and the event ``id`` (None when the server sends none)."""

    event: str
    data: Any
    id: str | None = None


class RemoteError(Exception):
    """The server answered with an error status (``status``) or an error event."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def parse_sse(lines: Iterator[bytes]) -> Iterator[StreamPart]:
    """Server-sent events from raw lines (``event:``/``data:``/``id:``, blank line ends)."""
    event, ident = "message", None
    data: list[str] = []
    for raw in lines:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data:
                text = "\n".join(data)
                try:
                    value = json.loads(text)
                except json.JSONDecodeError:
                    value = text
                yield StreamPart(event, value, ident)
            event, data, ident = "message", [], None
            continue
        if line.startswith(":"):
            continue
        field, _, value_text = line.partition(":")
        value_text = value_text[1:] if value_text.startswith(" ") else value_text
        if field == "event":
            event = value_text
        elif field == "data":
            data.append(value_text)
        elif field == "id":
            ident = value_text or None


def _q(segment: str) -> str:
    return quote(str(segment), safe="")


def _drop_none(body: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if v is not None}


def _json_default(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump()
    fields = getattr(value, "__dataclass_fields__", None)
    if fields is not None:
        return {name: getattr(value, name) for name in fields}
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"{type(value).__name__} cannot be sent to the server as JSON")


class _Transport:
    """One HTTP(S) origin: JSON requests and streamed responses."""

    def __init__(
        self, url: str, api_key: str | None, headers: Mapping[str, str] | None, timeout: float
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"RemoteGraph url must be http(s)://host[:port], got {url!r}.")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port
        self.prefix = parts.path.rstrip("/")
        self.timeout = timeout
        self.headers = {"Accept": "application/json", **(headers or {})}
        if api_key:
            self.headers["x-api-key"] = api_key

    def _connection(self) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        return cls(self.host, self.port, timeout=self.timeout)

    def open(
        self,
        method: str,
        path: str,
        body: Any = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        target = self.prefix + path
        if params:
            target += "?" + urlencode({k: v for k, v in params.items() if v is not None})
        all_headers = {**self.headers, **(headers or {})}
        payload = None
        if body is not None:
            payload = json.dumps(body, default=_json_default).encode()
            all_headers["Content-Type"] = "application/json"
        conn = self._connection()
        try:
            conn.request(method, target, body=payload, headers=all_headers)
            resp = conn.getresponse()
        except OSError as exc:
            conn.close()
            raise RemoteError(
                f"Cannot reach {self.scheme}://{self.host}:{self.port}{target}: {exc}"
            ) from exc
        if resp.status >= 400:
            text = resp.read().decode("utf-8", "replace")
            conn.close()
            try:
                detail = json.loads(text).get("detail", text)
            except (json.JSONDecodeError, AttributeError):
                detail = text
            raise RemoteError(f"{method} {target} failed ({resp.status}): {detail}", resp.status)
        return conn, resp

    def request(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        conn, resp = self.open(method, path, body, **kw)
        try:
            text = resp.read()
        finally:
            conn.close()
        return json.loads(text) if text else None

    def stream(self, method: str, path: str, body: Any = None, **kw: Any) -> Iterator[StreamPart]:
        headers = {**(kw.pop("headers", None) or {}), "Accept": "text/event-stream"}
        conn, resp = self.open(method, path, body, headers=headers, **kw)
        try:
            yield from parse_sse(iter(resp.readline, b""))
        finally:
            conn.close()


class _Assistants:
    def __init__(self, t: _Transport) -> None:
        self._t = t

    def get(self, assistant_id: str, *, headers: Mapping[str, str] | None = None) -> Any:
        return self._t.request("GET", f"/assistants/{_q(assistant_id)}", headers=headers)

    def get_graph(self, assistant_id: str, *, xray: int | bool = False, headers: Any = None) -> Any:
        return self._t.request(
            "GET",
            f"/assistants/{_q(assistant_id)}/graph",
            params={"xray": json.dumps(xray)},
            headers=headers,
        )

    def search(self, *, limit: int = 10, offset: int = 0, headers: Any = None) -> Any:
        return self._t.request(
            "POST", "/assistants/search", {"limit": limit, "offset": offset}, headers=headers
        )


class _Threads:
    def __init__(self, t: _Transport) -> None:
        self._t = t

    def create(
        self, *, thread_id: str | None = None, metadata: Any = None, headers: Any = None
    ) -> Any:
        body = _drop_none({"thread_id": thread_id, "metadata": metadata, "if_exists": "do_nothing"})
        return self._t.request("POST", "/threads", body, headers=headers)

    def get(self, thread_id: str, *, headers: Any = None) -> Any:
        return self._t.request("GET", f"/threads/{_q(thread_id)}", headers=headers)

    def get_state(
        self,
        thread_id: str,
        checkpoint: Mapping[str, Any] | None = None,
        checkpoint_id: str | None = None,
        *,
        subgraphs: bool = False,
        headers: Any = None,
    ) -> Any:
        if checkpoint:
            return self._t.request(
                "POST",
                f"/threads/{_q(thread_id)}/state/checkpoint",
                {"checkpoint": dict(checkpoint), "subgraphs": subgraphs},
                headers=headers,
            )
        path = f"/threads/{_q(thread_id)}/state"
        if checkpoint_id:
            path += f"/{_q(checkpoint_id)}"
        return self._t.request(
            "GET", path, params={"subgraphs": json.dumps(subgraphs)}, headers=headers
        )

    def update_state(
        self,
        thread_id: str,
        values: Any,
        *,
        as_node: str | None = None,
        checkpoint: Mapping[str, Any] | None = None,
        checkpoint_id: str | None = None,
        headers: Any = None,
    ) -> Any:
        body = _drop_none(
            {
                "values": values,
                "as_node": as_node,
                "checkpoint": dict(checkpoint) if checkpoint else None,
                "checkpoint_id": checkpoint_id,
            }
        )
        body.setdefault("values", None)
        return self._t.request("POST", f"/threads/{_q(thread_id)}/state", body, headers=headers)

    def get_history(
        self,
        thread_id: str,
        *,
        limit: int = 10,
        before: str | Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        checkpoint: Mapping[str, Any] | None = None,
        headers: Any = None,
    ) -> Any:
        body = _drop_none(
            {"limit": limit, "before": before, "metadata": metadata, "checkpoint": checkpoint}
        )
        return self._t.request("POST", f"/threads/{_q(thread_id)}/history", body, headers=headers)


class _Runs:
    def __init__(self, t: _Transport) -> None:
        self._t = t

    def stream(
        self,
        thread_id: str | None,
        assistant_id: str,
        *,
        input: Any = None,
        command: Any = None,
        stream_mode: Any = "values",
        stream_subgraphs: bool = False,
        metadata: Any = None,
        config: Any = None,
        context: Any = None,
        checkpoint: Any = None,
        checkpoint_id: str | None = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        if_not_exists: str | None = None,
        headers: Mapping[str, str] | None = None,
        **extra: Any,
    ) -> Iterator[StreamPart]:
        body = _drop_none(
            {
                "assistant_id": assistant_id,
                "input": input,
                "command": command,
                "stream_mode": stream_mode,
                "stream_subgraphs": stream_subgraphs,
                "metadata": metadata,
                "config": config,
                "context": context,
                "checkpoint": checkpoint,
                "checkpoint_id": checkpoint_id,
                "interrupt_before": interrupt_before,
                "interrupt_after": interrupt_after,
                "if_not_exists": if_not_exists,
                **extra,
            }
        )
        path = f"/threads/{_q(thread_id)}/runs/stream" if thread_id else "/runs/stream"
        return self._t.stream("POST", path, body, headers=headers)


class HttpClient:
    """A blocking client for the part of LangGraph Server's API that ``RemoteGraph`` uses.

    ``url`` is the server's base address; ``api_key`` is sent as ``x-api-key``;
    ``headers`` go with every request.
    """

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 300.0,
    ) -> None:
        transport = _Transport(url, api_key, headers, timeout)
        self.assistants = _Assistants(transport)
        self.threads = _Threads(transport)
        self.runs = _Runs(transport)


class _AsyncProxy:
    """Runs the blocking methods of one resource in worker threads."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._inner, name)
        if name == "stream":
            return lambda *a, **kw: _athreaded(method(*a, **kw))

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await asyncio.to_thread(method, *args, **kwargs)

        return call


async def _athreaded(iterator: Iterator[StreamPart]) -> AsyncIterator[StreamPart]:
    """Items of a blocking iterator read in a worker thread; closing stops the reader."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    stop = threading.Event()

    def pump() -> None:
        try:
            for item in iterator:
                if stop.is_set():
                    break
                loop.call_soon_threadsafe(queue.put_nowait, ("item", item))
        except BaseException as exc:  # handed to the consumer, raised there
            loop.call_soon_threadsafe(queue.put_nowait, ("error", exc))
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()
            if not loop.is_closed():
                loop.call_soon_threadsafe(queue.put_nowait, ("end", None))

    worker = threading.Thread(target=pump, name="stategraph-remote-stream", daemon=True)
    worker.start()
    try:
        while True:
            kind, value = await queue.get()
            if kind == "item":
                yield value
            elif kind == "error":
                raise value
            else:
                return
    finally:
        stop.set()


class AsyncHttpClient:
    """The asynchronous twin of :class:`HttpClient` (requests run in worker threads)."""

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 300.0,
    ) -> None:
        sync = HttpClient(url, api_key=api_key, headers=headers, timeout=timeout)
        self.assistants = _AsyncProxy(sync.assistants)
        self.threads = _AsyncProxy(sync.threads)
        self.runs = _AsyncProxy(sync.runs)
