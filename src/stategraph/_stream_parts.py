"""The typed chunks of ``stream(version="v2")``: ``ValuesStreamPart`` ... ``StreamPart``.

Part of :mod:`stategraph.types`, which exports these names on first use; the classes
say ``__module__ = "stategraph.types"``.
"""

from __future__ import annotations

from typing import Any, Literal, Union

from typing_extensions import TypedDict

from stategraph.types import _STREAM_PARTS, Interrupt

__all__ = list(_STREAM_PARTS)


class ValuesStreamPart(TypedDict):
    """A ``values`` chunk of ``stream(version="v2")``."""

    type: Literal["values"]
    ns: tuple[str, ...]
    data: Any
    interrupts: tuple[Interrupt, ...]


class UpdatesStreamPart(TypedDict):
    """An ``updates`` chunk of ``stream(version="v2")``."""

    type: Literal["updates"]
    ns: tuple[str, ...]
    data: dict[str, Any]


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


class TasksStreamPart(TypedDict):
    """A ``tasks`` chunk of ``stream(version="v2")``."""

    type: Literal["tasks"]
    ns: tuple[str, ...]
    data: dict[str, Any]


class CheckpointStreamPart(TypedDict):
    """A ``checkpoints`` chunk of ``stream(version="v2")``."""

    type: Literal["checkpoints"]
    ns: tuple[str, ...]
    data: dict[str, Any]


class DebugStreamPart(TypedDict):
    """A ``debug`` chunk of ``stream(version="v2")``."""

    type: Literal["debug"]
    ns: tuple[str, ...]
    data: dict[str, Any]


StreamPart = Union[
    ValuesStreamPart,
    UpdatesStreamPart,
    CustomStreamPart,
    MessagesStreamPart,
    TasksStreamPart,
    CheckpointStreamPart,
    DebugStreamPart,
]

for _cls in (
    ValuesStreamPart,
    UpdatesStreamPart,
    CustomStreamPart,
    MessagesStreamPart,
    TasksStreamPart,
    CheckpointStreamPart,
    DebugStreamPart,
):
    _cls.__module__ = "stategraph.types"  # their public home
