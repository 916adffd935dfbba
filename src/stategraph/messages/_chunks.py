"""Message chunks: the pieces of a reply a chat model streams, mergeable with ``+``.

``AIMessageChunk("Hel") + AIMessageChunk("lo")`` is ``AIMessageChunk("Hello")``. Tool
calls stream as ``tool_call_chunks`` (pieces of each call's JSON arguments, grouped by
``index``); every chunk also exposes the ``tool_calls`` those pieces describe so far,
and arguments that are not a JSON object end up in ``invalid_tool_calls``.
:func:`message_chunk_to_message` turns the assembled chunk into a plain message.
"""

import builtins
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal

from typing_extensions import NotRequired, TypedDict

from stategraph.messages._base import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    InvalidToolCall,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from stategraph.messages._merge import add_usage, merge_content, merge_dicts, merge_lists

__all__ = [
    "BaseMessageChunk",
    "AIMessageChunk",
    "HumanMessageChunk",
    "SystemMessageChunk",
    "ToolMessageChunk",
    "ChatMessageChunk",
    "ToolCallChunk",
    "message_chunk_to_message",
]


class ToolCallChunk(TypedDict):
    """A piece of a streamed tool call; pieces with the same ``index`` form one call."""

    name: str | None
    args: str | None
    id: str | None
    index: int | None
    type: NotRequired[Literal["tool_call_chunk"]]


def _where() -> str:
    """ " in node 'x'" when called inside a running node, else ""."""
    from stategraph._context import CURRENT_TASK

    ctx = CURRENT_TASK.get()
    return f" in node '{ctx.task_name}'" if ctx is not None else ""


def _pick_id(left: str | None, right: str | None) -> str | None:
    """The id of a merged chunk: the first one, unless it was generated (``lc_run-``)."""
    if left is None:
        return right
    if right is None or left == right:
        return left
    if left.startswith("lc_run-") and not right.startswith("lc_run-"):
        return right
    return left


@dataclass
class BaseMessageChunk(BaseMessage):
    """Base of the chunk classes: ``chunk + chunk`` (or ``chunk + [chunks]``) merges."""

    _MESSAGE: ClassVar["builtins.type[BaseMessage]"] = BaseMessage

    def __add__(self, other: Any) -> Any:
        if isinstance(other, (list, tuple)):
            merged = self
            for item in other:
                merged = merged + item
            return merged
        if type(other) is not type(self):
            raise TypeError(
                f"Cannot add {type(other).__name__} to {type(self).__name__}{_where()}: "
                "only chunks of the same class merge (the pieces of one streamed reply). "
                "Accumulate each reply's chunks separately, or convert finished chunks "
                "with message_chunk_to_message() before combining messages."
            )
        return self._merge(other)

    def _merge(self, other: Any) -> Any:
        return type(self)(**self._merged_fields(other))

    def _merged_fields(self, other: Any) -> dict[str, Any]:
        return {
            "content": merge_content(self.content, other.content),
            "id": _pick_id(self.id, other.id),
            "name": self.name if self.name is not None else other.name,
            "additional_kwargs": merge_dicts(self.additional_kwargs, other.additional_kwargs),
            "response_metadata": merge_dicts(self.response_metadata, other.response_metadata),
        }

    def to_message(self) -> BaseMessage:
        """This chunk as the plain message class it is a piece of."""
        data = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name not in ("type", "tool_call_chunks", "chunk_position")
        }
        return self._MESSAGE(**data)


@dataclass(kw_only=True)
class HumanMessageChunk(HumanMessage, BaseMessageChunk):
    """A piece of a human message."""

    type: Literal["HumanMessageChunk"] = field(default="HumanMessageChunk", repr=False)  # type: ignore[assignment]

    _TYPE: ClassVar[str] = "HumanMessageChunk"
    _MESSAGE: ClassVar["builtins.type[BaseMessage]"] = HumanMessage


@dataclass(kw_only=True)
class SystemMessageChunk(SystemMessage, BaseMessageChunk):
    """A piece of a system message."""

    type: Literal["SystemMessageChunk"] = field(default="SystemMessageChunk", repr=False)  # type: ignore[assignment]

    _TYPE: ClassVar[str] = "SystemMessageChunk"
    _MESSAGE: ClassVar["builtins.type[BaseMessage]"] = SystemMessage


@dataclass(kw_only=True)
class ChatMessageChunk(ChatMessage, BaseMessageChunk):
    """A piece of a message with a custom role; pieces must share the role."""

    type: Literal["ChatMessageChunk"] = field(default="ChatMessageChunk", repr=False)  # type: ignore[assignment]

    _TYPE: ClassVar[str] = "ChatMessageChunk"
    _MESSAGE: ClassVar["builtins.type[BaseMessage]"] = ChatMessage

    def _merge(self, other: Any) -> Any:
        if other.role != self.role:
            raise ValueError(
                f"Cannot merge ChatMessageChunks with different roles ({self.role!r} and "
                f"{other.role!r}){_where()}; each reply has one role."
            )
        return ChatMessageChunk(role=self.role, **self._merged_fields(other))


@dataclass(kw_only=True)
class ToolMessageChunk(ToolMessage, BaseMessageChunk):
    """A piece of a tool result; pieces must answer the same ``tool_call_id``."""

    type: Literal["ToolMessageChunk"] = field(default="ToolMessageChunk", repr=False)  # type: ignore[assignment]

    _TYPE: ClassVar[str] = "ToolMessageChunk"
    _MESSAGE: ClassVar["builtins.type[BaseMessage]"] = ToolMessage

    def _merge(self, other: Any) -> Any:
        if other.tool_call_id != self.tool_call_id:
            raise ValueError(
                f"Cannot merge ToolMessageChunks answering different tool calls "
                f"({self.tool_call_id!r} and {other.tool_call_id!r}){_where()}; merge only "
                "the pieces of one tool result."
            )
        status: Literal["success", "error"] = (
            "error" if "error" in (self.status, other.status) else "success"
        )
        artifact = self.artifact if other.artifact is None else other.artifact
        if self.artifact is not None and other.artifact is not None:
            artifact = _merge_artifacts(self.artifact, other.artifact)
        return ToolMessageChunk(
            tool_call_id=self.tool_call_id,
            status=status,
            artifact=artifact,
            **self._merged_fields(other),
        )


def _merge_artifacts(left: Any, right: Any) -> Any:
    if isinstance(left, str) and isinstance(right, str):
        return left + right
    if isinstance(left, list) and isinstance(right, list):
        return merge_lists(left, right)
    if isinstance(left, dict) and isinstance(right, dict):
        return merge_dicts(left, right)
    return right


def _tool_call_chunk(raw: Any) -> ToolCallChunk:
    if not isinstance(raw, dict):
        raise ValueError(
            f"A tool call chunk must be a dict with 'name', 'args' (a JSON string piece), "
            f"'id' and 'index'; got {raw!r:.200}."
        )
    args = raw.get("args")
    if args is not None and not isinstance(args, str):
        raise ValueError(
            f"Tool call chunk {raw!r:.200} has args of type {type(args).__name__}; in a "
            "chunk, args are a piece of a JSON string (use tool_calls for parsed dicts)."
        )
    return ToolCallChunk(
        name=raw.get("name"),
        args=args,
        id=raw.get("id"),
        index=raw.get("index"),
        type="tool_call_chunk",
    )


def _parse_tool_call_chunks(
    chunks: list[ToolCallChunk],
) -> tuple[list[ToolCall], list[InvalidToolCall]]:
    from stategraph.messages._merge import parse_partial_json

    calls: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    for chunk in chunks:
        raw = chunk.get("args")
        args: Any = {}
        if raw:
            try:
                args = parse_partial_json(raw)
            except ValueError:
                args = None
        if isinstance(args, dict):
            calls.append(
                ToolCall(
                    name=chunk.get("name") or "", args=args, id=chunk.get("id"), type="tool_call"
                )
            )
        else:
            invalid.append(
                InvalidToolCall(
                    name=chunk.get("name"),
                    args=raw,
                    id=chunk.get("id"),
                    error=None,
                    type="invalid_tool_call",
                )
            )
    return calls, invalid


@dataclass(kw_only=True)
class AIMessageChunk(AIMessage, BaseMessageChunk):
    """A piece of a model reply, as a model streams it.

    ``tool_call_chunks`` hold the pieces of the tool calls; ``tool_calls`` and
    ``invalid_tool_calls`` are computed from them (partial JSON is read as far as it
    goes). ``chunk_position="last"`` marks the final chunk of a reply.
    """

    tool_call_chunks: list[ToolCallChunk] = field(default_factory=list)
    """Pieces of tool calls: ``{"name", "args" (JSON text), "id", "index"}``."""
    chunk_position: Literal["last"] | None = None
    """``"last"`` on the final chunk of a reply."""
    type: Literal["AIMessageChunk"] = field(default="AIMessageChunk", repr=False)  # type: ignore[assignment]

    _TYPE: ClassVar[str] = "AIMessageChunk"
    _MESSAGE: ClassVar["builtins.type[BaseMessage]"] = AIMessage

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.tool_call_chunks:
            self.tool_call_chunks = [_tool_call_chunk(c) for c in self.tool_call_chunks]
            self.tool_calls, parsed_invalid = _parse_tool_call_chunks(self.tool_call_chunks)
            self.invalid_tool_calls = [*parsed_invalid]
        elif self.tool_calls or self.invalid_tool_calls:
            import json  # only a chunk built from parsed calls: not loaded with the messages

            self.tool_call_chunks = [
                ToolCallChunk(
                    name=c["name"],
                    args=json.dumps(c["args"]),
                    id=c.get("id"),
                    index=None,
                    type="tool_call_chunk",
                )
                for c in self.tool_calls
            ] + [
                ToolCallChunk(
                    name=c.get("name"),
                    args=c.get("args"),
                    id=c.get("id"),
                    index=None,
                    type="tool_call_chunk",
                )
                for c in self.invalid_tool_calls
            ]
        if self.chunk_position not in (None, "last"):
            raise ValueError(
                f"AIMessageChunk chunk_position must be None or 'last', got "
                f"{self.chunk_position!r}."
            )

    def _merge_text(self, other: "AIMessageChunk") -> "AIMessageChunk":
        """``self + other`` for chunks without tool calls: the common token-by-token case.

        Builds the result without re-running construction checks: every field comes from
        two already valid chunks.
        """
        merged = object.__new__(AIMessageChunk)
        left_meta, right_meta = self.response_metadata, other.response_metadata
        left_kwargs, right_kwargs = self.additional_kwargs, other.additional_kwargs
        merged.__dict__.update(
            content=merge_content(self.content, other.content),
            id=_pick_id(self.id, other.id),
            name=self.name if self.name is not None else other.name,
            additional_kwargs=merge_dicts(left_kwargs, right_kwargs)
            if right_kwargs
            else dict(left_kwargs),
            response_metadata=merge_dicts(left_meta, right_meta) if right_meta else dict(left_meta),
            type="AIMessageChunk",
            tool_calls=[],
            invalid_tool_calls=[],
            usage_metadata=add_usage(self.usage_metadata, other.usage_metadata),
            tool_call_chunks=[],
            chunk_position="last"
            if "last" in (self.chunk_position, other.chunk_position)
            else None,
        )
        return merged

    def _merge(self, other: Any) -> Any:
        if not (self.tool_call_chunks or other.tool_call_chunks):
            return self._merge_text(other)
        base = self._merged_fields(other)
        chunks = merge_lists(self.tool_call_chunks, other.tool_call_chunks)
        return AIMessageChunk(
            **base,
            tool_call_chunks=chunks,
            usage_metadata=add_usage(self.usage_metadata, other.usage_metadata),
            chunk_position="last"
            if "last" in (self.chunk_position, other.chunk_position)
            else None,
        )


def message_chunk_to_message(chunk: Any) -> Any:
    """The plain message a chunk is a piece of (other values are returned unchanged).

    ``AIMessageChunk`` becomes ``AIMessage`` with its parsed ``tool_calls`` (and
    ``invalid_tool_calls``); the chunk-only fields are dropped. Chunks of other
    libraries offering the same method (``to_message``) are converted the same way.
    """
    if isinstance(chunk, BaseMessageChunk):
        return chunk.to_message()
    if is_chunk(chunk):
        return _foreign_chunk_to_message(chunk)
    return chunk


_CHUNK_ONLY = ("type", "tool_call_chunks", "chunk_position")


def _foreign_chunk_to_message(chunk: Any) -> Any:
    """Another library's ``XMessageChunk`` as its ``XMessage`` (same module, same fields)."""
    import sys

    cls = type(chunk)
    module = sys.modules.get(cls.__module__)
    target = getattr(module, cls.__name__[: -len("Chunk")], None)
    dump = getattr(chunk, "model_dump", None)
    if not isinstance(target, type) or not callable(dump):
        return chunk
    data = {k: v for k, v in dump().items() if k not in _CHUNK_ONLY}
    return target(**data)


_CHUNK_OF: dict[str, type[BaseMessageChunk]] = {
    "ai": AIMessageChunk,
    "human": HumanMessageChunk,
    "system": SystemMessageChunk,
    "tool": ToolMessageChunk,
    "chat": ChatMessageChunk,
}


def chunk_class_for(message_type: str) -> type[BaseMessageChunk] | None:
    """The chunk class of a message kind (``"ai"`` -> :class:`AIMessageChunk`)."""
    return _CHUNK_OF.get(message_type)


def is_chunk(value: Any) -> bool:
    """Whether ``value`` is a message chunk (ours, or another library's ``...Chunk``)."""
    if isinstance(value, BaseMessageChunk):
        return True
    kind = getattr(value, "type", None)
    return isinstance(kind, str) and kind.endswith("MessageChunk")
