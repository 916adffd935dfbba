"""``RemoteGraph``: a graph served over LangGraph Server's HTTP API, used like a local one.

``RemoteGraph("agent", url="http://127.0.0.1:2024")`` talks to any server that speaks
that API (``stategraph studio``, LangGraph Server): ``invoke``/``stream`` run it,
``get_state``/``get_state_history``/``update_state`` read and change its threads,
``get_graph`` fetches its drawing. It can also be a node of a local graph: an interrupt
inside the remote graph then pauses the local one.

Each method and its async twin share one plan (:class:`_Call`: which client method,
with which arguments, and how to check and decode the answer); only the call itself
differs. By default the built-in client of :mod:`stategraph.remote._client` is used;
LangGraph's SDK clients (``get_client`` / ``get_sync_client``) can be passed as
``client=`` / ``sync_client=`` instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Optional, Union

from stategraph.config import RunnableConfig
from stategraph.drawing._graph import Graph
from stategraph.remote import _config, _decode
from stategraph.remote._call import Call, aclosing_events, closing_events
from stategraph.remote._client import AsyncHttpClient, HttpClient
from stategraph.remote._errors import RemoteError, Secrets
from stategraph.remote._node import node_input
from stategraph.remote._run_stream import V3_SUPPORTED_KWARGS, open_v3, reject_unsupported
from stategraph.remote._settings import RemoteLimits, RemoteTimeouts
from stategraph.remote._shape import RunResult, RunShape
from stategraph.remote._sse import StreamPart
from stategraph.remote._wire import client_headers
from stategraph.types import Command, StateSnapshot, StateUpdate

__all__ = ["RemoteGraph", "RemoteError", "StreamPart"]

Nodes = Optional[Union[Sequence[str], str]]
"""Node names for ``interrupt_before`` / ``interrupt_after``."""
"""``stategraph.pregel.remote`` is this module under LangGraph's name: these are its
public names there."""

# LangGraph's private names of its remote module; `_merge_tracing_headers` is looked up
# here at each call, so patching it on the module (as LangGraph's tests do) takes effect
_merge_tracing_headers = _config.merge_tracing_headers
_V3_SUPPORTED_KWARGS = V3_SUPPORTED_KWARGS


class RemoteGraph:
    """A graph deployed behind LangGraph Server's HTTP API, with the local graph methods.

    ``assistant_id`` names the assistant (or graph id) on the server. Give ``url``
    (plus ``api_key`` / ``headers``) to use the built-in HTTP client, or SDK-shaped
    ``client`` (async) / ``sync_client`` objects. ``config`` is merged into every call.

    ``timeout`` (seconds: the deadline of each request, its run stream included; or a
    :class:`~stategraph.remote.RemoteTimeouts` for connect/read/idle/total) and
    ``limits`` (a :class:`~stategraph.remote.RemoteLimits`) configure the built-in
    client. Errors of the server, the network or the protocol are
    :class:`~stategraph.remote.RemoteError`.
    """

    def __init__(
        self,
        assistant_id: str,
        /,
        *,
        url: str | None = None,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        client: Any = None,
        sync_client: Any = None,
        config: Mapping[str, Any] | None = None,
        name: str | None = None,
        distributed_tracing: bool = False,
        timeout: float | RemoteTimeouts | None = None,
        limits: RemoteLimits | None = None,
    ) -> None:
        self.assistant_id = assistant_id
        self.name = name or assistant_id
        self.config: dict[str, Any] = dict(config or {})
        self.distributed_tracing = distributed_tracing
        self.url = url
        self._secrets = client_headers(api_key, headers)[1] if url is not None else Secrets()
        if url is None and (timeout is not None or limits is not None):
            raise ValueError(
                "RemoteGraph timeout= and limits= configure the built-in client: pass url=..., "
                "or set the timeouts of the SDK client you pass as client=/sync_client=."
            )
        bounds: dict[str, Any] = {
            "api_key": api_key,
            "headers": headers,
            "timeout": timeout,
            "limits": limits,
        }
        if client is None and url is not None:
            client = AsyncHttpClient(url, **bounds)
        if sync_client is None and url is not None:
            sync_client = HttpClient(url, **bounds)
        self.client = client
        self.sync_client = sync_client

    # ------------------------------------------------------------------ plumbing
    @property
    def graph_id(self) -> str:
        """The assistant (or graph) id on the server; same as ``assistant_id``."""
        return self.assistant_id

    @graph_id.setter
    def graph_id(self, value: str) -> None:
        self.assistant_id = value

    def _sync(self) -> Any:
        if self.sync_client is None:
            raise ValueError(
                f"RemoteGraph '{self.name}' has no sync client: pass url=... or sync_client=..."
            )
        return self.sync_client

    def _async(self) -> Any:
        if self.client is None:
            raise ValueError(
                f"RemoteGraph '{self.name}' has no async client: pass url=... or client=..."
            )
        return self.client

    def copy(self, update: Mapping[str, Any] | None = None) -> RemoteGraph:
        """A shallow copy with attributes from ``update`` replaced."""
        new = object.__new__(RemoteGraph)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(update or {})
        return new

    def with_config(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> RemoteGraph:
        """A copy whose config is this one's merged with ``config`` (and keyword items)."""
        merged = _config.merge_configs(self.config, {**(config or {}), **kwargs})
        return self.copy({"config": merged})

    def _sanitize_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """The part of a config the server can take: JSON values only, no checkpoint keys."""
        return _config.sanitize_config(config)

    def _thread_args(
        self, config: Mapping[str, Any] | None, what: str
    ) -> tuple[str, dict[str, Any] | None]:
        conf = _config.merge_configs(self.config, config).get("configurable") or {}
        thread_id = conf.get("thread_id")
        if not thread_id:
            raise ValueError(
                f"RemoteGraph.{what} needs config['configurable']['thread_id'] "
                "(the thread on the server)."
            )
        checkpoint = None
        if conf.get("checkpoint_id"):
            checkpoint = {
                k: conf[k]
                for k in ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")
                if k in conf
            }
        return str(thread_id), checkpoint

    def _tracing_headers(self, headers: Mapping[str, str] | None) -> dict[str, str] | None:
        if not self.distributed_tracing:
            return dict(headers) if headers else None
        return _merge_tracing_headers(headers)

    # ------------------------------------------------------------------ state
    # Each method and its async twin share one Call; their parameter lists are the
    # public API (LangGraph's), written compactly since the twins must match.
    def _state_call(self, config: Mapping[str, Any], subgraphs: bool, what: str) -> Call:
        thread_id, checkpoint = self._thread_args(config, what)
        kwargs = {"thread_id": thread_id, "checkpoint": checkpoint, "subgraphs": subgraphs}
        return Call("threads", "get_state", kwargs, _decode.snapshot_of)

    def get_state(self, config: Mapping[str, Any], *, subgraphs: bool = False) -> StateSnapshot:
        """The thread's state at its latest checkpoint (or the one the config names)."""
        result: StateSnapshot = self._state_call(config, subgraphs, "get_state").run(self._sync())
        return result

    async def aget_state(
        self, config: Mapping[str, Any], *, subgraphs: bool = False
    ) -> StateSnapshot:
        """Async twin of :meth:`get_state`."""
        call = self._state_call(config, subgraphs, "aget_state")
        result: StateSnapshot = await call.arun(self._async())
        return result

    def _history_call(
        self, config: Mapping[str, Any], filter: Any, before: Any, limit: Any, what: str
    ) -> Call:
        thread_id, checkpoint = self._thread_args(config, what)
        if isinstance(before, Mapping):
            before = (before.get("configurable") or {}).get("checkpoint_id") and dict(
                before["configurable"]
            )
        kwargs = {
            "thread_id": thread_id,
            "limit": limit if limit is not None else 10,
            "before": before,
            "metadata": filter,
            "checkpoint": checkpoint,
        }
        return Call("threads", "get_history", kwargs, _decode.history_of)

    def get_state_history(
        self, config: Mapping[str, Any], *, filter: Mapping[str, Any] | None = None,
        before: Mapping[str, Any] | None = None, limit: int | None = None,
    ) -> Iterator[StateSnapshot]:  # fmt: skip
        """The thread's checkpoints, newest first (``limit`` defaults to the server's 10)."""
        call = self._history_call(config, filter, before, limit, "get_state_history")
        yield from call.run(self._sync())

    async def aget_state_history(
        self, config: Mapping[str, Any], *, filter: Mapping[str, Any] | None = None,
        before: Mapping[str, Any] | None = None, limit: int | None = None,
    ) -> AsyncIterator[StateSnapshot]:  # fmt: skip
        """Async twin of :meth:`get_state_history`."""
        call = self._history_call(config, filter, before, limit, "aget_state_history")
        for snapshot in await call.arun(self._async()):
            yield snapshot

    def _update_call(self, config: Mapping[str, Any], values: Any, as_node: Any, what: str) -> Call:
        thread_id, checkpoint = self._thread_args(config, what)
        kwargs = {
            "thread_id": thread_id,
            "values": values,
            "as_node": as_node,
            "checkpoint": checkpoint,
        }
        return Call("threads", "update_state", kwargs, _decode.checkpoint_config_of)

    def update_state(
        self, config: Mapping[str, Any], values: dict[str, Any] | Any | None,
        as_node: str | None = None, task_id: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Write ``values`` as if ``as_node`` returned them; returns the new checkpoint's config."""
        call = self._update_call(config, values, as_node, "update_state")
        result: dict[str, Any] = call.run(self._sync())
        return result

    async def aupdate_state(
        self, config: Mapping[str, Any], values: dict[str, Any] | Any | None,
        as_node: str | None = None, task_id: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Async twin of :meth:`update_state`."""
        call = self._update_call(config, values, as_node, "aupdate_state")
        result: dict[str, Any] = await call.arun(self._async())
        return result

    @staticmethod
    def _bulk_plan(
        supersteps: Sequence[Sequence[StateUpdate]], what: str
    ) -> list[tuple[Any, str | None]]:
        """Check every superstep before the first request: one plain update each."""
        if not supersteps:
            raise ValueError(
                f"RemoteGraph.{what}() got no supersteps: give a list of supersteps, "
                "each a list of one StateUpdate(values, as_node)."
            )
        plan: list[tuple[Any, str | None]] = []
        for index, updates in enumerate(supersteps):
            updates = list(updates)
            if len(updates) != 1:
                raise ValueError(
                    f"RemoteGraph.{what}(): superstep {index} has {len(updates)} updates, but "
                    "the server saves one update per checkpoint. Give each superstep exactly "
                    "one StateUpdate; nothing was sent."
                )
            values, as_node, task_id = updates[0]
            if task_id is not None:
                raise ValueError(
                    f"RemoteGraph.{what}(): superstep {index} names task_id={task_id!r}, "
                    "which the server's state API cannot take. Leave task_id unset; "
                    "nothing was sent."
                )
            plan.append((values, as_node))
        return plan

    def bulk_update_state(
        self, config: Mapping[str, Any], supersteps: Sequence[Sequence[StateUpdate]]
    ) -> dict[str, Any]:
        """Apply each superstep's update in order, one checkpoint each; returns the last config.

        Every superstep must hold exactly one :class:`~stategraph.types.StateUpdate`
        without ``task_id`` (the server saves one update per checkpoint); all are
        checked before the first request. Each update is saved on the checkpoint the
        previous one made, so the thread's history shows them in order.
        """
        plan = self._bulk_plan(supersteps, "bulk_update_state")
        current: Mapping[str, Any] = config
        result: dict[str, Any] = {}
        for values, as_node in plan:
            result = self.update_state(current, values, as_node)
            current = _config.merge_configs(config, result)
        return result

    async def abulk_update_state(
        self, config: Mapping[str, Any], supersteps: Sequence[Sequence[StateUpdate]]
    ) -> dict[str, Any]:
        """Async twin of :meth:`bulk_update_state`."""
        plan = self._bulk_plan(supersteps, "abulk_update_state")
        current: Mapping[str, Any] = config
        result: dict[str, Any] = {}
        for values, as_node in plan:
            result = await self.aupdate_state(current, values, as_node)
            current = _config.merge_configs(config, result)
        return result

    # ------------------------------------------------------------------ drawing
    def _graph_call(self, xray: int | bool) -> Call:
        kwargs = {"assistant_id": self.assistant_id, "xray": xray}
        return Call("assistants", "get_graph", kwargs, _decode.graph_of)

    def get_graph(
        self, config: Mapping[str, Any] | None = None, *, xray: int | bool = False
    ) -> Graph:
        """The server's drawing of the graph (``xray`` expands subgraphs)."""
        result: Graph = self._graph_call(xray).run(self._sync())
        return result

    async def aget_graph(
        self, config: Mapping[str, Any] | None = None, *, xray: int | bool = False
    ) -> Graph:
        """Async twin of :meth:`get_graph`."""
        result: Graph = await self._graph_call(xray).arun(self._async())
        return result

    # ------------------------------------------------------------------ v3 run streams
    _reject_v3_unsupported = staticmethod(reject_unsupported)
    """Refuse the arguments a remote v3 run stream cannot honour (LangGraph's name)."""

    def stream_events(
        self, input: Any, config: Mapping[str, Any] | None = None, *, version: str = "v3",
        **kwargs: Any,
    ) -> Any:  # fmt: skip
        """A v3 run stream of the remote run (``with ... as run: for event in run``).

        Needs LangGraph's SDK client as ``sync_client`` (its ``threads.stream``): the
        built-in client speaks the run-streaming API, which :meth:`stream` uses.
        """
        return open_v3(self, self._sync, False, input, config, version, kwargs)

    async def astream_events(
        self, input: Any, config: Mapping[str, Any] | None = None, *, version: str = "v3",
        **kwargs: Any,
    ) -> Any:  # fmt: skip
        """Async twin of :meth:`stream_events` (needs the SDK's async client as ``client``)."""
        return open_v3(self, self._async, True, input, config, version, kwargs)

    # ------------------------------------------------------------------ running
    def _run_call(
        self,
        input: Any,
        config: Mapping[str, Any] | None,
        stream_mode: str | Sequence[str],
        subgraphs: bool,
        options: dict[str, Any],
    ) -> tuple[Call, RunShape]:
        merged = _config.merge_configs(self.config, config)
        conf = dict(merged.get("configurable") or {})
        thread_id = conf.pop("thread_id", None)
        caller_ns = conf.get("checkpoint_ns") or ""
        merged["configurable"] = conf
        modes = [stream_mode] if isinstance(stream_mode, str) else list(stream_mode)
        server_modes = ["messages-tuple" if m == "messages" else m for m in modes]
        if "updates" not in server_modes:
            server_modes.append("updates")
        kwargs: dict[str, Any] = {
            "thread_id": thread_id,
            "assistant_id": self.assistant_id,
            "input": None,
            "command": None,
            "stream_mode": server_modes,
            "config": self._sanitize_config(merged),
            "stream_subgraphs": bool(subgraphs),
            "if_not_exists": "create" if thread_id else None,
            **options,
            "headers": self._tracing_headers(options.get("headers")),
        }
        if isinstance(input, Command):
            kwargs["command"] = _config.command_body(input)
        else:
            kwargs["input"] = input
        call = Call("runs", "stream", kwargs)
        shape = RunShape(
            modes=modes,
            single=isinstance(stream_mode, str),
            subgraphs=bool(subgraphs),
            caller_ns=tuple(caller_ns.split("|")) if caller_ns else (),
            where=call.where,
            secrets=self._secrets.plus((options.get("headers") or {}).values()),
        )
        return call, shape

    def stream(
        self, input: Any, config: Mapping[str, Any] | None = None, *, context: Any = None,
        stream_mode: str | Sequence[str] = "updates", interrupt_before: Nodes = None,
        interrupt_after: Nodes = None, subgraphs: bool = False,
        headers: Mapping[str, str] | None = None, **kwargs: Any,
    ) -> Iterator[Any]:  # fmt: skip
        """Run the graph on the server and yield its chunks, shaped as a local graph's.

        The stream ends when the server says the run ended; a stream cut short is a
        :class:`~stategraph.remote.RemoteError`. Called as a subgraph (the config
        carries a ``checkpoint_ns``), an interrupt of the remote run raises
        :class:`~stategraph.errors.GraphInterrupt` once the run has ended.
        """
        kwargs.update(context=context, headers=headers, interrupt_before=interrupt_before)
        kwargs["interrupt_after"] = interrupt_after
        call, shape = self._run_call(input, config, stream_mode, subgraphs, kwargs)
        with closing_events(call.bound(self._sync())(**call.kwargs)) as events:
            for event in events:
                yield from shape.emit(event)
        shape.finish()

    async def astream(
        self, input: Any, config: Mapping[str, Any] | None = None, *, context: Any = None,
        stream_mode: str | Sequence[str] = "updates", interrupt_before: Nodes = None,
        interrupt_after: Nodes = None, subgraphs: bool = False,
        headers: Mapping[str, str] | None = None, **kwargs: Any,
    ) -> AsyncIterator[Any]:  # fmt: skip
        """Async twin of :meth:`stream`."""
        kwargs.update(context=context, headers=headers, interrupt_before=interrupt_before)
        kwargs["interrupt_after"] = interrupt_after
        call, shape = self._run_call(input, config, stream_mode, subgraphs, kwargs)
        async with aclosing_events(call.bound(self._async())(**call.kwargs)) as events:
            async for event in events:
                for out in shape.emit(event):
                    yield out
        shape.finish()

    def invoke(
        self, input: Any, config: Mapping[str, Any] | None = None, *, context: Any = None,
        interrupt_before: Nodes = None, interrupt_after: Nodes = None,
        headers: Mapping[str, str] | None = None, **kwargs: Any,
    ) -> Any:  # fmt: skip
        """Run the graph on the server; returns the last state values (with
        ``__interrupt__`` when the run paused)."""
        kwargs.update(context=context, headers=headers, interrupt_before=interrupt_before)
        chunks = self.stream(
            input, config, stream_mode="values", interrupt_after=interrupt_after, **kwargs
        )
        return RunResult.of(chunks)

    async def ainvoke(
        self, input: Any, config: Mapping[str, Any] | None = None, *, context: Any = None,
        interrupt_before: Nodes = None, interrupt_after: Nodes = None,
        headers: Mapping[str, str] | None = None, **kwargs: Any,
    ) -> Any:  # fmt: skip
        """Async twin of :meth:`invoke`."""
        kwargs.update(context=context, headers=headers, interrupt_before=interrupt_before)
        chunks = self.astream(
            input, config, stream_mode="values", interrupt_after=interrupt_after, **kwargs
        )
        return await RunResult.aof(chunks)

    # ------------------------------------------------------------------ as a node
    def _node_state_call(self, config: RunnableConfig) -> Call:
        thread_id, _ = self._thread_args(config, "a node run")
        kwargs = {"thread_id": thread_id}
        return Call("threads", "get_state", kwargs, _decode.snapshot_of, missing_ok=True)

    def __call__(self, input: Any, config: RunnableConfig) -> Any:
        """Run as a node of a local graph: the remote thread is the local thread's id.

        A remote thread waiting on interrupts asks the same questions locally (the local
        graph pauses until they are answered, then the answers go to the remote run).
        """
        call = self._node_state_call(config)
        state = call.run(self._sync())
        return self.invoke(node_input(self.name, input, state, call.where), config)

    async def __stategraph_async_twin__(self, input: Any, config: RunnableConfig) -> Any:
        """The node's async twin, awaited in async runs."""
        call = self._node_state_call(config)
        state = await call.arun(self._async())
        return await self.ainvoke(node_input(self.name, input, state, call.where), config)
