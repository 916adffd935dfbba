"""stategraph's own lightweight chat message types (no langchain-core needed).

Messages are plain dataclasses: cheap to build and compare, equal by value, and
rebuildable from their fields (``type(m)(**{f.name: getattr(m, f.name) ...})``), which
is how the checkpoint serializer round-trips them. Message-like objects from other
libraries (anything with ``type``, ``content`` and ``id`` attributes, e.g. langchain-core
messages) are accepted by :func:`convert_to_messages` and kept as they are.

The package's modules: ``base`` (the message classes), ``chunks`` (streamed pieces,
mergeable with ``+``), ``convert`` (dicts/tuples/strings to messages) and ``utils``
(trimming, filtering, dict round trips, transcripts). Every public name is importable
from ``stategraph.messages``, and that is the module the classes report (their saved
name in checkpoints).
"""

from __future__ import annotations

from stategraph.messages.base import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    InvalidToolCall,
    MessageContent,
    MessageLikeRepresentation,
    RemoveMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UsageMetadata,
)
from stategraph.messages.chunks import (
    AIMessageChunk,
    BaseMessageChunk,
    ChatMessageChunk,
    HumanMessageChunk,
    SystemMessageChunk,
    ToolCallChunk,
    ToolMessageChunk,
    message_chunk_to_message,
)
from stategraph.messages.convert import _convert_one, convert_to_messages
from stategraph.messages.utils import (
    count_tokens_approximately,
    filter_messages,
    get_buffer_string,
    message_to_dict,
    messages_from_dict,
    messages_to_dict,
    trim_messages,
)

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
    "BaseMessageChunk",
    "AIMessageChunk",
    "HumanMessageChunk",
    "SystemMessageChunk",
    "ToolMessageChunk",
    "ChatMessageChunk",
    "ToolCallChunk",
    "message_chunk_to_message",
    "convert_to_messages",
    "trim_messages",
    "filter_messages",
    "messages_to_dict",
    "messages_from_dict",
    "message_to_dict",
    "get_buffer_string",
    "count_tokens_approximately",
    "_convert_one",
]

# The classes report this package as their module: it is their public home and the
# name checkpoints record (so the file layout inside the package can change freely).
for _cls in (
    BaseMessage,
    HumanMessage,
    AIMessage,
    SystemMessage,
    ToolMessage,
    ChatMessage,
    RemoveMessage,
    ToolCall,
    InvalidToolCall,
    UsageMetadata,
    BaseMessageChunk,
    AIMessageChunk,
    HumanMessageChunk,
    SystemMessageChunk,
    ToolMessageChunk,
    ChatMessageChunk,
    ToolCallChunk,
):
    _cls.__module__ = __name__
del _cls
