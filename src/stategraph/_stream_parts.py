"""The typed chunks of ``stream(version="v2")``: ``ValuesStreamPart`` ... ``StreamPart``.

Part of :mod:`stategraph.types`, which exports these names on first use; the classes
say ``__module__ = "stategraph.types"``.
"""

from __future__ import annotations

from typing import Any, Literal, Union, get_args

from typing_extensions import TypedDict

from stategraph.types import _STREAM_PARTS, Interrupt

__all__ = list(_STREAM_PARTS)


class _DictPart(TypedDict):
    """The keys of a part whose ``data`` is a dict (the subclasses add its ``type``)."""

    ns: tuple[str, ...]
    data: dict[str, Any]


class ValuesStreamPart(TypedDict):
    """A ``values`` chunk of ``stream(version="v2")``."""

    type: Literal["values"]
    ns: tuple[str, ...]
    data: Any
    interrupts: tuple[Interrupt, ...]


class UpdatesStreamPart(_DictPart):
    """An ``updates`` chunk of ``stream(version="v2")``."""

    type: Literal["updates"]


class CustomStreamPart(TypedDict):
    """A ``custom`` chunk of ``stream(version="v2")``."""

    type: Literal["custom"]
    ns: tuple[str, ...]
    data: Any


class MessagesStreamPart(TypedDict):
    """A ``messages`` chunk of ``stream(version="v2")``: ``(message, metadata)``."""

    type: Literal["messages"]
    ns: tuple[str, ...]
    data: tuple[Any, dict[str, Any]]


class TasksStreamPart(_DictPart):
    """A ``tasks`` chunk of ``stream(version="v2")``."""

    type: Literal["tasks"]


class CheckpointStreamPart(_DictPart):
    """A ``checkpoints`` chunk of ``stream(version="v2")``."""

    type: Literal["checkpoints"]


class DebugStreamPart(_DictPart):
    """A ``debug`` chunk of ``stream(version="v2")``."""

    type: Literal["debug"]


StreamPart = Union[
    ValuesStreamPart,
    UpdatesStreamPart,
    CustomStreamPart,
    MessagesStreamPart,
    TasksStreamPart,
    CheckpointStreamPart,
    DebugStreamPart,
]

for _cls in get_args(StreamPart):
    _cls.__module__ = "stategraph.types"  # their public home
