"""Converting between stategraph's message classes and LangChain's."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langchain_core import messages as lc
from langchain_core.language_models import BaseLanguageModel
from langchain_core.runnables import Runnable

import stategraph.messages as sg

__all__ = [
    "to_langchain",
    "to_langchain_messages",
    "from_langchain",
    "is_langchain_message",
    "is_langchain_model",
    "langchain_class_for",
]

_LC_CLASS: dict[type, type] = {
    sg.HumanMessage: lc.HumanMessage,
    sg.AIMessage: lc.AIMessage,
    sg.SystemMessage: lc.SystemMessage,
    sg.ToolMessage: lc.ToolMessage,
    sg.ChatMessage: lc.ChatMessage,
    sg.AIMessageChunk: lc.AIMessageChunk,
    sg.HumanMessageChunk: lc.HumanMessageChunk,
    sg.SystemMessageChunk: lc.SystemMessageChunk,
    sg.ToolMessageChunk: lc.ToolMessageChunk,
    sg.ChatMessageChunk: lc.ChatMessageChunk,
}
_SG_CLASS: dict[type, type] = {v: k for k, v in _LC_CLASS.items()}

_FIELDS: dict[type, tuple[str, ...]] = {
    sg.AIMessage: ("tool_calls", "invalid_tool_calls", "usage_metadata"),
    sg.AIMessageChunk: ("tool_call_chunks", "usage_metadata", "chunk_position"),
    sg.ToolMessage: ("tool_call_id", "status", "artifact"),
    sg.ToolMessageChunk: ("tool_call_id", "status", "artifact"),
    sg.ChatMessage: ("role",),
    sg.ChatMessageChunk: ("role",),
}
_COMMON = ("id", "name", "additional_kwargs", "response_metadata")


def is_langchain_message(value: Any) -> bool:
    """Whether ``value`` is a langchain-core message."""
    return isinstance(value, lc.BaseMessage)


def is_langchain_model(value: Any) -> bool:
    """Whether ``value`` is a LangChain runnable taking messages (a chat model...)."""
    return isinstance(value, (BaseLanguageModel, Runnable))


def langchain_class_for(value: Any) -> type | None:
    """The LangChain class matching a stategraph message's class."""
    return _LC_CLASS.get(type(value))


def to_langchain(message: Any) -> Any:
    """``message`` as a LangChain message (LangChain messages are returned as they are)."""
    if isinstance(message, lc.BaseMessage):
        return message
    if isinstance(message, sg.RemoveMessage):
        return lc.RemoveMessage(id=str(message.id))
    cls = _LC_CLASS.get(type(message))
    if cls is None:
        return message
    data: dict[str, Any] = {k: getattr(message, k) for k in _COMMON}
    for key in _FIELDS.get(type(message), ()):
        data[key] = getattr(message, key)
    if isinstance(message, sg.AIMessageChunk):
        data.pop("chunk_position", None)
        if message.chunk_position is not None:
            data["chunk_position"] = message.chunk_position
    return cls(content=message.content, **data)


def to_langchain_messages(messages: Iterable[Any]) -> list[Any]:
    """Each message converted with :func:`to_langchain`."""
    return [to_langchain(m) for m in messages]


def from_langchain(message: Any) -> Any:
    """A LangChain message as stategraph's (other values are returned as they are)."""
    if isinstance(message, lc.RemoveMessage):
        return sg.RemoveMessage(id=message.id or "")
    cls = _SG_CLASS.get(type(message))
    if cls is None:
        return message
    data: dict[str, Any] = {k: getattr(message, k) for k in _COMMON}
    for key in _FIELDS.get(cls, ()):
        data[key] = getattr(message, key, None)
    if cls is sg.AIMessageChunk:
        data.pop("tool_call_chunks", None)
        data["tool_call_chunks"] = list(message.tool_call_chunks)
    return cls(message.content, **data)
