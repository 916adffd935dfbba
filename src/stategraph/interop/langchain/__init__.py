"""LangChain inside stategraph: chat models, tools and message classes.

Loaded by stategraph only after the application imported ``langchain_core``; it then

* lets LangChain chat models called in a node stream their tokens to
  ``stream_mode="messages"`` (their callbacks report to the model-call hook),
* converts messages at the boundary of a LangChain model used by
  ``create_react_agent`` (stategraph messages become LangChain ones),
* keeps the state in LangChain's message classes, as LangGraph does: dicts, tuples
  and strings given to ``add_messages`` become LangChain messages, and ``ToolNode``
  answers a LangChain ``AIMessage`` with a LangChain ``ToolMessage``,
* turns plain functions given to ``ToolNode`` into LangChain tools, as LangGraph does,
* makes ``Command`` a LangChain tool output and the injection markers LangChain
  injected arguments (see :mod:`~stategraph.interop.langchain._tool_types`), so
  LangChain ``@tool`` s returning ``Command`` or taking ``InjectedState`` work as in
  LangGraph.

``use_langchain_messages(False)`` turns the last point off (stategraph's own message
classes are then used even when ``langchain_core`` is loaded).
"""

from __future__ import annotations

from stategraph.interop.langchain._messages import (
    from_langchain,
    is_langchain_message,
    is_langchain_model,
    to_langchain,
    to_langchain_messages,
)
from stategraph.interop.langchain._scope import enter_call, enter_task, runnable_config
from stategraph.interop.langchain._tool_types import adopt_langchain_tool_types, as_langchain_tool

__all__ = [
    "adopt_langchain_tool_types",
    "as_langchain_tool",
    "use_langchain_messages",
    "langchain_messages",
    "enter_call",
    "enter_task",
    "runnable_config",
    "to_langchain",
    "to_langchain_messages",
    "from_langchain",
    "is_langchain_message",
    "is_langchain_model",
]

_MESSAGES = [True]

adopt_langchain_tool_types()


def use_langchain_messages(on: bool) -> None:
    """Choose whether message-likes become LangChain messages (default: yes)."""
    _MESSAGES[0] = bool(on)


def langchain_messages() -> bool:
    """Whether dicts/tuples/strings become LangChain messages (see the module doc)."""
    return _MESSAGES[0]
