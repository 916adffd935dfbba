"""Value wrappers the savers store inside checkpoints.

``_DeltaSnapshot`` marks the full value of a :class:`~stategraph.channels.DeltaChannel`
saved in a checkpoint's ``channel_values``: a checkpoint without one holds no value for
that channel, which is rebuilt from the nearest snapshot (or stored value) among its
ancestors plus the writes recorded since (see
``BaseCheckpointSaver.get_delta_channel_history``). The name matches LangGraph's.
The class is defined in :mod:`stategraph._delta_snapshot`, below the channels and
the savers both; this is its public path and the name stored with it.
"""

from __future__ import annotations

from stategraph._delta_snapshot import _DeltaSnapshot

__all__ = ["_DeltaSnapshot"]
