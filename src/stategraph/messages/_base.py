"""stategraph's own lightweight chat message types (no langchain-core needed).

Messages are plain dataclasses: cheap to build and compare, equal by value, and
rebuildable from their fields (``type(m)(**{f.name: getattr(m, f.name) ...})``), which
is how the checkpoint serializer round-trips them. Message-like objects from other
libraries (anything with ``type``, ``content`` and ``id`` attributes, e.g. langchain-core
messages) are accepted by :func:`convert_to_messages` and kept as they are.
"""

import copy as _copy
import dataclasses
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, Literal, Union

from typing_extensions import NotRequired, Self, TypedDict

__all__ = [
    "BaseMessage",
    "HumanMessage",
    "AIMessage",
    "SystemMessage",
    "ToolMessage",
    "ChatMessage",
    "RemoveMessage",
    "AnyMessage",
    "MessageContent",
    "MessageLikeRepresentation",
    "ToolCall",
    "InvalidToolCall",
    "UsageMetadata",
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

    def model_dump(self) -> dict[str, Any]:
        """The message's fields as a dict (``type`` included), like pydantic's method."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def copy_message(message: Any, update: dict[str, Any]) -> Any:
    """A copy of ``message`` with the fields in ``update`` replaced: ``copy()`` of one of
    ours, ``model_copy()`` of a pydantic one (LangChain's); any other value as it is."""
    if isinstance(message, BaseMessage):
        return message.copy(update=update)
    model_copy = getattr(message, "model_copy", None)
    return model_copy(update=update) if callable(model_copy) else message


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


@dataclass(kw_only=True)
class ChatMessage(BaseMessage):
    """A message with an arbitrary ``role`` (for providers with custom roles)."""

    role: str
    """The speaker's role, e.g. ``"critic"``."""
    type: Literal["chat"] = field(default="chat", repr=False)

    _TYPE: ClassVar[str] = "chat"
    _TITLE: ClassVar[str] = "Chat"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.role, str) or not self.role:
            raise ValueError(f"ChatMessage needs a non-empty str role, got {self.role!r}.")


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
