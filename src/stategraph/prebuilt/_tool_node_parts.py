"""Helpers of :class:`~stategraph.prebuilt.ToolNode` (and of ``ValidationNode``):
parsed input, message family, checks on the list of tools or schemas given and on
what tool-call wrappers pass and return, and the running graph's config."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stategraph.messages import ToolCall
from stategraph.prebuilt._tool_runtime import ToolCallRequest
from stategraph.types import Command

__all__ = [
    "Parsed",
    "current_graph_state",
    "is_tool_call_list",
    "family_bridge",
    "last_ai",
    "check_list",
    "checked_call",
    "checked_result",
    "current_store",
    "current_config",
]


class Parsed:
    """The tool calls to run, the state to inject from, and the output shape.

    ``bridge`` is the LangChain bridge when the calls come from a LangChain
    ``AIMessage``: the answers are then LangChain ``ToolMessage`` s too.
    """

    __slots__ = ("bridge", "calls", "list_input", "state")

    def __init__(
        self, calls: list[ToolCall], state: Any, list_input: bool, source: Any = None
    ) -> None:
        self.calls = calls
        self.state = state
        self.list_input = list_input
        self.bridge = family_bridge(source)


def family_bridge(message: Any) -> Any:
    """The LangChain bridge if ``message`` is a LangChain message, else ``None``."""
    if message is None or type(message).__module__.startswith("stategraph."):
        return None
    from stategraph._bridges import langchain_bridge

    bridge = langchain_bridge()
    if bridge is None or not bridge.is_langchain_message(message):
        return None
    return bridge


def last_ai(messages: Any) -> Any:
    for message in reversed(list(messages or ())):
        if getattr(message, "type", None) == "ai":
            return message
    return None


def is_tool_call_list(value: Any) -> bool:
    """Whether a node input is a list of tool calls (``Send("tools", [tool_call])``, as
    LangChain's ``create_agent`` sends them)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, Mapping) and v.get("type") == "tool_call" for v in value)
    )


def current_graph_state() -> Any:
    """The running graph's state as the calling task sees it (its keys' current values),
    or ``None`` outside a graph run: what tools given only tool calls get injected."""
    from stategraph.observe import current_run_and_task

    current = current_run_and_task()
    if current is None:
        return None
    run, task = current
    read = getattr(task, "read", None)  # (Task.read: the step's channels, its own writes)
    keys = getattr(run.graph, "stream_channels", None)
    if read is None or keys is None or getattr(task, "channels", None) is None:
        return None
    names = [keys] if isinstance(keys, str) else list(keys)
    values = read(names)
    return dict(values) if isinstance(values, Mapping) else values


def current_store() -> Any:
    from stategraph.config import get_store

    try:
        return get_store()
    except RuntimeError:  # called directly, outside a running graph
        return None


def current_config() -> Mapping[str, Any] | None:
    from stategraph.config import get_config

    try:
        return get_config()
    except RuntimeError:  # called directly, outside a running graph
        return None


def check_list(items: Any, node: str, what: str, example: str) -> None:
    """Raise ``TypeError`` unless ``items`` (what ``node`` was built with) is a list:
    "ToolNode takes a list of tools, got dict; e.g. ToolNode([search, calculator])."."""
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise TypeError(
            f"{node} takes a list of {what}, got {type(items).__name__}; e.g. {node}({example})."
        )


def checked_call(request: Any, node: str) -> ToolCall:
    if not isinstance(request, ToolCallRequest):
        raise TypeError(
            f"ToolNode '{node}': the tool-call wrapper passed {type(request).__name__} to "
            "execute(); pass the ToolCallRequest it received (or request.override(...))."
        )
    call = request.tool_call
    if not isinstance(call, dict) or "name" not in call:
        raise TypeError(
            f"ToolNode '{node}': the wrapper's request has tool_call={call!r:.200}; it must "
            'be a dict {"name", "args", "id"}.'
        )
    return ToolCall(
        name=call["name"], args=dict(call.get("args") or {}), id=call.get("id"), type="tool_call"
    )


def checked_result(result: Any, node: str) -> Any:
    if isinstance(result, Command) or getattr(result, "type", None) == "tool":
        return result
    raise TypeError(
        f"ToolNode '{node}': the tool-call wrapper returned {type(result).__name__} "
        f"{result!r:.200}; it must return a ToolMessage or a Command (the result of "
        "execute(request), or one it builds)."
    )
