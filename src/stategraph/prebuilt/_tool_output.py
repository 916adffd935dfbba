"""Turning tool results and tool errors into ``ToolMessage`` s and checked ``Command`` s."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any, Union

from stategraph.messages import ToolMessage
from stategraph.messages._base import copy_message
from stategraph.prebuilt._injection import resolved_hints
from stategraph.prebuilt._tools import ToolInvocationError
from stategraph.types import Command

__all__ = [
    "ErrorHandler",
    "default_handle_tool_errors",
    "error_content",
    "format_content",
    "result_to_output",
    "invalid_tool_message",
]

ErrorHandler = Union[
    bool,
    str,
    Callable[..., str],
    type[Exception],
    tuple[type[Exception], ...],
]
"""What ``ToolNode(handle_tool_errors=...)`` accepts."""

TOOL_CALL_ERROR_TEMPLATE = "Error: {error}\n Please fix your mistakes."
INVALID_TOOL_NAME_ERROR_TEMPLATE = (
    "Error: {requested_tool} is not a valid tool, try one of [{available_tools}]."
)


def default_handle_tool_errors(e: ToolInvocationError) -> str:
    """The default error handling: report invalid arguments to the model, raise the rest.

    Only :class:`~stategraph.prebuilt.ToolInvocationError` (the model's arguments failed
    the tool's schema) becomes an error ``ToolMessage``; an exception raised while the
    tool runs propagates, as in LangGraph 1.x.
    """
    return e.message


def _handler_types(handler: Callable[..., Any]) -> tuple[type[BaseException], ...]:
    """The exception types a handler declares on its first parameter (default: Exception)."""
    try:
        params = list(inspect.signature(handler).parameters)
    except (TypeError, ValueError):
        return (Exception,)
    if not params:
        return (Exception,)
    hint = resolved_hints(handler).get(params[0])
    if hint is None:
        return (Exception,)
    members = typing.get_args(hint) if typing.get_origin(hint) is Union else (hint,)
    if type(hint).__name__ == "UnionType":
        members = typing.get_args(hint)
    types = tuple(m for m in members if isinstance(m, type) and issubclass(m, BaseException))
    return types or (Exception,)


def error_content(exc: Exception, flag: Any) -> str | None:
    """The error ``ToolMessage`` content for ``exc`` under ``flag``; ``None`` = re-raise."""
    if flag is False or flag is None:
        return None
    if flag is True:
        return TOOL_CALL_ERROR_TEMPLATE.format(error=repr(exc))
    if isinstance(flag, str):
        return flag
    if isinstance(flag, type) and issubclass(flag, BaseException):
        flag = (flag,)
    if isinstance(flag, tuple):
        if isinstance(exc, flag):
            return TOOL_CALL_ERROR_TEMPLATE.format(error=repr(exc))
        return None
    if callable(flag):
        if not isinstance(exc, _handler_types(flag)):
            return None
        return str(flag(exc))
    raise TypeError(
        f"handle_tool_errors={flag!r} is not supported; use a bool, a str, a callable "
        "(exception) -> str, an exception type, or a tuple of exception types."
    )


def invalid_tool_message(call: Mapping[str, Any], names: list[str]) -> ToolMessage:
    """The error message for a call to a tool the node does not have."""
    content = INVALID_TOOL_NAME_ERROR_TEMPLATE.format(
        requested_tool=call.get("name"), available_tools=", ".join(names)
    )
    return ToolMessage(content, name=call.get("name"), tool_call_id=_call_id(call), status="error")


def _call_id(call: Mapping[str, Any]) -> str:
    call_id = call.get("id")
    return "" if call_id is None else str(call_id)


def format_content(result: Any) -> Any:
    """Message content for a tool's return value.

    Strings stay as they are, a list of content blocks (dicts with a ``type``) is kept as
    a list, anything else is JSON-encoded (``str()`` when JSON cannot encode it).
    """
    if isinstance(result, str):
        return result
    if (
        isinstance(result, list)
        and result
        and all(isinstance(b, dict) and "type" in b for b in result)
    ):
        return result
    import json

    try:
        return json.dumps(result, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(result)


def _is_tool_message(value: Any) -> bool:
    return isinstance(value, ToolMessage) or (
        getattr(value, "type", None) == "tool" and hasattr(value, "tool_call_id")
    )


def _named(message: Any, name: str) -> Any:
    if getattr(message, "name", None) is not None:
        return message
    return copy_message(message, {"name": name})


def result_to_output(
    result: Any,
    call: Mapping[str, Any],
    tool_name: str,
    artifact_mode: bool,
    list_input: bool,
    messages_key: str,
) -> Any:
    """Turn one tool's return value into a ``ToolMessage`` or a checked ``Command``."""
    if isinstance(result, Command):
        return _check_command(result, call, tool_name, list_input, messages_key)
    if _is_tool_message(result):
        return _named(result, tool_name)
    artifact = None
    if artifact_mode:
        if not (isinstance(result, tuple) and len(result) == 2):
            raise ValueError(
                f"Tool '{tool_name}' has response_format='content_and_artifact' and must "
                f"return a (content, artifact) tuple, got {type(result).__name__}."
            )
        result, artifact = result
    return ToolMessage(
        format_content(result),
        name=tool_name,
        tool_call_id=_call_id(call),
        status="success",
        artifact=artifact,
    )


def _check_command(
    command: Command, call: Mapping[str, Any], tool_name: str, list_input: bool, messages_key: str
) -> Command:
    """Check that a tool's ``Command`` answers its tool call, and name its ToolMessages."""
    update = command.update
    if command.graph == Command.PARENT:
        if isinstance(update, Mapping) and isinstance(update.get(messages_key), list):
            named = [
                _named(m, tool_name) if _is_tool_message(m) else m for m in update[messages_key]
            ]
            return dataclasses.replace(command, update={**update, messages_key: named})
        return command
    if list_input:
        if not isinstance(update, list):
            raise ValueError(
                f"Tool '{tool_name}' returned Command(update={update!r:.200}); when the tool "
                "node's input is a list of messages, Command.update must be a list of messages."
            )
        messages = update
    else:
        if update is not None and not isinstance(update, Mapping):
            raise ValueError(
                f"Tool '{tool_name}' returned Command(update={update!r:.200}); when the tool "
                f"node's input is a state with a '{messages_key}' key, Command.update must be "
                "a dict."
            )
        messages = list((update or {}).get(messages_key) or [])
    call_id = _call_id(call)
    if not any(_is_tool_message(m) and str(m.tool_call_id) == call_id for m in messages):
        raise ValueError(
            f"Tool '{tool_name}' returned a Command without a ToolMessage answering its tool "
            f"call (id {call_id!r}); got messages {messages!r:.300}. Every tool call must be "
            "answered by a ToolMessage: return Command(update={"
            f'"{messages_key}": [ToolMessage("...", tool_call_id=tool_call_id)], ...}}) and '
            "get tool_call_id with an Annotated[str, InjectedToolCallId] parameter."
        )
    named = [_named(m, tool_name) if _is_tool_message(m) else m for m in messages]
    if list_input:
        return dataclasses.replace(command, update=named)
    assert isinstance(update, Mapping)
    return dataclasses.replace(command, update={**update, messages_key: named})
