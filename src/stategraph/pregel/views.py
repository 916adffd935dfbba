"""The state as nodes read it, kept up to date step by step instead of read again.

A node's input is the dict of the available values of the channels it reads (its read
list, most often every key of the state). Building it by asking each channel costs the
width of the state at every step; :class:`StateViews` keeps one such dict per distinct
read list for the length of a run and changes only the entries of the channels a step
changed, so a step costs what it writes. Each reader gets its own copy (a C-level dict
copy), exactly what :func:`~stategraph.pregel.algo.read_channels` would have built.

The views are valid while the run's channels change only through ``apply_writes`` calls
given the run's :class:`~stategraph.pregel.algo.StepTracker` (which reports the changed
channels to :meth:`StateViews.changed`), the same contract the tracker itself relies on.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from stategraph.channels.base import BaseChannel
from stategraph.pregel.algo import plain_value_channel, read_channels

__all__ = ["ReadSets", "StateViews", "read_sets"]


class ReadSets:
    """A graph's distinct read lists, numbered, with the lists each channel belongs to.

    Two lists with the same names in the same order share a number, so the nodes of a
    graph that all read the whole state share one view. Built lazily, once per graph.
    """

    __slots__ = ("by_chan", "by_id", "by_names", "keep", "lock")

    def __init__(self) -> None:
        self.by_id: dict[int, int] = {}  # id(read list) -> number
        self.by_names: dict[tuple[str, ...], int] = {}
        self.by_chan: dict[str, list[int]] = {}  # channel -> numbers of the lists naming it
        self.keep: list[Sequence[str]] = []  # the lists whose ids are known (kept alive)
        self.lock = threading.Lock()

    def number(self, select: Sequence[str]) -> int:
        """The number of the read list ``select`` (registered on first sight)."""
        num = self.by_id.get(id(select))
        if num is not None:
            return num
        with self.lock:
            names = tuple(select)
            num = self.by_names.get(names)
            if num is None:
                num = self.by_names[names] = len(self.by_names)
                for name in dict.fromkeys(names):
                    self.by_chan.setdefault(name, []).append(num)
            if len(self.keep) < _MAX_KEPT:
                # (a caller building a new list each time is answered by its names)
                self.keep.append(select)
                self.by_id[id(select)] = num
        return num


_MAX_KEPT = 1024
"""Read lists remembered by identity per graph (a graph's nodes have a few)."""


def read_sets(graph: Any) -> ReadSets:
    """The :class:`ReadSets` of ``graph`` (made on first use, kept on the graph)."""
    sets: ReadSets | None = getattr(graph, "_read_sets", None)
    if sets is None:
        sets = ReadSets()
        try:
            graph._read_sets = sets
        except AttributeError:
            pass
    return sets


class StateViews:
    """One run's current values of each read list that was read so far."""

    __slots__ = ("channels", "kept", "sets", "values")

    def __init__(self, channels: Mapping[str, BaseChannel], sets: ReadSets) -> None:
        self.channels = channels
        self.sets = sets
        self.values: dict[int, dict[str, Any]] = {}  # read-list number -> current values
        # read-list number -> whether it is kept: only lists of channels that hand out
        # their value as it is (a channel whose get() builds a new object each time, a
        # Topic's list, is read afresh for every reader, as before)
        self.kept: dict[int, bool] = {}

    def read(self, select: Sequence[str]) -> dict[str, Any]:
        """A new dict of the available values of the channels ``select`` names, in its
        order (what ``read_channels(channels, select)`` returns)."""
        num = self.sets.number(select)
        vals = self.values.get(num)
        if vals is None:
            kept = self.kept.get(num)
            if kept is None:
                channels = self.channels
                kept = self.kept[num] = all(
                    plain_value_channel(type(channels[k])) for k in select if k in channels
                )
            vals = read_channels(self.channels, select)
            if not kept:
                return vals
            self.values[num] = vals
        return vals.copy()

    def changed(self, names: Iterable[str]) -> None:
        """Follow the channels ``names``, changed by a step, in the views that hold them.

        A channel that kept its availability gets its new value in place; one that
        appeared or disappeared drops the view (read again on next use, so the keys
        keep the read list's order).
        """
        values = self.values
        if not values:
            return
        by_chan = self.sets.by_chan
        channels = self.channels
        for name in names:
            nums = by_chan.get(name)
            if nums is None:
                continue
            for num in nums:
                vals = values.get(num)
                if vals is None:
                    continue
                ch = channels[name]
                if ch.is_available():
                    if name in vals:
                        vals[name] = ch.get()
                        continue
                elif name not in vals:
                    continue
                del values[num]
