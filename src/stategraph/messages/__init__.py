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

from typing import TYPE_CHECKING

from stategraph._lazy import lazy_attributes
from stategraph.messages import _base as _base
from stategraph.messages import _chunks as _chunks
from stategraph.messages._base import (  # noqa: F401 (in __all__, from base.__all__)
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
from stategraph.messages._chunks import (  # noqa: F401 (in __all__, from chunks.__all__)
    AIMessageChunk,
    BaseMessageChunk,
    ChatMessageChunk,
    HumanMessageChunk,
    SystemMessageChunk,
    ToolCallChunk,
    ToolMessageChunk,
    message_chunk_to_message,
)
from stategraph.messages._convert import _convert_one, convert_to_messages  # noqa: F401

# The helpers of ``utils`` (trimming, filtering, dict round trips, transcripts) load on
# first use: a graph over messages needs none of them.
_UTILS = (  # the public names of ``utils`` but ``MessagesTransform``
    "trim_messages",
    "filter_messages",
    "messages_to_dict",
    "messages_from_dict",
    "message_to_dict",
    "get_buffer_string",
    "count_tokens_approximately",
)
if TYPE_CHECKING:
    from stategraph.messages._utils import (  # noqa: F401 (in __all__: _UTILS)
        count_tokens_approximately,
        filter_messages,
        get_buffer_string,
        message_to_dict,
        messages_from_dict,
        messages_to_dict,
        trim_messages,
    )

# The package's names are its modules' (the public ones of ``utils`` but its
# ``MessagesTransform``: ``_UTILS``), plus ``convert_to_messages``; ``_convert_one`` is
# imported by the checkpoint serializer from here.
__all__: list[str] = []
__all__ += _base.__all__
__all__ += _chunks.__all__
__all__ += ["convert_to_messages"]
__all__ += _UTILS
__all__.append("_convert_one")

# The classes report this package as their module: it is their public home and the
# name checkpoints record (so the file layout inside the package can change freely).
for _name in [*_base.__all__, *_chunks.__all__]:
    _obj = globals()[_name]
    if isinstance(_obj, type):
        _obj.__module__ = __name__
del _name, _obj

__getattr__, _ = lazy_attributes(
    __name__, dict.fromkeys(_UTILS, "stategraph.messages._utils"), globals()
)


def __dir__() -> list[str]:
    """The package's names, the ``utils`` helpers listed before their first use."""
    return sorted({*globals(), *__all__})
