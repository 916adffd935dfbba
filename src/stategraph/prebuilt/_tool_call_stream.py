"""``run.tool_calls`` for v3 runs: one :class:`ToolCallStream` per tool call.

:class:`ToolCallTransformer` reads the ``tools`` stream mode, which ``ToolNode``
reports to (``tool-started``, ``tool-output-delta``, ``tool-finished``,
``tool-error``), and turns each call of its scope into a handle holding the call's
name and input, its streamed output deltas and its outcome. Compile a graph with
``transformers=[ToolCallTransformer]`` (``langchain.agents.create_agent`` does) or pass
it to ``stream_events(..., transformers=[...])``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stategraph.stream import StreamChannel, StreamTransformer
from stategraph.stream._types import ProtocolEvent

__all__ = ["ToolCallStream", "ToolCallTransformer"]


class ToolCallStream:
    """One tool call's lifecycle in a v3 run.

    ``tool_call_id``, ``tool_name`` and ``input`` come with the start; ``output_deltas``
    is a channel of what the tool streamed (``ToolRuntime.emit_output_delta``), closed
    when the call ends; ``output`` is the call's result (its ``ToolMessage`` or
    ``Command``) and ``error`` the error text, each ``None`` until (and unless) the call
    ends that way; ``completed`` tells whether it ended.
    """

    def __init__(
        self,
        tool_call_id: str | None,
        tool_name: str | None,
        input: Any,
        namespace: tuple[str, ...],
        output_deltas: StreamChannel[Any],
    ) -> None:
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self.input = input
        self.namespace = namespace
        self.output_deltas = output_deltas
        self.output: Any = None
        self.error: str | None = None
        self.completed = False

    def __repr__(self) -> str:
        state = "failed" if self.error is not None else "done" if self.completed else "running"
        return f"ToolCallStream({self.tool_name!r}, id={self.tool_call_id!r}, {state})"

    def _finish(self, output: Any) -> None:
        self.output = output
        self.completed = True
        self.output_deltas.close()

    def _fail(self, error: str) -> None:
        self.error = error
        self.completed = True
        self.output_deltas.close()


class ToolCallTransformer(StreamTransformer):
    """Projects the ``tools`` stream mode of its scope into ``run.tool_calls``."""

    _native = True
    supports_sync = True
    required_stream_modes = ("tools",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._calls: StreamChannel[ToolCallStream] = StreamChannel()
        self._active: dict[Any, ToolCallStream] = {}
        self._is_async = False
        self._pump: Callable[[], bool] | None = None
        self._apump: Any = None

    def init(self) -> dict[str, Any]:
        return {"tool_calls": self._calls}

    def _on_register(self, mux: Any) -> None:
        self._is_async = bool(getattr(mux, "is_async", False))

    def _bind_pump(self, fn: Callable[[], bool]) -> None:
        self._pump = fn
        for handle in self._active.values():
            handle.output_deltas._request_more = fn

    def _bind_apump(self, fn: Any) -> None:
        self._apump = fn
        for handle in self._active.values():
            handle.output_deltas._arequest_more = fn

    def _new_channel(self) -> StreamChannel[Any]:
        channel: StreamChannel[Any] = StreamChannel()
        channel._bind(is_async=self._is_async)
        channel._request_more = self._pump
        channel._arequest_more = self._apump
        return channel

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "tools":
            return True
        params = event["params"]
        if tuple(params.get("namespace") or ()) != self.scope:
            return True
        data = params.get("data")
        if not isinstance(data, dict):
            return True
        kind = data.get("event")
        call_id = data.get("tool_call_id")
        if kind == "tool-started":
            handle = ToolCallStream(
                call_id, data.get("tool_name"), data.get("input"), self.scope, self._new_channel()
            )
            self._active[call_id] = handle
            self._calls.push(handle)
            return True
        handle_or_none = self._active.get(call_id)
        if handle_or_none is None:
            return True
        if kind == "tool-output-delta":
            handle_or_none.output_deltas.push(data.get("delta"))
        elif kind == "tool-finished":
            self._active.pop(call_id, None)._finish(data.get("output"))  # type: ignore[union-attr]
        elif kind == "tool-error":
            self._active.pop(call_id, None)._fail(str(data.get("message")))  # type: ignore[union-attr]
        return True

    def finalize(self) -> None:
        """Close the handles of calls still open when the run ended."""
        for handle in self._active.values():
            handle.output_deltas.close()
        self._active.clear()
        self._calls.close()

    def fail(self, err: BaseException) -> None:
        """Fail the handles of calls still open when the run failed."""
        for handle in self._active.values():
            handle.error = str(err)
            handle.completed = True
            handle.output_deltas.fail(err)
        self._active.clear()
        self._calls.fail(err)
