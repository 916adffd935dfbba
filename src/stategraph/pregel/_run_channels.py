"""``RunChannels``: a run's channels, made only for the keys that hold something.

A run needs a channel per state key (and per node, for its edges). Making them all
anew costs the width of the graph at every run, although most start empty and many
are never written. An empty channel of a kind whose empty state no step-end call
changes (``LastValue``, ``EphemeralValue``: an empty update, ``consume`` and
``finish`` leave them as they are) is therefore the graph's own channel (its spec,
always empty) until a step writes it: :meth:`RunChannels.own` then gives the run a
channel of its own in its place. :func:`~stategraph.pregel._algo.apply_writes`, the
only place a run's channels change, calls it before every write, so a spec is never
changed and runs of the same graph (in any thread) share it read-only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stategraph.channels.base import MISSING, BaseChannel
from stategraph.channels.ephemeral_value import EphemeralValue
from stategraph.channels.last_value import LastValue

__all__ = ["RunChannels", "restore_channels"]

_SHAREABLE = frozenset({LastValue, EphemeralValue})
"""The channel classes (exactly these) whose empty spec a run uses until written."""


class RunChannels(dict[str, BaseChannel]):
    """A run's channels by name; some are still the graph's empty specs (``specs``)."""

    __slots__ = ("specs",)

    def __init__(self, specs: Mapping[str, BaseChannel]) -> None:
        super().__init__(specs)
        self.specs = specs

    def own(self, key: str) -> BaseChannel:
        """The channel ``key`` of this run, made from its spec if it was still shared
        (call before changing it)."""
        ch = self[key]
        if ch is self.specs.get(key):
            ch = self[key] = ch.from_checkpoint(MISSING)
        return ch


def restore_channels(graph: Any, values: Mapping[str, Any]) -> RunChannels:
    """The channels of a run of ``graph`` restored from checkpoint ``values`` (only the
    keys with a value, and the channels of kinds that cannot be shared, are made)."""
    specs: Mapping[str, BaseChannel] = graph.channels
    channels = RunChannels(specs)
    for k in _private_keys(graph, specs):
        channels[k] = specs[k].from_checkpoint(values.get(k, MISSING))
    for k, value in values.items():
        spec = specs.get(k)
        if spec is not None and type(spec) in _SHAREABLE:
            channels[k] = spec.from_checkpoint(value)
    return channels


def _private_keys(graph: Any, specs: Mapping[str, BaseChannel]) -> tuple[str, ...]:
    """The keys of ``specs`` whose channel every run makes (a kind that cannot be
    shared, or a spec that is not empty); computed once per graph."""
    known: tuple[Mapping[str, BaseChannel], tuple[str, ...]] | None = getattr(
        graph, "_private_channels", None
    )
    if known is not None and known[0] is specs:
        return known[1]
    keys = tuple(
        k
        for k, spec in specs.items()
        if type(spec) not in _SHAREABLE or spec.value is not MISSING  # type: ignore[attr-defined]
    )
    try:
        graph._private_channels = (specs, keys)
    except AttributeError:
        pass
    return keys
