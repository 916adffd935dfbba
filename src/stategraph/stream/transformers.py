"""The built-in stream transformers of v3 runs.

Always registered: :class:`ValuesTransformer` (``run.values``), :class:`MessagesTransformer`
(``run.messages``), :class:`LifecycleTransformer` (``run.lifecycle``) and
:class:`SubgraphTransformer` (``run.subgraphs``). Opt-in (pass them in
``transformers=[...]``): :class:`UpdatesTransformer`, :class:`CustomTransformer`,
:class:`CheckpointsTransformer`, :class:`DebugTransformer`, :class:`TasksTransformer`,
each exposing the stream mode of the same name for the transformer's own scope.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Literal

from typing_extensions import NotRequired, TypedDict

from stategraph.stream._chat_stream import AsyncChatModelStream, ChatModelStream, message_to_events
from stategraph.stream._types import ProtocolEvent, StreamTransformer
from stategraph.stream.stream_channel import StreamChannel

if TYPE_CHECKING:
    from stategraph.stream._mux import StreamMux

__all__ = [
    "ValuesTransformer",
    "MessagesTransformer",
    "LifecycleTransformer",
    "SubgraphTransformer",
    "UpdatesTransformer",
    "CustomTransformer",
    "CheckpointsTransformer",
    "DebugTransformer",
    "TasksTransformer",
    "LifecyclePayload",
    "LifecycleCause",
    "SubgraphStatus",
]

_logger = logging.getLogger("stategraph.stream")

SubgraphStatus = Literal["started", "completed", "failed", "interrupted"]
"""Where a subgraph run stands."""


class LifecycleCause(TypedDict):
    """What started a subagent: the tool call whose tool ran it."""

    type: Literal["toolCall"]
    tool_call_id: str


class LifecyclePayload(TypedDict):
    """An item of ``run.lifecycle``: a subgraph started or ended."""

    event: SubgraphStatus
    namespace: list[str]
    graph_name: NotRequired[str]
    trigger_call_id: NotRequired[str]
    error: NotRequired[str]
    cause: NotRequired[LifecycleCause]


def _ns(event: ProtocolEvent) -> tuple[str, ...]:
    return tuple(event["params"]["namespace"])


class ValuesTransformer(StreamTransformer):
    """``run.values``: the state after each step of the transformer's own graph."""

    _native = True
    required_stream_modes = ("values",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()
        self._interrupted = False
        self._interrupts: list[Any] = []

    def init(self) -> dict[str, Any]:
        return {"values": self._log}

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "values" or _ns(event) != self.scope:
            return True
        params = event["params"]
        interrupts = params.get("interrupts")
        if interrupts:
            self._interrupted = True
            self._interrupts.extend(interrupts)
        self._log.push(params["data"])
        return True


class _ModeTransformer(StreamTransformer):
    """A projection of one stream mode, for the transformer's own scope."""

    _native = True
    _mode = ""

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()

    def init(self) -> dict[str, Any]:
        return {self._mode: self._log}

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] == self._mode and _ns(event) == self.scope:
            self._log.push(event["params"]["data"])
        return True


class UpdatesTransformer(_ModeTransformer):
    """``run.updates``: each node's update (``stream_mode="updates"``)."""

    required_stream_modes = ("updates",)
    _mode = "updates"


class CustomTransformer(_ModeTransformer):
    """``run.custom``: what nodes wrote with ``get_stream_writer()``."""

    required_stream_modes = ("custom",)
    _mode = "custom"


class CheckpointsTransformer(_ModeTransformer):
    """``run.checkpoints``: each checkpoint the run creates."""

    required_stream_modes = ("checkpoints",)
    _mode = "checkpoints"


class DebugTransformer(_ModeTransformer):
    """``run.debug``: the ``debug`` stream mode's events."""

    required_stream_modes = ("debug",)
    _mode = "debug"


class TasksTransformer(_ModeTransformer):
    """``run.tasks``: task starts and results (``stream_mode="tasks"``)."""

    required_stream_modes = ("tasks",)
    _mode = "tasks"


def _is_chunk(message: Any) -> bool:
    return type(message).__name__.endswith("Chunk")


class MessagesTransformer(StreamTransformer):
    """``run.messages``: one :class:`ChatModelStream` per AI message of the scope.

    A chat model streaming protocol events (``message-start`` ... ``message-finish``,
    keyed by the call's ``run_id``) yields a stream as soon as it starts; an
    ``AIMessage`` a node wrote whole yields a finished stream. Tool messages, message
    chunks of the legacy ``messages`` mode and other scopes are ignored.
    """

    _native = True
    required_stream_modes = ("messages",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()
        self._by_run: dict[Any, ChatModelStream] = {}
        self._by_chunk_id: dict[Any, ChatModelStream] = {}
        self._ignored_runs: set[Any] = set()
        self._pump_fn: Any = None
        self._apump_fn: Any = None
        self._is_async = False

    def init(self) -> dict[str, Any]:
        return {"messages": self._log}

    def _on_register(self, mux: Any) -> None:
        self._is_async = bool(getattr(mux, "is_async", False))

    def _bind_pump(self, fn: Any) -> None:
        self._pump_fn = fn

    def _bind_apump(self, fn: Any) -> None:
        self._apump_fn = fn

    def _new_stream(self, message_id: Any, meta: dict[str, Any]) -> ChatModelStream:
        node = meta.get("langgraph_node")
        if self._is_async or self._log._mode == "async":
            return AsyncChatModelStream(
                message_id=message_id,
                node=node,
                namespace=self.scope,
                arequest_more=self._apump_fn,
            )
        return ChatModelStream(
            message_id=message_id, node=node, namespace=self.scope, request_more=self._pump_fn
        )

    def process(self, event: ProtocolEvent) -> bool:
        method = event["method"]
        if method == "values" and _ns(event) == self.scope and self._by_chunk_id:
            # a step ended: the model calls of its tasks are over
            self._finish_chunk_streams()
        if method != "messages" or _ns(event) != self.scope:
            return True
        data = event["params"]["data"]
        if not isinstance(data, (tuple, list)) or len(data) != 2:
            return True
        payload, meta = data
        meta = meta if isinstance(meta, dict) else {}
        if isinstance(payload, dict) and "event" in payload:
            self._protocol_event(payload, meta)
        elif _is_chunk(payload):
            self._chunk(payload, meta)
        elif getattr(payload, "type", None) == "ai":
            streamed = self._by_chunk_id.pop(getattr(payload, "id", None), None)
            if streamed is not None:
                streamed.dispatch({"event": "message-finish"})
                return True
            stream = self._new_stream(getattr(payload, "id", None), meta)
            for item in message_to_events(payload):
                stream.dispatch(item)
            self._log.push(stream)
        return True

    def _chunk(self, chunk: Any, meta: dict[str, Any]) -> None:
        """A token chunk of a model call (the model-call hook's ``messages`` chunks):
        the first one starts the message's stream, the others add text to it."""
        if getattr(chunk, "type", "") not in ("AIMessageChunk", "ai"):
            return
        message_id = getattr(chunk, "id", None)
        stream = self._by_chunk_id.get(message_id)
        if stream is None:
            stream = self._new_stream(message_id, meta)
            stream.dispatch({"event": "message-start", "role": "ai", "id": message_id})
            self._by_chunk_id[message_id] = stream
            self._log.push(stream)
        content = getattr(chunk, "content", "")
        if isinstance(content, str) and content:
            stream.dispatch(
                {
                    "event": "content-block-delta",
                    "index": 0,
                    "delta": {"type": "text-delta", "text": content},
                }
            )

    def _finish_chunk_streams(self) -> None:
        for stream in self._by_chunk_id.values():
            stream.dispatch({"event": "message-finish"})
        self._by_chunk_id.clear()

    def _protocol_event(self, payload: dict[str, Any], meta: dict[str, Any]) -> None:
        run_id = meta.get("run_id")
        kind = payload.get("event")
        if kind == "message-start":
            if payload.get("role") == "tool":
                self._ignored_runs.add(run_id)
                return
            stream = self._new_stream(
                payload.get("message_id") or payload.get("id") or run_id, meta
            )
            stream.dispatch(payload)
            self._by_run[run_id] = stream
            self._log.push(stream)
            return
        if run_id in self._ignored_runs:
            if kind == "message-finish":
                self._ignored_runs.discard(run_id)
            return
        running = self._by_run.get(run_id)
        if running is None:
            return
        running.dispatch(payload)
        if kind == "message-finish":
            del self._by_run[run_id]

    def finalize(self) -> None:
        self._finish_chunk_streams()
        self._by_run.clear()
        self._ignored_runs.clear()

    def fail(self, err: BaseException) -> None:
        for stream in (*self._by_run.values(), *self._by_chunk_id.values()):
            stream.fail(err)
        self._by_run.clear()
        self._by_chunk_id.clear()
        self._ignored_runs.clear()


def _parse_ns_segment(segment: str) -> tuple[str, str | None]:
    """``"name:task_id"`` -> ``("name", "task_id")``."""
    name, sep, rest = segment.partition(":")
    return name, (rest or None) if sep else None


def _error_text(error: Any) -> str:
    if isinstance(error, BaseException):
        return str(error)
    return str(error)


def _terminal_from_result(data: dict[str, Any]) -> tuple[SubgraphStatus, str | None]:
    if data.get("interrupts"):
        return "interrupted", None
    error = data.get("error")
    if error:
        return "failed", _error_text(error)
    return "completed", None


def _status_from_exception(err: BaseException) -> tuple[SubgraphStatus, str | None]:
    from stategraph.errors import GraphInterrupt

    if isinstance(err, GraphInterrupt):
        return "interrupted", None
    return "failed", str(err)


def _tool_call_id(task_input: Any) -> str | None:
    if isinstance(task_input, dict) and task_input.get("__type") == "tool_call_with_context":
        call = task_input.get("tool_call")
        if isinstance(call, dict) and call.get("id"):
            return str(call["id"])
    if isinstance(task_input, list):
        for call in task_input:
            if isinstance(call, dict) and call.get("id"):
                return str(call["id"])
    return None


class _TasksLifecycleBase(StreamTransformer):
    """Discovers subgraph runs from ``tasks`` events and reports their start and end.

    A task event at namespace ``ns`` deeper than the scope means the subgraph at each
    prefix of ``ns`` has started; the result of the task ``name:id`` at ``ns`` ends the
    subgraph at ``ns + ("name:id",)``. Subclasses decide what to track
    (``_should_track``) and what to do (``_on_started``, ``_on_terminal``); the cause
    of a subagent start is in ``self._pending_cause``.
    """

    required_stream_modes = ("tasks",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._open: dict[tuple[str, ...], None] = {}
        self._task_info: dict[tuple[tuple[str, ...], str], tuple[Any, Any]] = {}
        self._agent_of: dict[tuple[str, ...], Any] = {}
        self._pending_cause: LifecycleCause | None = None

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        return len(ns) > len(self.scope)

    def _on_started(
        self, ns: tuple[str, ...], graph_name: str, trigger_call_id: str | None
    ) -> None:
        """The subgraph at ``ns`` started."""

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        """The subgraph at ``ns`` ended with ``status``."""

    def _in_scope(self, ns: tuple[str, ...]) -> bool:
        return ns[: len(self.scope)] == self.scope

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "tasks":
            return True
        ns = _ns(event)
        data = event["params"]["data"]
        if not isinstance(data, dict) or not self._in_scope(ns):
            return False
        if "result" in data or ("error" in data and "triggers" not in data):
            child = (*ns, f"{data.get('name')}:{data.get('id')}")
            status, error = _terminal_from_result(data)
            self._close_under(child, status, error)
            return False
        metadata = data.get("metadata") or {}
        self._task_info[(ns, str(data.get("id")))] = (data.get("input"), metadata)
        agent = metadata.get("lc_agent_name") if isinstance(metadata, dict) else None
        for depth in range(len(self.scope) + 1, len(ns) + 1):
            sub = ns[:depth]
            if sub in self._open or not self._should_track(sub):
                continue
            self._open[sub] = None
            name, call_id = _parse_ns_segment(sub[-1])
            cause: LifecycleCause | None = None
            if depth == len(ns) and agent:
                name = str(agent)
                parent_input = self._task_info.get((sub[:-1], str(call_id)), (None, None))[0]
                tool_call_id = _tool_call_id(parent_input)
                if tool_call_id is not None:
                    cause = {"type": "toolCall", "tool_call_id": tool_call_id}
            self._pending_cause = cause
            try:
                self._on_started(sub, name, call_id)
            finally:
                self._pending_cause = None
        return False

    def _close_under(
        self, prefix: tuple[str, ...], status: SubgraphStatus, error: str | None
    ) -> None:
        inner = [ns for ns in self._open if ns[: len(prefix)] == prefix]
        for ns in sorted(inner, key=len, reverse=True):
            del self._open[ns]
            self._on_terminal(ns, status, error)

    def finalize(self) -> None:
        for ns in sorted(self._open, key=len, reverse=True):
            self._on_terminal(ns, "completed", None)
        self._open.clear()

    def fail(self, err: BaseException) -> None:
        status, error = _status_from_exception(err)
        for ns in sorted(self._open, key=len, reverse=True):
            self._on_terminal(ns, status, error)
        self._open.clear()


class LifecycleTransformer(_TasksLifecycleBase):
    """``run.lifecycle``: a :class:`LifecyclePayload` when a subgraph (at any depth)
    starts, completes, fails or is interrupted; also forwarded to the main event
    stream as ``lifecycle`` events. ``tasks`` events are folded in (kept off the main
    stream)."""

    _native = True

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._channel: StreamChannel[LifecyclePayload] = StreamChannel("lifecycle")

    def init(self) -> dict[str, Any]:
        return {"lifecycle": self._channel}

    def _on_started(
        self, ns: tuple[str, ...], graph_name: str, trigger_call_id: str | None
    ) -> None:
        payload: dict[str, Any] = {
            "event": "started",
            "namespace": list(ns),
            "graph_name": graph_name,
        }
        if trigger_call_id is not None:
            payload["trigger_call_id"] = trigger_call_id
        if self._pending_cause is not None:
            payload["cause"] = self._pending_cause
        self._channel.push(payload)  # type: ignore[arg-type]

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        payload: dict[str, Any] = {"event": status, "namespace": list(ns)}
        if status == "failed" and error is not None:
            payload["error"] = error
        if not self._channel._closed:
            self._channel.push(payload)  # type: ignore[arg-type]


class SubgraphTransformer(_TasksLifecycleBase):
    """``run.subgraphs``: a handle (:class:`~stategraph.stream.SubgraphRunStream`) per
    direct child subgraph run, with the same projections as the run (``values``,
    ``messages``, ``subgraphs``...) scoped to that subgraph. Events of a subgraph are
    forwarded to its handle; grandchildren appear on the child's ``subgraphs``."""

    _native = True

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()
        self._handles: dict[tuple[str, ...], Any] = {}
        self._mux: StreamMux | None = None

    def init(self) -> dict[str, Any]:
        return {"subgraphs": self._log}

    def _on_register(self, mux: Any) -> None:
        self._mux = mux

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        return len(ns) == len(self.scope) + 1

    def process(self, event: ProtocolEvent) -> bool:
        keep = super().process(event)
        ns = _ns(event)
        if len(ns) > len(self.scope):
            handle = self._handles.get(ns[: len(self.scope) + 1])
            if handle is not None and handle.status == "started":
                child = handle._mux
                if child is not None and not child._closed:
                    child.push(event)
                if len(ns) == len(self.scope) + 1:
                    handle._observe_event(event)
        return keep

    def _on_started(
        self, ns: tuple[str, ...], graph_name: str, trigger_call_id: str | None
    ) -> None:
        from stategraph.stream.run_stream import AsyncSubgraphRunStream, SubgraphRunStream

        assert self._mux is not None
        child = self._mux._make_child(ns)
        cls = AsyncSubgraphRunStream if self._mux.is_async else SubgraphRunStream
        handle = cls(child, path=ns, graph_name=graph_name, trigger_call_id=trigger_call_id)
        self._handles[ns] = handle
        self._log.push(handle)

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        handle = self._handles.get(ns)
        if handle is None or handle.status != "started":
            return
        handle.status = status
        handle.error = error
        child = handle._mux
        if child is None or child._closed:
            return
        if status == "failed":
            child.fail(RuntimeError(error or "subgraph failed"))
        else:
            child.close()
