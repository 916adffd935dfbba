"""The state as nodes read it, kept up to date step by step instead of read again.

A node's input is the dict of the available values of the channels it reads (its read
list, most often every key of the state). Building it by asking each channel costs the
width of the state at every step; :class:`StateViews` keeps one such dict per distinct
read list for the length of a run and changes only the entries of the channels a step
changed, so a step costs what it writes. Each reader gets its own copy (a C-level dict
copy), exactly what :func:`~stategraph.pregel._algo.read_channels` would have built.

The views are valid while the run's channels change only through ``apply_writes`` calls
given the run's :class:`~stategraph.pregel._algo.StepTracker` (which reports the changed
channels to :meth:`StateViews.changed`), the same contract the tracker itself relies on.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from stategraph.channels.base import MISSING, BaseChannel
from stategraph.pregel._algo import plain_value_channel, read_channels

__all__ = ["ReadSets", "StateViews", "read_sets"]


class ReadSets:
    """A graph's distinct read lists, numbered, with the lists each channel belongs to.

    Two lists with the same names in the same order share a number, so the nodes of a
    graph that all read the whole state share one view. Built lazily, once per graph.
    """

    __slots__ = ("by_chan", "by_id", "by_names", "keep", "kept", "lock")

    def __init__(self) -> None:
        self.by_id: dict[int, int] = {}  # id(read list) -> number
        self.by_names: dict[tuple[str, ...], int] = {}
        # channel -> (number, position in that list) of each list naming it
        self.by_chan: dict[str, list[tuple[int, int]]] = {}
        self.keep: list[Sequence[str]] = []  # the lists whose ids are known (kept alive)
        # number -> whether a run keeps that list's view: only lists of channels that
        # hand out their value as it is (a channel whose get() builds a new object each
        # time, a Topic's list, is read afresh for every reader, as before)
        self.kept: dict[int, bool] = {}
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
                first: dict[str, int] = {}
                for pos, name in enumerate(names):
                    first.setdefault(name, pos)
                for name, pos in first.items():
                    self.by_chan.setdefault(name, []).append((num, pos))
            if len(self.keep) < _MAX_KEPT:
                # (a caller building a new list each time is answered by its names)
                self.keep.append(select)
                self.by_id[id(select)] = num
        return num

    def position(self, num: int, name: str) -> int:
        """The position of ``name`` in read list ``num`` (its first, if named twice)."""
        for n, pos in self.by_chan[name]:
            if n == num:
                return pos
        raise KeyError(name)

    def keeps(self, num: int, select: Sequence[str], channels: Mapping[str, BaseChannel]) -> bool:
        """Whether views of list ``num`` (``select``) are kept (decided on first sight:
        a graph's runs make their channels of the same classes)."""
        kept = self.kept.get(num)
        if kept is None:
            kept = self.kept[num] = all(
                plain_value_channel(type(channels[k])) for k in select if k in channels
            )
        return kept


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

    __slots__ = ("channels", "sets", "tails", "values")

    def __init__(self, channels: Mapping[str, BaseChannel], sets: ReadSets) -> None:
        self.channels = channels
        self.sets = sets
        self.values: dict[int, dict[str, Any]] = {}  # read-list number -> current values
        # read-list number -> a position at or after that of the view's last key
        self.tails: dict[int, int] = {}

    def read(self, select: Sequence[str]) -> dict[str, Any]:
        """A new dict of the available values of the channels ``select`` names, in its
        order (what ``read_channels(channels, select)`` returns)."""
        sets = self.sets
        num = sets.number(select)
        vals = self.values.get(num)
        if vals is None:
            channels = self.channels
            if not sets.keeps(num, select, channels):
                return read_channels(channels, select)
            vals = self.values[num] = _plain_values(channels, select)
            self.tails[num] = sets.position(num, next(reversed(vals))) if vals else -1
        return vals.copy()

    def changed(self, names: Iterable[str]) -> None:
        """Follow the channels ``names``, changed by a step, in the views that hold them.

        A channel that kept its availability gets its new value in place, one that
        disappeared leaves its view, one that appeared joins it at the end when its
        place in the read list is after every key of the view; otherwise the view is
        dropped (read again on next use, so the keys keep the read list's order).
        """
        values = self.values
        if not values:
            return
        by_chan = self.sets.by_chan
        channels = self.channels
        tails = self.tails
        for name in names:
            places = by_chan.get(name)
            if places is None:
                continue
            value: Any = _UNREAD
            for num, pos in places:
                vals = values.get(num)
                if vals is None:
                    continue
                if value is _UNREAD:
                    # (a kept view holds plain value channels only: see ReadSets.keeps)
                    value = channels[name].value  # type: ignore[attr-defined]
                if value is not MISSING:
                    if name not in vals:
                        if pos <= tails[num]:
                            del values[num]
                            continue
                        tails[num] = pos
                    vals[name] = value
                elif name in vals:
                    del vals[name]


_UNREAD: Any = object()


def _plain_values(channels: Mapping[str, BaseChannel], select: Sequence[str]) -> dict[str, Any]:
    """``read_channels(channels, select)`` for channels that all hold a plain ``value``
    (``plain_value_channel``), read without a call per channel."""
    return {
        k: v
        for k in select
        if (ch := channels.get(k)) is not None and (v := ch.value) is not MISSING  # type: ignore[attr-defined]
    }
