"""stategraph's own lightweight chat message types (no langchain-core needed).

Messages are plain dataclasses: cheap to build and compare, equal by value, and
rebuildable from their fields (``type(m)(**{f.name: getattr(m, f.name) ...})``), which
is how the checkpoint serializer round-trips them. Message-like objects from other
libraries (anything with ``type``, ``content`` and ``id`` attributes, e.g. langchain-core
messages) are accepted by :func:`convert_to_messages` and kept as they are.
"""

from __future__ import annotations

import copy as _copy
import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, Literal, Union

from typing_extensions import NotRequired, Self, TypedDict

from stategraph.errors import ErrorCode, create_error_message

__all__ = [
    "BaseMessage",
    "HumanMessage",
    "AIMessage",
    "SystemMessage",
    "ToolMessage",
    "RemoveMessage",
    "AnyMessage",
    "MessageLikeRepresentation",
    "ToolCall",
    "InvalidToolCall",
    "UsageMetadata",
    "convert_to_messages",
]

MessageContent = Union[str, list[Union[str, dict[str, Any]]]]
"""A message's content: a string, or a list of strings and content blocks (dicts)."""


class ToolCall(TypedDict):
    """A request from the model to call a tool."""

    name: str
    args: dict[str, Any]
    id: str | None
    type: NotRequired[Literal["tool_call"]]


class InvalidToolCall(TypedDict):
    """A tool call the model emitted but that could not be parsed."""

    name: str | None
    args: str | None
    id: str | None
    error: str | None
    type: NotRequired[Literal["invalid_tool_call"]]


class UsageMetadata(TypedDict):
    """Token counts reported by the model for one response."""

    input_tokens: int
    output_tokens: int
    total_tokens: int
    input_token_details: NotRequired[dict[str, int]]
    output_token_details: NotRequired[dict[str, int]]


@dataclass
class BaseMessage:
    """Base of every stategraph message.

    ``content`` is the only positional argument; every other field is keyword-only.
    ``type`` names the kind of message ("human", "ai", "system", "tool", "remove") and
    is fixed per class.
    """

    content: MessageContent = ""
    _: KW_ONLY
    id: str | None = None
    """Unique id; :func:`~stategraph.graph.message.add_messages` assigns one if missing."""
    name: str | None = None
    """Optional name of the speaker."""
    additional_kwargs: dict[str, Any] = field(default_factory=dict)
    """Provider-specific extra payload."""
    response_metadata: dict[str, Any] = field(default_factory=dict)
    """Provider-specific response metadata (model name, finish reason, ...)."""
    type: str = field(default="base", repr=False)
    """The message kind; fixed per class."""

    _TYPE: ClassVar[str] = "base"
    _TITLE: ClassVar[str] = "Base"

    def __post_init__(self) -> None:
        if self.type != self._TYPE:
            raise ValueError(
                f"{type(self).__name__} has type {self._TYPE!r}, got type={self.type!r}. "
                f"Drop the 'type' argument or use the message class for {self.type!r}."
            )

    @property
    def text(self) -> str:
        """The content as plain text: strings and ``text`` blocks concatenated."""
        content = self.content
        if isinstance(content, str):
            return content
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
        return "".join(parts)

    def copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """Return a shallow copy, with the fields in ``update`` replaced (validated)."""
        return dataclasses.replace(self, **dict(update or {}))

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """langchain-style alias of :meth:`copy`; ``deep=True`` deep-copies first."""
        source = _copy.deepcopy(self) if deep else self
        return source.copy(update=update)

    def _with_id(self, new_id: str) -> Self:
        """Fast shallow copy carrying ``new_id`` (used when assigning ids)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.id = new_id
        return new

    def pretty_repr(self) -> str:
        """A human-readable multi-line rendering, with a title bar."""
        title = f" {self._TITLE} Message ".center(80, "=")
        lines = [title]
        if self.name is not None:
            lines.append(f"Name: {self.name}")
        lines.append("")
        lines.append(self.text if not isinstance(self.content, str) else self.content)
        lines.extend(self._pretty_extra())
        return "\n".join(lines)

    def _pretty_extra(self) -> list[str]:
        return []

    def pretty_print(self) -> None:
        """Print :meth:`pretty_repr`."""
        print(self.pretty_repr())


@dataclass(kw_only=True)
class HumanMessage(BaseMessage):
    """A message from the user."""

    type: Literal["human"] = field(default="human", repr=False)

    _TYPE: ClassVar[str] = "human"
    _TITLE: ClassVar[str] = "Human"


@dataclass(kw_only=True)
class SystemMessage(BaseMessage):
    """Instructions to the model (also used for OpenAI's "developer" role)."""

    type: Literal["system"] = field(default="system", repr=False)

    _TYPE: ClassVar[str] = "system"
    _TITLE: ClassVar[str] = "System"


@dataclass(kw_only=True)
class AIMessage(BaseMessage):
    """A message from the model, possibly requesting tool calls."""

    tool_calls: list[ToolCall] = field(default_factory=list)
    """Tool calls, each ``{"name", "args", "id", "type": "tool_call"}``."""
    invalid_tool_calls: list[InvalidToolCall] = field(default_factory=list)
    """Tool calls that could not be parsed."""
    usage_metadata: UsageMetadata | None = None
    """Token usage of the response, if reported."""
    type: Literal["ai"] = field(default="ai", repr=False)

    _TYPE: ClassVar[str] = "ai"
    _TITLE: ClassVar[str] = "Ai"

    def __post_init__(self) -> None:
        super().__post_init__()
        calls = self.tool_calls
        if any(not isinstance(c, dict) or c.get("type") != "tool_call" for c in calls):
            self.tool_calls = [_tool_call(c, self) for c in calls]
        bad = self.invalid_tool_calls
        if any(isinstance(c, dict) and "type" not in c for c in bad):
            self.invalid_tool_calls = [
                InvalidToolCall(**{**c, "type": "invalid_tool_call"}) for c in bad
            ]

    def _pretty_extra(self) -> list[str]:
        lines: list[str] = []
        if self.tool_calls:
            lines.append("Tool Calls:")
            for call in self.tool_calls:
                lines.append(f"  {call['name']} ({call.get('id')})")
                lines.append(f" Call ID: {call.get('id')}")
                lines.append("  Args:")
                lines.extend(f"    {k}: {v}" for k, v in call["args"].items())
        return lines


def _tool_call(call: Any, message: AIMessage) -> ToolCall:
    if not isinstance(call, dict) or "name" not in call:
        raise ValueError(
            f"AIMessage(id={message.id!r}) has a malformed tool call {call!r}; each tool call "
            'must be a dict {"name": str, "args": dict, "id": str | None}.'
        )
    args = call.get("args", {})
    if not isinstance(args, dict):
        raise ValueError(
            f"Tool call {call.get('name')!r} of AIMessage(id={message.id!r}) has args "
            f"{args!r}; args must be a dict of argument name to value."
        )
    return ToolCall(name=call["name"], args=args, id=call.get("id"), type="tool_call")


@dataclass(kw_only=True)
class ToolMessage(BaseMessage):
    """The result of a tool call, sent back to the model."""

    tool_call_id: str
    """Id of the tool call this message answers."""
    status: Literal["success", "error"] = "success"
    """Whether the tool succeeded."""
    artifact: Any = None
    """Tool output that is not sent to the model (e.g. raw data)."""
    type: Literal["tool"] = field(default="tool", repr=False)

    _TYPE: ClassVar[str] = "tool"
    _TITLE: ClassVar[str] = "Tool"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.tool_call_id, str):
            self.tool_call_id = str(self.tool_call_id)
        if not isinstance(self.content, (str, list)):
            self.content = str(self.content)
        if self.status not in ("success", "error"):
            raise ValueError(
                f"ToolMessage(tool_call_id={self.tool_call_id!r}) has status {self.status!r}; "
                "use 'success' or 'error'."
            )


@dataclass(init=False)
class RemoveMessage(BaseMessage):
    """Ask :func:`~stategraph.graph.message.add_messages` to delete the message ``id``.

    ``RemoveMessage(id=REMOVE_ALL_MESSAGES)`` deletes every message before it.
    """

    type: Literal["remove"] = field(default="remove", repr=False)

    _TYPE: ClassVar[str] = "remove"
    _TITLE: ClassVar[str] = "Remove"

    def __init__(
        self,
        id: str,
        *,
        content: MessageContent = "",
        name: str | None = None,
        additional_kwargs: dict[str, Any] | None = None,
        response_metadata: dict[str, Any] | None = None,
        type: str = "remove",
    ) -> None:
        if content:
            raise ValueError(
                f"RemoveMessage(id={id!r}) takes no content; pass only the id to delete."
            )
        if not isinstance(id, str):
            raise ValueError(
                f"RemoveMessage needs the str id of the message to delete, got {id!r}."
            )
        self.content = ""
        self.id = id
        self.name = name
        self.additional_kwargs = dict(additional_kwargs or {})
        self.response_metadata = dict(response_metadata or {})
        self.type = type  # type: ignore[assignment]
        self.__post_init__()


AnyMessage = Union[AIMessage, HumanMessage, SystemMessage, ToolMessage, RemoveMessage]
"""Any concrete stategraph message (use ``list[AnyMessage]`` in state schemas)."""

MessageLikeRepresentation = Union[BaseMessage, dict[str, Any], tuple[str, Any], list[Any], str, Any]
"""What :func:`convert_to_messages` accepts for one message."""

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
    allowed = {f.name for f in dataclasses.fields(cls)} - {"content", "id", "type"}
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
