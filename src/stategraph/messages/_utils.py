"""Helpers over message lists: trimming, filtering, dict round trips, transcripts.

They take stategraph's messages and other libraries' message objects alike (anything
with ``type``, ``content`` and ``id``), and follow langchain-core's helpers of the same
names, so code written against those keeps working.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, Union

from stategraph.messages._base import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from stategraph.messages._chunks import (
    AIMessageChunk,
    ChatMessageChunk,
    HumanMessageChunk,
    SystemMessageChunk,
    ToolMessageChunk,
)
from stategraph.messages._convert import convert_to_messages

__all__ = [
    "MessagesTransform",
    "count_tokens_approximately",
    "filter_messages",
    "get_buffer_string",
    "message_to_dict",
    "messages_from_dict",
    "messages_to_dict",
    "trim_messages",
]

TypeFilter = Union[str, type, Sequence[Union[str, type]]]
"""Message kinds to match: a type string (``"human"``), a class, or a list of them."""

_KIND_OF_TYPE = {
    "AIMessageChunk": "ai",
    "HumanMessageChunk": "human",
    "SystemMessageChunk": "system",
    "ToolMessageChunk": "tool",
    "ChatMessageChunk": "chat",
    "FunctionMessageChunk": "function",
}

_CLASS_OF_TYPE: dict[str, type[BaseMessage]] = {
    "human": HumanMessage,
    "ai": AIMessage,
    "system": SystemMessage,
    "tool": ToolMessage,
    "chat": ChatMessage,
    "remove": RemoveMessage,
    "AIMessageChunk": AIMessageChunk,
    "HumanMessageChunk": HumanMessageChunk,
    "SystemMessageChunk": SystemMessageChunk,
    "ToolMessageChunk": ToolMessageChunk,
    "ChatMessageChunk": ChatMessageChunk,
}


def _kind(message: Any) -> str:
    """The message kind without the chunk suffix: ``"ai"`` for an ``AIMessageChunk``."""
    kind = getattr(message, "type", "")
    return _KIND_OF_TYPE.get(kind, kind)


def _text(message: Any) -> str:
    text = getattr(message, "text", None)
    if isinstance(text, str):
        return text
    if callable(text):  # older libraries expose text() as a method
        value = text()
        if isinstance(value, str):
            return value
    return content_text(getattr(message, "content", ""))


def content_text(content: Any) -> str:
    """A message content as plain text: a string as it is, else its strings and the
    ``text`` of its text blocks, joined."""
    if isinstance(content, str):
        return content
    return "".join(
        b if isinstance(b, str) else str(b.get("text", ""))
        for b in content
        if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
    )


class MessagesTransform:
    """A message-list function with its options bound (what the helpers return when
    called without messages): call it, or use ``invoke``/``ainvoke`` like a runnable."""

    __slots__ = ("func", "kwargs", "name")

    def __init__(self, func: Callable[..., list[Any]], name: str, kwargs: dict[str, Any]):
        self.func = func
        self.name = name
        self.kwargs = kwargs

    def __call__(self, messages: Sequence[Any]) -> list[Any]:
        return self.func(messages, **self.kwargs)

    def invoke(self, messages: Sequence[Any], config: Any = None) -> list[Any]:
        """Apply the transform to ``messages``."""
        return self(messages)

    async def ainvoke(self, messages: Sequence[Any], config: Any = None) -> list[Any]:
        """Apply the transform to ``messages``."""
        return self(messages)

    def __repr__(self) -> str:
        options = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"{self.name}({options})"


# ------------------------------------------------------------------ transcripts


def get_buffer_string(
    messages: Sequence[Any],
    human_prefix: str = "Human",
    ai_prefix: str = "AI",
    message_separator: str = "\n",
) -> str:
    """A plain-text transcript: one ``"Role: text"`` line per message.

    AI tool calls are appended to their line; chat messages use their ``role``.
    Raises ``ValueError`` for a message kind it cannot name.
    """
    lines: list[str] = []
    for message in messages:
        kind = _kind(message)
        if kind == "human":
            role = human_prefix
        elif kind == "ai":
            role = ai_prefix
        elif kind in ("system", "tool", "function"):
            role = kind.capitalize()
        elif kind == "chat":
            role = str(getattr(message, "role", "chat"))
        else:
            raise ValueError(
                f"get_buffer_string got a message of unsupported type {kind!r} "
                f"({type(message).__name__}); pass human, ai, system, tool or chat messages."
            )
        line = f"{role}: {_text(message)}"
        calls = getattr(message, "tool_calls", None) if kind == "ai" else None
        if calls:
            line += f"{calls}"
        lines.append(line)
    return message_separator.join(lines)


# ------------------------------------------------------------------ dict round trips


def message_to_dict(message: Any) -> dict[str, Any]:
    """``{"type": ..., "data": {...fields}}`` for one message (ours or a pydantic one)."""
    dump = getattr(message, "model_dump", None)
    if not callable(dump):
        raise TypeError(
            f"message_to_dict needs a message object, got {type(message).__name__}; convert "
            "dicts, tuples and strings with convert_to_messages() first."
        )
    return {"type": message.type, "data": dump()}


def messages_to_dict(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """Each message as ``{"type": ..., "data": {...}}`` (JSON-friendly when contents are)."""
    return [message_to_dict(m) for m in messages]


def messages_from_dict(messages: Sequence[dict[str, Any]]) -> list[Any]:
    """Rebuild messages from :func:`messages_to_dict` output (stategraph's classes)."""
    out: list[Any] = []
    for item in messages:
        kind = item.get("type") if isinstance(item, dict) else None
        cls = _CLASS_OF_TYPE.get(kind) if isinstance(kind, str) else None
        if cls is None:
            raise ValueError(
                f"messages_from_dict got {item!r:.200}; each item must be "
                '{"type": <kind>, "data": {...}} with a kind among '
                f"{sorted(_CLASS_OF_TYPE)}."
            )
        data = {k: v for k, v in dict(item.get("data") or {}).items() if k != "type"}
        if cls is RemoveMessage:
            out.append(RemoveMessage(id=data["id"]))
            continue
        content = data.pop("content", "")
        try:
            out.append(cls(content, **data))
        except TypeError as exc:
            raise ValueError(f"messages_from_dict cannot rebuild {kind} from {data!r:.200}: {exc}")
    return out


# ------------------------------------------------------------------ filtering


def _matches_type(message: Any, types: TypeFilter) -> bool:
    wanted = [types] if isinstance(types, (str, type)) else list(types)
    kind = getattr(message, "type", None)
    for t in wanted:
        if isinstance(t, str):
            if kind == t or _kind(message) == t:
                return True
        elif isinstance(message, t):
            return True
    return False


def filter_messages(
    messages: Sequence[Any] | None = None,
    *,
    include_names: Sequence[str] | None = None,
    exclude_names: Sequence[str] | None = None,
    include_types: TypeFilter | None = None,
    exclude_types: TypeFilter | None = None,
    include_ids: Sequence[str] | None = None,
    exclude_ids: Sequence[str] | None = None,
    exclude_tool_calls: Sequence[str] | bool | None = None,
) -> Any:
    """Keep the messages matching the filters.

    A message is dropped when any ``exclude_*`` filter matches it; when ``include_*``
    filters are given, it is kept only if at least one of them matches. Types are type
    strings (``"human"``, ``"ai"``...) or classes. ``exclude_tool_calls=True`` drops AI
    messages with tool calls and all tool messages; a list of tool-call ids drops those
    calls (an AI message left with none is dropped) and the tool messages answering
    them. Called without ``messages``, returns the filter as a reusable transform.
    """
    options = {
        "include_names": include_names,
        "exclude_names": exclude_names,
        "include_types": include_types,
        "exclude_types": exclude_types,
        "include_ids": include_ids,
        "exclude_ids": exclude_ids,
        "exclude_tool_calls": exclude_tool_calls,
    }
    if messages is None:
        return MessagesTransform(filter_messages, "filter_messages", options)
    kept: list[Any] = []
    for message in convert_to_messages(messages):
        name = getattr(message, "name", None)
        mid = getattr(message, "id", None)
        if (
            (exclude_names and name in exclude_names)
            or (exclude_types and _matches_type(message, exclude_types))
            or (exclude_ids and mid in exclude_ids)
        ):
            continue
        includes = (include_names, include_types, include_ids)
        if any(f is not None for f in includes) and not (
            (include_names and name in include_names)
            or (include_types and _matches_type(message, include_types))
            or (include_ids and mid in include_ids)
        ):
            continue
        if exclude_tool_calls:
            message = _without_tool_calls(message, exclude_tool_calls)
            if message is None:
                continue
        kept.append(message)
    return kept


def _without_tool_calls(message: Any, exclude: Sequence[str] | bool) -> Any:
    kind = _kind(message)
    if exclude is True:
        if kind == "tool" or (kind == "ai" and getattr(message, "tool_calls", None)):
            return None
        return message
    ids = set(exclude)  # type: ignore[arg-type]
    if kind == "tool":
        return None if getattr(message, "tool_call_id", None) in ids else message
    calls = getattr(message, "tool_calls", None) if kind == "ai" else None
    if not calls:
        return message
    remaining = [c for c in calls if c.get("id") not in ids]
    if not remaining:
        return None
    if len(remaining) == len(calls):
        return message
    content = message.content
    if isinstance(content, list):
        content = [
            b
            for b in content
            if not (isinstance(b, dict) and b.get("type") == "tool_use" and b.get("id") in ids)
        ]
    return _copy_with(message, {"tool_calls": remaining, "content": content})


def _copy_with(message: Any, update: dict[str, Any]) -> Any:
    if isinstance(message, BaseMessage):
        return message.copy(update=update)
    return message.model_copy(update=update)


# ------------------------------------------------------------------ token counting

_ROLE_NAME = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def count_tokens_approximately(
    messages: Iterable[Any],
    *,
    chars_per_token: float = 4.0,
    extra_tokens_per_message: float = 3.0,
    count_name: bool = True,
    tokens_per_image: int = 85,
) -> int:
    """A quick token estimate: characters / ``chars_per_token`` plus a per-message cost.

    Counts the text, the role, the name (``count_name``), tool calls and a tool
    message's ``tool_call_id``; each image block costs ``tokens_per_image``. Each
    message's share is rounded up. Good for trimming when no tokenizer is at hand.
    """
    total = 0
    for message in convert_to_messages(list(messages)):
        chars = 0
        images = 0
        content = message.content
        if isinstance(content, str):
            chars += len(content)
        else:
            for block in content:
                if isinstance(block, str):
                    chars += len(block)
                elif block.get("type") == "text":
                    chars += len(str(block.get("text", "")))
                elif block.get("type") in ("image", "image_url"):
                    images += 1
                else:
                    chars += len(repr(block))
        kind = _kind(message)
        if kind == "ai" and getattr(message, "tool_calls", None):
            chars += len(repr(message.tool_calls))
        if kind == "tool":
            chars += len(str(getattr(message, "tool_call_id", "") or ""))
        role = getattr(message, "role", None) if kind == "chat" else _ROLE_NAME.get(kind, kind)
        chars += len(str(role or ""))
        name = getattr(message, "name", None)
        if count_name and name:
            chars += len(name)
        total += math.ceil(chars / chars_per_token + extra_tokens_per_message)
        total += images * tokens_per_image
    return total


# ------------------------------------------------------------------ trimming


def _default_splitter(text: str) -> list[str]:
    """Split text into lines, each keeping its trailing newline."""
    pieces = text.split("\n")
    return [p + "\n" for p in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])


def _list_counter(token_counter: Any) -> Callable[[list[Any]], int]:
    """Normalise ``token_counter`` into a function of a list of messages."""
    if token_counter == "approximate":
        return count_tokens_approximately
    count = getattr(token_counter, "get_num_tokens_from_messages", None)
    if callable(count):  # a chat model that counts its own tokens
        return count
    if not callable(token_counter):
        raise ValueError(
            f"trim_messages got token_counter={token_counter!r}; pass len (count "
            "messages), 'approximate', a function of a list of messages, a function of one "
            "message (annotate its parameter as a message), or a model with "
            "get_num_tokens_from_messages."
        )
    if _counts_one_message(token_counter):
        return lambda msgs: sum(token_counter(m) for m in msgs)
    return token_counter


def _counts_one_message(func: Callable[..., Any]) -> bool:
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return False
    if not params:
        return False
    ann = params[0].annotation
    name = ann if isinstance(ann, str) else getattr(ann, "__name__", "")
    return isinstance(name, str) and name.endswith("Message")


def _first_max_tokens(
    messages: list[Any],
    *,
    max_tokens: int,
    counter: Callable[[list[Any]], int],
    splitter: Callable[[str], list[str]],
    partial: Literal["first", "last"] | None,
    end_on: TypeFilter | None,
) -> list[Any]:
    kept: list[Any] = []
    if counter(messages) <= max_tokens:
        kept = list(messages)
    else:
        count = 0
        while count < len(messages) and counter(messages[: count + 1]) <= max_tokens:
            count += 1
        kept = list(messages[:count])
        if partial is not None and count < len(messages):
            piece = _partial(messages[count], kept, max_tokens, counter, splitter, partial)
            if piece is not None:
                kept.append(piece)
    if end_on is not None:
        while kept and not _matches_type(kept[-1], end_on):
            kept.pop()
    return kept


def _partial(
    message: Any,
    kept: list[Any],
    max_tokens: int,
    counter: Callable[[list[Any]], int],
    splitter: Callable[[str], list[str]],
    side: Literal["first", "last"],
) -> Any:
    """The largest part of ``message`` (blocks or text pieces) that still fits."""
    content = message.content
    pieces: list[Any] = list(content) if isinstance(content, list) else splitter(content)
    if len(pieces) < 2:
        return None
    if side == "last":
        pieces = pieces[::-1]
    best = None
    for n in range(1, len(pieces)):
        part = pieces[:n] if side == "first" else pieces[:n][::-1]
        value: Any = part if isinstance(content, list) else "".join(part)
        candidate = _copy_with(message, {"content": value})
        if counter([*kept, candidate]) > max_tokens:
            break
        best = candidate
    return best


def trim_messages(
    messages: Sequence[Any] | None = None,
    *,
    max_tokens: int,
    token_counter: Any,
    strategy: Literal["first", "last"] = "last",
    allow_partial: bool = False,
    end_on: TypeFilter | None = None,
    start_on: TypeFilter | None = None,
    include_system: bool = False,
    text_splitter: Callable[[str], list[str]] | None = None,
) -> Any:
    """Keep the first or last messages that fit in ``max_tokens``.

    ``token_counter``: ``len`` (one token per message), ``"approximate"``
    (:func:`count_tokens_approximately`), a function of a list of messages, a
    function of one message (its parameter annotated as a message class), or a model
    with ``get_num_tokens_from_messages``.

    ``strategy="last"`` keeps the most recent messages; ``include_system`` keeps a
    leading system message too (its tokens count), ``start_on`` makes the result
    start on a message of that type (e.g. ``"human"``). ``end_on`` (both strategies)
    makes it end on one. ``allow_partial`` cuts the message at the boundary into
    content blocks or text pieces (``text_splitter``, lines by default) to fill the
    budget. Called without ``messages``, returns the trimmer as a reusable transform.
    """
    options = {
        "max_tokens": max_tokens,
        "token_counter": token_counter,
        "strategy": strategy,
        "allow_partial": allow_partial,
        "end_on": end_on,
        "start_on": start_on,
        "include_system": include_system,
        "text_splitter": text_splitter,
    }
    if strategy not in ("first", "last"):
        raise ValueError(f"trim_messages strategy must be 'first' or 'last', got {strategy!r}.")
    if strategy == "first" and include_system:
        raise ValueError("include_system parameter is only valid with strategy='last'")
    if strategy == "first" and start_on is not None:
        raise ValueError("start_on parameter is only valid with strategy='last'")
    if messages is None:
        return MessagesTransform(trim_messages, "trim_messages", options)
    counter = _list_counter(token_counter)
    splitter = text_splitter or _default_splitter
    msgs = convert_to_messages(messages)
    if strategy == "first":
        return _first_max_tokens(
            msgs,
            max_tokens=max_tokens,
            counter=counter,
            splitter=splitter,
            partial="first" if allow_partial else None,
            end_on=end_on,
        )
    if end_on is not None:
        while msgs and not _matches_type(msgs[-1], end_on):
            msgs.pop()
    system = msgs[0] if include_system and msgs and _kind(msgs[0]) == "system" else None
    rest = msgs[1:] if system is not None else msgs
    reverse_counter = counter
    if system is not None:
        head = system

        def reverse_counter(ms: list[Any]) -> int:
            return counter([head, *ms])

    kept = _first_max_tokens(
        rest[::-1],
        max_tokens=max_tokens,
        counter=lambda ms: reverse_counter(ms[::-1]),
        splitter=splitter,
        partial="last" if allow_partial else None,
        end_on=start_on,
    )
    kept.reverse()
    return [system, *kept] if system is not None else kept
