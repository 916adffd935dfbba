"""When a ``DeltaChannel``'s value is stored whole: the snapshot rule and its counters.

A delta channel's value at a checkpoint is rebuilt by walking back to the nearest
stored value. Each checkpoint's metadata carries, under :data:`COUNTERS_KEY`, per delta
channel written so far, ``[updates, supersteps]`` since its last stored value: the
steps that changed it, and the checkpoints saved since. The value is stored again once
the updates reach the channel's ``snapshot_frequency`` or the supersteps reach
:data:`DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT`, so a channel that stopped changing long
ago is not looked for thousands of checkpoints back. (The names are LangGraph's, at the
same module path under ``stategraph``.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "COUNTERS_KEY",
    "DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT",
    "delta_channels_to_snapshot",
    "read_counters",
]

DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT = 5000
"""Checkpoints after which a delta channel's value is stored whole, written or not."""

COUNTERS_KEY = "counters_since_delta_snapshot"
"""Checkpoint metadata key of the per-channel ``[updates, supersteps]`` counters."""


def delta_channels_to_snapshot(
    channels: Mapping[str, Any],
    counters: Mapping[str, Any],
    versions: Mapping[str, Any],
) -> set[str]:
    """The delta channels of ``counters`` whose value must be stored whole now.

    A channel with no version in ``versions`` was never written and has nothing to
    store. The bound is read at each call, so it can be lowered (in tests).
    """
    due: set[str] = set()
    bound = DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT
    for key, (updates, supersteps) in counters.items():
        if key not in versions:
            continue
        frequency = getattr(channels.get(key), "snapshot_frequency", None)
        if frequency is None:
            continue
        if updates >= frequency or supersteps >= bound:
            due.add(key)
    return due


def read_counters(metadata: Mapping[str, Any] | None, keys: Any) -> dict[str, list[int]]:
    """The counters stored in a checkpoint's ``metadata`` for the delta channels ``keys``
    (malformed entries are dropped: the channel then counts from zero)."""
    stored = (metadata or {}).get(COUNTERS_KEY)
    out: dict[str, list[int]] = {}
    if not isinstance(stored, Mapping):
        return out
    for key in keys:
        pair = stored.get(key)
        if (
            isinstance(pair, (list, tuple))
            and len(pair) == 2
            and all(type(n) is int and n >= 0 for n in pair)
        ):
            out[key] = [pair[0], pair[1]]
    return out
