"""Channels: the state containers the Pregel runtime reads and writes each super-step.

Every channel implements :class:`BaseChannel`: it takes one step's writes through
``update()``, exposes its value through ``get()``, and saves/restores itself through
``checkpoint()``/``from_checkpoint()``.

The channel classes are imported on first use (``stategraph._lazy``): a graph loads
the kinds its state needs, not all of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stategraph._lazy import lazy_attributes

__all__ = [
    "BaseChannel",
    "LastValue",
    "LastValueAfterFinish",
    "BinaryOperatorAggregate",
    "DeltaChannel",
    "Topic",
    "EphemeralValue",
    "NamedBarrierValue",
    "NamedBarrierValueAfterFinish",
    "UntrackedValue",
    "AnyValue",
]

_LAZY = {
    "AnyValue": "stategraph.channels.any_value",
    "BaseChannel": "stategraph.channels.base",
    "BinaryOperatorAggregate": "stategraph.channels.binop",
    "DeltaChannel": "stategraph.channels.delta",
    "EphemeralValue": "stategraph.channels.ephemeral_value",
    "LastValue": "stategraph.channels.last_value",
    "LastValueAfterFinish": "stategraph.channels.last_value",
    "NamedBarrierValue": "stategraph.channels.named_barrier_value",
    "NamedBarrierValueAfterFinish": "stategraph.channels.named_barrier_value",
    "Topic": "stategraph.channels.topic",
    "UntrackedValue": "stategraph.channels.untracked_value",
}

if TYPE_CHECKING:
    from stategraph.channels.any_value import AnyValue
    from stategraph.channels.base import BaseChannel
    from stategraph.channels.binop import BinaryOperatorAggregate
    from stategraph.channels.delta import DeltaChannel
    from stategraph.channels.ephemeral_value import EphemeralValue
    from stategraph.channels.last_value import LastValue, LastValueAfterFinish
    from stategraph.channels.named_barrier_value import (
        NamedBarrierValue,
        NamedBarrierValueAfterFinish,
    )
    from stategraph.channels.topic import Topic
    from stategraph.channels.untracked_value import UntrackedValue

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
