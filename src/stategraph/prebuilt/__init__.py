"""Ready-made pieces for tool-calling agents: ToolNode, tools_condition, create_react_agent,
ValidationNode, and the human-in-the-loop shapes of ``stategraph.prebuilt.interrupt``.

Names are imported lazily, so ``import stategraph.prebuilt`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stategraph._lazy import lazy_attributes

__all__ = [
    "AgentState",
    "AgentStatePydantic",
    "AsyncToolNode",
    "InjectedState",
    "InjectedStore",
    "InjectedToolArg",
    "InjectedToolCallId",
    "Tool",
    "ToolInvocationError",
    "ToolNode",
    "create_react_agent",
    "tool",
    "tools_condition",
    "ToolRuntime",
    "ToolCallRequest",
    "ToolCallStream",
    "ToolCallTransformer",
    "ValidationNode",
]

_LAZY = {
    "AgentState": "stategraph.prebuilt.chat_agent_executor",
    "AgentStatePydantic": "stategraph.prebuilt.chat_agent_executor",
    "ToolRuntime": "stategraph.prebuilt._tool_runtime",
    "ToolCallRequest": "stategraph.prebuilt._tool_runtime",
    "ToolCallStream": "stategraph.prebuilt._tool_call_stream",
    "ToolCallTransformer": "stategraph.prebuilt._tool_call_stream",
    "ValidationNode": "stategraph.prebuilt.tool_validator",
    "create_react_agent": "stategraph.prebuilt.chat_agent_executor",
    "AsyncToolNode": "stategraph.prebuilt.tool_node",
    "ToolNode": "stategraph.prebuilt.tool_node",
    "tools_condition": "stategraph.prebuilt.tool_node",
    "InjectedState": "stategraph.prebuilt._injection",
    "InjectedStore": "stategraph.prebuilt._injection",
    "InjectedToolArg": "stategraph.prebuilt._injection",
    "InjectedToolCallId": "stategraph.prebuilt._injection",
    "Tool": "stategraph.prebuilt._tools",
    "ToolInvocationError": "stategraph.prebuilt._tools",
    "tool": "stategraph.prebuilt._tools",
}

if TYPE_CHECKING:
    from stategraph.prebuilt._injection import (
        InjectedState,
        InjectedStore,
        InjectedToolArg,
        InjectedToolCallId,
    )
    from stategraph.prebuilt._tool_call_stream import ToolCallStream, ToolCallTransformer
    from stategraph.prebuilt._tool_runtime import ToolCallRequest, ToolRuntime
    from stategraph.prebuilt._tools import Tool, ToolInvocationError, tool
    from stategraph.prebuilt.chat_agent_executor import (
        AgentState,
        AgentStatePydantic,
        create_react_agent,
    )
    from stategraph.prebuilt.tool_node import AsyncToolNode, ToolNode, tools_condition
    from stategraph.prebuilt.tool_validator import ValidationNode


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
