"""The ``add_messages`` reducer and the ready-made ``MessagesState`` schema."""

import functools
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Annotated, Any, Literal, Union, overload

from typing_extensions import TypedDict

from stategraph import _clock
from stategraph._bridges import langchain_bridge
from stategraph.graph.state import StateGraph
from stategraph.messages import AnyMessage, BaseMessage, BaseMessageChunk, _convert_one
from stategraph.messages._base import copy_message
from stategraph.messages._chunks import is_chunk, message_chunk_to_message

__all__ = ["add_messages", "MessageGraph", "MessagesState", "REMOVE_ALL_MESSAGES"]

REMOVE_ALL_MESSAGES = "__remove_all__"
"""Id of a ``RemoveMessage`` that deletes every message before it."""

Messages = Union[Sequence[Any], Any]
"""One message-like value or a list of them."""

_FORMATS = ("langchain-openai",)


def _new_id() -> str:
    return _clock.uuid4_str()


def _with_id(message: Any) -> Any:
    """A copy of ``message`` carrying a fresh id; the caller's object is never mutated."""
    if isinstance(message, BaseMessage):
        return message._with_id(_new_id())
    model_copy = getattr(message, "model_copy", None)
    if callable(model_copy):
        return model_copy(update={"id": _new_id()})
    import copy

    new = copy.copy(message)
    new.id = _new_id()
    return new


def _in_app_family(message: BaseMessage) -> Any:
    """A message built from a dict/tuple/str, in LangChain's classes if the app uses them.

    LangGraph's reducer always builds LangChain messages; stategraph does so once the
    application has imported ``langchain_core`` (see :mod:`stategraph.interop.langchain`),
    so a ported app keeps the message classes its LangChain models expect.
    """
    bridge = langchain_bridge()
    if bridge is None or not bridge.langchain_messages():
        return message
    return bridge.to_langchain(message)


def _prepare(items: Messages) -> list[Any]:
    """Convert ``items`` to messages, each with an id (copying only where one is added)."""
    if not isinstance(items, list):
        items = [items]
    out: list[Any] = []
    append = out.append
    for item in items:
        if isinstance(item, BaseMessage):
            if isinstance(item, BaseMessageChunk):
                item = item.to_message()
                if item.id is None:
                    item.id = _new_id()  # a fresh object: ours to set
            append(item if item.id is not None else item._with_id(_new_id()))
            continue
        message = _convert_one(item)
        if is_chunk(message):
            message = message_chunk_to_message(message)
        if message is not item and isinstance(message, BaseMessage):
            message = _in_app_family(message)
        if message.id is None:
            if message is item:  # a foreign message object: copy it
                message = _with_id(message)
            else:  # freshly built from a dict/tuple/str: ours to set
                message.id = _new_id()
        append(message)
    return out


def _is_remove(message: Any) -> bool:
    return getattr(message, "type", None) == "remove"


_get_id = attrgetter("id")
_FEW_HITS = 8


def _apply(merged: list[Any], right: list[Any], index: dict[Any, int]) -> list[Any]:
    """Apply ``right`` onto ``merged`` (ids indexed by ``index``), in place, in order."""
    removed: set[str] = set()
    for message in right:
        message_id = message.id
        position = index.get(message_id)
        if position is not None:
            if _is_remove(message):
                removed.add(message_id)
            else:
                removed.discard(message_id)
                merged[position] = message
        elif _is_remove(message):
            raise ValueError(
                f"Attempting to delete a message with an ID that doesn't exist ('{message_id}')"
            )
        else:
            index[message_id] = len(merged)
            merged.append(message)
    if removed:
        return [m for m in merged if m.id not in removed]
    return merged


def _merge(left: list[Any], right: list[Any]) -> list[Any]:
    """Merge prepared ``right`` messages onto the raw ``left`` list.

    One C-level pass over ``left`` finds whether any left message lacks an id and
    whether any right id is already in ``left``; the id -> position index is only
    built in that second case, so appending new messages costs a single cheap scan.
    """
    probe: set[Any] = {m.id for m in right}
    probe.add(None)
    try:
        hits = probe.intersection(map(_get_id, left))
    except AttributeError:  # dicts, tuples or strings in ``left``: convert them
        hits = {None}
    if None in hits:
        left = _prepare(left)
        hits = probe.intersection(map(_get_id, left))
    merged = list(left)
    if not right:
        return merged
    if not hits:
        return _apply(merged, right, {})
    ids = list(map(_get_id, merged))
    if len(hits) > _FEW_HITS:
        return _apply(merged, right, dict(zip(ids, range(len(ids)), strict=True)))
    # Few hits: locate only those ids (last occurrence wins, as in a full index).
    reversed_ids = ids[::-1]
    last = len(ids) - 1
    return _apply(merged, right, {h: last - reversed_ids.index(h) for h in hits})


def _openai_content(message: Any) -> Any:
    """Normalise list content the way OpenAI chat APIs expect it."""
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        return message
    blocks = [
        {"type": "text", "text": b} if isinstance(b, str) else b
        for b in content
        if not (isinstance(b, dict) and b.get("type") == "tool_use")
    ]
    if all(isinstance(b, dict) and b.get("type") == "text" for b in blocks):
        new_content: Any = "\n".join(str(b.get("text", "")) for b in blocks)
    else:
        new_content = blocks
    if new_content == content:
        return message
    return copy_message(message, {"content": new_content})


@overload
def add_messages(
    left: Messages, right: Messages, *, format: Literal["langchain-openai"] | None = None
) -> list[Any]: ...


@overload
def add_messages(
    left: None = None, right: None = None, *, format: Literal["langchain-openai"] | None = None
) -> Callable[[Messages, Messages], list[Any]]: ...


def add_messages(
    left: Messages | None = None,
    right: Messages | None = None,
    *,
    format: Literal["langchain-openai"] | None = None,
) -> list[Any] | Callable[[Messages, Messages], list[Any]]:
    """Merge two lists of messages: the reducer behind ``MessagesState.messages``.

    Both sides may be one message-like value or a list of them (see
    :func:`~stategraph.messages.convert_to_messages`). Messages without an id get a
    fresh ``uuid4`` (on a copy: the caller's objects are never mutated). A message in
    ``right`` whose id is already in ``left`` replaces it in place; new ids are
    appended in order. ``RemoveMessage(id)`` deletes the message with that id (a
    ``ValueError`` if no such message exists); ``RemoveMessage(id=REMOVE_ALL_MESSAGES)``
    deletes everything before it, and the messages after it in ``right`` are merged onto
    an empty list.

    Message chunks (``AIMessageChunk`` and friends, a streamed reply assembled with
    ``+``) are stored as the full message they are a piece of.

    ``format="langchain-openai"`` also normalises list content to OpenAI's shape (text
    blocks joined into one string, ``tool_use`` blocks dropped). Called with keyword
    arguments only, returns the reducer with that format bound, for use as
    ``Annotated[list[AnyMessage], add_messages(format="langchain-openai")]``.
    """
    if format is not None and format not in _FORMATS:
        raise ValueError(
            f"Unrecognized format={format!r} for add_messages; use 'langchain-openai' or None."
        )
    if left is None and right is None:
        return functools.partial(add_messages, format=format)
    if left is None or right is None:
        missing = "left" if left is None else "right"
        raise ValueError(
            f"add_messages needs both 'left' and 'right'; '{missing}' is None. "
            "Pass an empty list for an empty side."
        )
    left_messages: list[Any] = left if isinstance(left, list) else [left]
    right_messages = _prepare(right)
    for i in range(len(right_messages) - 1, -1, -1):
        message = right_messages[i]
        if message.id == REMOVE_ALL_MESSAGES and _is_remove(message):
            left_messages = []
            right_messages = right_messages[i + 1 :]
            break
    merged = _merge(left_messages, right_messages)
    if format == "langchain-openai":
        merged = [_openai_content(m) for m in merged]
    return merged


def _messages_delta_reducer(current: list[Any] | None, writes: Sequence[Any]) -> list[Any]:
    """The :func:`add_messages` reducer in ``DeltaChannel`` form: folds one step's
    writes (each a message or a list of them) onto ``current``.

    Use it as ``Annotated[list[AnyMessage], DeltaChannel(_messages_delta_reducer)]``
    (LangGraph's name). Message-like dicts, tuples and strings written to such a
    channel become messages with an id before they are saved.
    """
    right: list[Any] = []
    for write in writes:
        if isinstance(write, list):
            right.extend(write)
        else:
            right.append(write)
    return add_messages(current if current is not None else [], right)


_messages_delta_reducer.converts_messages = True  # type: ignore[attr-defined]


class MessagesState(TypedDict):
    """A state schema with one key, ``messages``, merged by :func:`add_messages`."""

    messages: Annotated[list[AnyMessage], add_messages]


class MessageGraph(StateGraph[Any, Any, Any, Any]):
    """Deprecated: a graph whose whole state is a list of messages merged with
    :func:`add_messages`. Use ``StateGraph`` with a ``messages`` key instead
    (:class:`MessagesState`)."""

    def __init__(self) -> None:
        from stategraph.warnings import LangGraphDeprecatedSinceV10, warn_deprecated

        warn_deprecated(
            LangGraphDeprecatedSinceV10,
            "MessageGraph is deprecated in LangGraph v1.0.0, to be removed in v2.0.0. Please "
            "use StateGraph with a `messages` key instead.",
        )
        super().__init__(Annotated[list[AnyMessage], add_messages])  # type: ignore[arg-type]
