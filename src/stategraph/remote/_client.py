"""A client for the part of LangGraph Server's HTTP API that ``RemoteGraph`` uses.

:class:`HttpClient` (blocking) and :class:`AsyncHttpClient` have the shape of
LangGraph's SDK clients (``client.assistants``, ``client.threads``, ``client.runs``,
with the SDK's method names), so ``RemoteGraph`` drives either. The resources below
only build :class:`~stategraph.remote._wire.Request` objects and hand them to a
transport; the same resource classes serve both clients: with the blocking transport
a method returns the answer, with the async one an awaitable (or an async iterator of
events). Built on the standard library alone: no third-party package is needed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stategraph.remote._ahttp import AsyncTransport
from stategraph.remote._http import SyncTransport
from stategraph.remote._settings import (
    RemoteLimits,
    RemoteTimeouts,
    coerce_limits,
    coerce_timeouts,
)
from stategraph.remote._wire import Origin, Request, client_headers, q

__all__ = ["HttpClient", "AsyncHttpClient", "endpoint_of"]


def _drop_none(body: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if v is not None}


class _Resource:
    def __init__(self, transport: Any) -> None:
        self._t = transport


class _Assistants(_Resource):
    def get(self, assistant_id: str, *, headers: Mapping[str, str] | None = None) -> Any:
        """The assistant ``assistant_id``."""
        path = f"/assistants/{q(assistant_id)}"
        return self._t.json(Request("GET", path, headers=headers))

    def get_graph(self, assistant_id: str, *, xray: int | bool = False, headers: Any = None) -> Any:
        """The drawing of the assistant's graph (``xray`` expands subgraphs)."""
        path = f"/assistants/{q(assistant_id)}/graph"
        params = {"xray": json.dumps(xray)}
        return self._t.json(Request("GET", path, params=params, headers=headers))

    def search(self, *, limit: int = 10, offset: int = 0, headers: Any = None) -> Any:
        """The server's assistants."""
        body = {"limit": limit, "offset": offset}
        return self._t.json(Request("POST", "/assistants/search", body, headers=headers))


class _Threads(_Resource):
    def create(
        self, *, thread_id: str | None = None, metadata: Any = None, headers: Any = None
    ) -> Any:
        """Create a thread (nothing happens if ``thread_id`` exists)."""
        body = _drop_none({"thread_id": thread_id, "metadata": metadata, "if_exists": "do_nothing"})
        return self._t.json(Request("POST", "/threads", body, headers=headers))

    def get(self, thread_id: str, *, headers: Any = None) -> Any:
        """The thread ``thread_id``."""
        return self._t.json(Request("GET", f"/threads/{q(thread_id)}", headers=headers))

    def get_state(
        self,
        thread_id: str,
        checkpoint: Mapping[str, Any] | None = None,
        checkpoint_id: str | None = None,
        *,
        subgraphs: bool = False,
        headers: Any = None,
    ) -> Any:
        """The thread's state: latest, or at ``checkpoint`` / ``checkpoint_id``."""
        if checkpoint:
            path = f"/threads/{q(thread_id)}/state/checkpoint"
            body = {"checkpoint": dict(checkpoint), "subgraphs": subgraphs}
            return self._t.json(Request("POST", path, body, headers=headers))
        path = f"/threads/{q(thread_id)}/state"
        if checkpoint_id:
            path += f"/{q(checkpoint_id)}"
        params = {"subgraphs": json.dumps(subgraphs)}
        return self._t.json(Request("GET", path, params=params, headers=headers))

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
        """Write ``values`` to the thread as ``as_node``; returns the new checkpoint."""
        body = _drop_none(
            {
                "values": values,
                "as_node": as_node,
                "checkpoint": dict(checkpoint) if checkpoint else None,
                "checkpoint_id": checkpoint_id,
            }
        )
        body.setdefault("values", None)
        path = f"/threads/{q(thread_id)}/state"
        return self._t.json(Request("POST", path, body, headers=headers))

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
        """The thread's checkpoints, newest first."""
        body = _drop_none(
            {"limit": limit, "before": before, "metadata": metadata, "checkpoint": checkpoint}
        )
        path = f"/threads/{q(thread_id)}/history"
        return self._t.json(Request("POST", path, body, headers=headers))


class _Runs(_Resource):
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
    ) -> Any:
        """Start a run and stream its events (an iterator, or an async one)."""
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
        path = f"/threads/{q(thread_id)}/runs/stream" if thread_id else "/runs/stream"
        return self._t.events(Request("POST", path, body, headers=headers, expect="events"))


class _Client:
    """The resources of a client, bound to one transport."""

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | RemoteTimeouts | None = None,
        limits: RemoteLimits | None = None,
    ) -> None:
        base_headers, secrets = client_headers(api_key, headers)
        sync = SyncTransport(
            Origin.parse(url),
            base_headers,
            secrets,
            coerce_timeouts(timeout),
            coerce_limits(limits),
        )
        self.transport = self._transport(sync)
        self.assistants = _Assistants(self.transport)
        self.threads = _Threads(self.transport)
        self.runs = _Runs(self.transport)

    @staticmethod
    def _transport(sync: SyncTransport) -> Any:
        return sync


class HttpClient(_Client):
    """A blocking client for the part of LangGraph Server's API that ``RemoteGraph`` uses.

    ``url`` is the server's base address; ``api_key`` is sent as ``x-api-key``;
    ``headers`` go with every request. ``timeout`` is a number of seconds (the deadline
    of each request, its answer and stream included) or a
    :class:`~stategraph.remote.RemoteTimeouts`; ``limits`` a
    :class:`~stategraph.remote.RemoteLimits`.
    """


class AsyncHttpClient(_Client):
    """The asynchronous twin of :class:`HttpClient` (same arguments).

    Each request runs on a worker thread of its own; cancelling the awaiting task
    aborts the request and waits for that thread to end.
    """

    @staticmethod
    def _transport(sync: SyncTransport) -> Any:
        return AsyncTransport(sync)


class _Describer:
    """A transport that sends nothing: resources called on it return their Request."""

    @staticmethod
    def json(req: Request) -> Request:
        return req

    @staticmethod
    def events(req: Request) -> Request:
        return req


_DESCRIBE = {
    "assistants": _Assistants(_Describer()),
    "threads": _Threads(_Describer()),
    "runs": _Runs(_Describer()),
}


def endpoint_of(resource: str, method: str, kwargs: Mapping[str, Any]) -> str:
    """``METHOD /path`` of the request a client method sends (for messages; SDK clients
    send the same requests, LangGraph Server's API being the same)."""
    try:
        req = getattr(_DESCRIBE[resource], method)(**kwargs)
    except Exception:  # an argument the built-in client does not know: name the method
        return f"{resource}.{method}"
    return str(req.endpoint)
