"""Value wrappers the savers store inside checkpoints.

``_DeltaSnapshot`` marks the full value of a :class:`~stategraph.channels.DeltaChannel`
saved in a checkpoint's ``channel_values``: a checkpoint without one holds no value for
that channel, which is rebuilt from the nearest snapshot (or stored value) among its
ancestors plus the writes recorded since (see
``BaseCheckpointSaver.get_delta_channel_history``). The name matches LangGraph's.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["_DeltaSnapshot"]


class _DeltaSnapshot(NamedTuple):
    """The full value of a delta channel, stored as a seed for later checkpoints."""

    value: Any
    """The channel's value at the checkpoint that holds this snapshot."""
