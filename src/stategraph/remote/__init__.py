"""The remote client: a graph served over LangGraph Server's HTTP API, used like a local one.

:class:`RemoteGraph` runs a graph deployed behind that API (``stategraph studio``,
LangGraph Server) with the methods of a local graph, and can be a node of a local
graph. It needs nothing from the runtime: this room sits beside ``executors/`` and
``drawing/`` and imports only the vocabulary (types, errors, config) and ``drawing``.
``stategraph.pregel.remote`` (LangGraph's import path) re-exports it.

Where things are:

- ``_graph``: ``RemoteGraph`` itself (each method and its async twin share one plan);
- ``_node``: what it sends when it runs as a node (remote interrupts asked locally);
- ``_shape``: the run-stream state machine (server events -> local chunks);
- ``_decode``: answers checked field by field into ``StateSnapshot``, ``Graph``...;
- ``_run_stream``: the v3 run streams over LangGraph's SDK;
- ``_client``: the built-in client (``HttpClient``, ``AsyncHttpClient``), request
  building shared by both; ``_wire`` (requests and answer heads, sans-I/O), ``_sse``
  (event decoding with bounds, sans-I/O), ``_json`` (strict JSON);
  ``_http`` (the blocking transport, deadlines on every socket operation) and
  ``_ahttp`` (the async one: the blocking exchange on a cancellable worker thread);
- ``_settings`` (``RemoteTimeouts``, ``RemoteLimits``) and ``_errors`` (``RemoteError``).
"""

from stategraph.remote._client import AsyncHttpClient, HttpClient
from stategraph.remote._errors import RemoteError, RemoteTimeoutError
from stategraph.remote._graph import RemoteGraph
from stategraph.remote._settings import RemoteLimits, RemoteTimeouts
from stategraph.remote._sse import StreamPart

__all__ = [
    "RemoteGraph",
    "RemoteError",
    "RemoteTimeoutError",
    "RemoteTimeouts",
    "RemoteLimits",
    "StreamPart",
    "HttpClient",
    "AsyncHttpClient",
]
