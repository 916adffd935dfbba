"""A run's channels, made only for the keys that hold something.

A run needs a channel per state key (and per node, for its edges). Making them all
anew costs the width of the graph at every run, although most start empty and many
are never written. An empty channel of a kind whose empty state no step-end call
changes (``LastValue``, ``EphemeralValue``: an empty update, ``consume`` and
``finish`` leave them as they are) is therefore the graph's own channel (its spec,
always empty) until a step writes it: :func:`~stategraph.pregel._algo.apply_writes`,
the only place a run's channels change, is given the specs (``shared=``) and puts a
channel of the run's own in place of a spec before writing it (:func:`own_channel`).
A spec is never changed, so runs of the same graph (in any thread) share it.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from stategraph.channels.base import MISSING, BaseChannel
from stategraph.channels.ephemeral_value import EphemeralValue
from stategraph.channels.last_value import LastValue

__all__ = ["own_channel", "restore_channels"]

_SHAREABLE = frozenset({LastValue, EphemeralValue})
"""The channel classes (exactly these) whose empty spec a run uses until written."""


def restore_channels(graph: Any, values: Mapping[str, Any]) -> dict[str, BaseChannel]:
    """The channels of a run of ``graph`` restored from checkpoint ``values``: only the
    keys with a value, and the channels of kinds that cannot be shared, are made; the
    others are the graph's specs (see :func:`own_channel`)."""
    specs: Mapping[str, BaseChannel] = graph.channels
    channels = dict(specs)
    for k in _private_keys(graph, specs):
        channels[k] = specs[k].from_checkpoint(values.get(k, MISSING))
    for k, value in values.items():
        spec = specs.get(k)
        if spec is not None and type(spec) in _SHAREABLE:
            channels[k] = spec.from_checkpoint(value)
    return channels


def own_channel(
    channels: MutableMapping[str, BaseChannel], specs: Mapping[str, BaseChannel], key: str
) -> BaseChannel:
    """The run's channel ``key``, put in place of the spec it still was, if so (call
    before changing a channel of channels made by :func:`restore_channels`)."""
    ch = channels[key]
    if ch is specs.get(key):
        ch = channels[key] = ch.from_checkpoint(MISSING)
    return ch


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
