"""Rebuilding the value of a ``DeltaChannel`` at one checkpoint: the parent-chain walk.

A checkpoint that holds no value for a delta channel gets it from its ancestors: walk
the parent chain until an ancestor whose ``channel_values`` holds the channel (a
``_DeltaSnapshot``, or a plain value stored before the channel became a delta
channel), collecting on the way the writes each ancestor's step made to the channel
(its pending writes, in the order the runtime applied them). The walk is written once
as a generator that yields the parent configs it needs, so the sync and async saver
methods drive the same code.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from typing import Any

from typing_extensions import NotRequired, TypedDict

__all__ = ["DeltaChannelHistory", "walk", "path_sort_key", "TUPLE", "PATHS"]


class DeltaChannelHistory(TypedDict):
    """What rebuilds one delta channel's value at a checkpoint."""

    writes: list[tuple[str, str, Any]]
    """``(task_id, channel, value)`` writes made since the seed, oldest first."""
    seed: NotRequired[Any]
    """The nearest stored value (absent: start from the channel's empty value)."""


def path_sort_key(path: str) -> tuple[Any, ...]:
    """The runtime's write-application order for a saved task path (``"a~b~c"``):
    by the first three parts, numbers compared as numbers."""
    if not path:
        return ()
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in path.split("~")[:3])


TUPLE = "tuple"
PATHS = "paths"


def _seed(
    result: dict[str, DeltaChannelHistory], pending: list[str], values: Mapping[str, Any]
) -> None:
    """Give each ``pending`` channel stored in ``values`` its seed, and stop looking for it."""
    for c in list(pending):
        if c in values:
            result[c]["seed"] = values[c]
            pending.remove(c)


def walk(
    target: Any, channels: Sequence[str]
) -> Generator[tuple[str, Any], Any, dict[str, DeltaChannelHistory]]:
    """Collect the history of ``channels`` at checkpoint tuple ``target``.

    Yields ``(TUPLE, parent_config)`` to get a parent's checkpoint tuple (``None`` if
    gone) and, for an ancestor whose step ran several tasks, ``(PATHS, tuple)`` to get
    its task id -> saved task path map (empty when the saver keeps none), used to put
    the writes in the order the runtime applied them.
    """
    result: dict[str, DeltaChannelHistory] = {c: {"writes": []} for c in channels}
    if target is None:
        return result
    own_versions = target.checkpoint["channel_versions"]
    # a channel that was never written has no history to look for
    pending = [c for c in channels if c in own_versions]
    collected: dict[str, list[list[tuple[str, str, Any]]]] = {c: [] for c in channels}
    _seed(result, pending, target.checkpoint["channel_values"])
    child = target
    while pending and child.parent_config is not None:
        parent = yield (TUPLE, child.parent_config)
        if parent is None:
            break
        child_versions = child.checkpoint["channel_versions"]
        parent_versions = parent.checkpoint["channel_versions"]
        changed = [c for c in pending if child_versions.get(c) != parent_versions.get(c)]
        if changed:
            writes = list(parent.pending_writes or ())
            if len({w[0] for w in writes}) > 1:
                paths: Mapping[str, str] = (yield (PATHS, parent)) or {}
                order = {tid: i for i, tid in enumerate(dict.fromkeys(w[0] for w in writes))}
                writes.sort(key=lambda w: (path_sort_key(paths.get(w[0], "")), order[w[0]]))
            for c in changed:
                collected[c].append([w for w in writes if w[1] == c])
        _seed(result, pending, parent.checkpoint["channel_values"])
        child = parent
    for c in channels:
        result[c]["writes"] = [w for step in reversed(collected[c]) for w in step]
    return result
