"""Mapping between user-facing input/output and channel writes/values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stategraph.errors import EmptyChannelError, InvalidUpdateError

if TYPE_CHECKING:
    from stategraph.channels.base import BaseChannel
    from stategraph.pregel._roles import PregelGraph
    from stategraph.types import Command

__all__ = ["NO_UPDATE", "check_output_keys", "map_input", "map_command", "read_output"]

NO_UPDATE: Any = object()
"""Returned by ``Pregel.task_update`` when a task has nothing to show in ``updates``."""


def map_input(graph: PregelGraph, value: Any) -> list[tuple[str, Any]]:
    """Turn the input of ``invoke``/``stream`` into writes to the input channels."""
    channels = graph.input_channels
    if isinstance(channels, str):
        return [(channels, value)]
    if not isinstance(value, Mapping):
        raise InvalidUpdateError(
            f"Expected a dict as input for channels {list(channels)!r}, got {type(value).__name__}."
        )
    return [(k, value[k]) for k in channels if k in value]


def map_command(cmd: Command, graph: PregelGraph) -> list[tuple[str, Any]]:
    """The writes a ``Command`` passed as input makes (its ``update`` and ``goto``)."""
    if cmd.graph is not None:
        raise InvalidUpdateError(
            "A Command with graph=... cannot be passed as input; only nodes of a subgraph "
            "can send commands to their parent."
        )
    writes: list[tuple[str, Any]] = []
    if cmd.update is not None:
        writes.extend(graph.command_update_writes(cmd))
    if cmd.goto:
        writes.extend(graph.goto_writes(cmd.goto))
    return writes


def check_output_keys(graph: PregelGraph, keys: Any) -> None:
    """Raise ``ValueError`` unless ``keys`` (a run's ``output_keys=``) names channels
    of ``graph``: one name, or a list of names."""
    names = [keys] if isinstance(keys, str) else keys
    if not isinstance(names, Sequence) or not all(isinstance(k, str) for k in names):
        raise ValueError(
            f"output_keys must be a channel name or a list of channel names, got {keys!r}."
        )
    unknown = [k for k in names if k not in graph.channels]
    if unknown:
        shown = graph.stream_keys
        known = [shown] if isinstance(shown, str) else list(shown)
        raise ValueError(
            f"output_keys names {unknown[0]!r}, which is not a channel of graph "
            f"{graph.get_name()!r} (its output channels: {known})."
        )


def read_output(channels: Mapping[str, BaseChannel], keys: str | Sequence[str]) -> Any:
    """Read the output channels: one value, or a dict of the available values."""
    if isinstance(keys, str):
        ch = channels.get(keys)
        if ch is None:
            return None
        try:
            return ch.get()
        except EmptyChannelError:
            return None
    out: dict[str, Any] = {}
    for k in keys:
        ch = channels.get(k)
        if ch is None:
            continue
        try:
            out[k] = ch.get()
        except EmptyChannelError:
            pass
    return out
