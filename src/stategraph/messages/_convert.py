"""Turning message-like values (dicts, tuples, strings) into message objects."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from stategraph.errors import ErrorCode, create_error_message
from stategraph.messages._base import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    MessageLikeRepresentation,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)

__all__ = ["convert_to_messages"]

_ROLES: dict[str, type[BaseMessage]] = {
    "human": HumanMessage,
    "user": HumanMessage,
    "ai": AIMessage,
    "assistant": AIMessage,
    "system": SystemMessage,
    "developer": SystemMessage,
    "tool": ToolMessage,
    "remove": RemoveMessage,
}

_ACCEPTED = (
    "Accepted forms: a message object (stategraph's, or any object with 'type', 'content' "
    "and 'id' attributes, such as langchain-core messages); a dict "
    '{"role": ..., "content": ...} (optionally with "id", "name", "tool_calls", '
    '"tool_call_id"; "type" may replace "role"); a (role, content) tuple; or a plain '
    "string (a human message). Roles: user/human, assistant/ai, system/developer, tool, remove."
)


def _invalid(item: Any, problem: str) -> ValueError:
    return ValueError(
        create_error_message(
            message=f"Cannot convert {item!r} to a message: {problem}. {_ACCEPTED}",
            error_code=ErrorCode.INVALID_CHAT_HISTORY,
        )
    )


def _role_class(role: Any, item: Any) -> type[BaseMessage]:
    cls = _ROLES.get(role) if isinstance(role, str) else None
    if cls is None:
        raise _invalid(item, f"unknown role {role!r}")
    return cls


def _openai_tool_call(call: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Split an OpenAI-style tool call into (valid call, invalid call)."""
    function = call["function"]
    raw = function.get("arguments") or "{}"
    import json

    base = {"name": function.get("name"), "id": call.get("id")}
    if isinstance(raw, dict):
        return {**base, "args": raw}, None
    try:
        args = json.loads(raw)
    except (TypeError, ValueError) as exc:
        return None, {**base, "args": raw, "error": f"arguments are not valid JSON: {exc}"}
    if not isinstance(args, dict):
        return None, {**base, "args": raw, "error": "arguments must be a JSON object"}
    return {**base, "args": args}, None


_ALLOWED: dict[type, frozenset[str]] = {}
"""Per message class: the keyword arguments a message dict may fill (besides content/id)."""


def _from_dict(item: Mapping[str, Any]) -> BaseMessage:
    data = dict(item)
    role = data.pop("role") if "role" in data else data.pop("type", None)
    if role is None:
        raise _invalid(item, "a message dict needs a 'role' (or 'type') key")
    cls = _role_class(role, item)
    msg_id = data.pop("id", None)
    if msg_id is not None and not isinstance(msg_id, str):
        msg_id = str(msg_id)
    if cls is RemoveMessage:
        if msg_id is None:
            raise _invalid(item, "a 'remove' message needs the 'id' of the message to delete")
        data.pop("content", None)
        return RemoveMessage(id=msg_id)
    if "content" not in data and not (cls is AIMessage and data.get("tool_calls")):
        raise _invalid(item, "a message dict needs a 'content' key")
    content = data.pop("content", None)
    kwargs: dict[str, Any] = {"id": msg_id}
    allowed = _ALLOWED.get(cls)
    if allowed is None:
        allowed = _ALLOWED[cls] = frozenset(
            {f.name for f in dataclasses.fields(cls)} - {"content", "id", "type"}
        )
    extra = dict(data.pop("additional_kwargs", None) or {})
    for key, value in data.items():
        if key in allowed:
            kwargs[key] = value
        else:
            extra[key] = value
    if role == "developer":
        extra["__openai_role__"] = "developer"
    if cls is AIMessage and kwargs.get("tool_calls"):
        calls: list[dict[str, Any]] = []
        invalid = list(kwargs.get("invalid_tool_calls") or [])
        for call in kwargs["tool_calls"]:
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                good, bad = _openai_tool_call(call)
                calls.extend([good] if good else [])
                invalid.extend([bad] if bad else [])
            else:
                calls.append(call)
        kwargs["tool_calls"] = calls
        kwargs["invalid_tool_calls"] = invalid
    if cls is ToolMessage and kwargs.get("tool_call_id") is None:
        raise _invalid(item, "a 'tool' message needs a 'tool_call_id'")
    kwargs["additional_kwargs"] = extra
    try:
        return cls("" if content is None else content, **kwargs)
    except (TypeError, ValueError) as exc:
        raise _invalid(item, str(exc)) from exc


def _convert_one(item: Any) -> Any:
    """Convert one message-like value; message objects are returned unchanged."""
    if isinstance(item, BaseMessage):
        return item
    if isinstance(item, str):
        return HumanMessage(item)
    if isinstance(item, Mapping):
        return _from_dict(item)
    if isinstance(item, (tuple, list)):
        if len(item) != 2:
            raise _invalid(item, f"a tuple must be (role, content), got {len(item)} items")
        role, content = item
        cls = _role_class(role, item)
        if cls is ToolMessage or cls is RemoveMessage:
            raise _invalid(item, f"role {role!r} needs an id; use a dict instead of a tuple")
        extra = {"__openai_role__": "developer"} if role == "developer" else {}
        return cls(content, additional_kwargs=extra)
    if hasattr(item, "type") and hasattr(item, "content") and hasattr(item, "id"):
        return item
    raise _invalid(item, f"unsupported type {type(item).__name__}")


def convert_to_messages(messages: Iterable[MessageLikeRepresentation] | Any) -> list[Any]:
    """Convert message-like values into a list of messages.

    Accepts an iterable of: message objects (kept as they are, as are other libraries'
    objects with ``type``, ``content`` and ``id``), dicts with a ``role`` (``user``/
    ``human``, ``assistant``/``ai``, ``system``/``developer``, ``tool``, ``remove``) and
    ``content``, ``(role, content)`` tuples, and strings (human messages). A single
    message, dict or string is treated as a one-item list. Raises ``ValueError`` naming
    the offending item otherwise.
    """
    if isinstance(messages, (str, Mapping, BaseMessage)):
        return [_convert_one(messages)]
    return [m if isinstance(m, BaseMessage) else _convert_one(m) for m in messages]
