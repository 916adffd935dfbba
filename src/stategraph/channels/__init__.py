"""Channels: the state containers the Pregel runtime reads and writes each super-step.

Every channel implements :class:`BaseChannel`: it takes one step's writes through
``update()``, exposes its value through ``get()``, and saves/restores itself through
``checkpoint()``/``from_checkpoint()``.
"""

from __future__ import annotations

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
