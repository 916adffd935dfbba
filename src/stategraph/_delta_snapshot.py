"""``_DeltaSnapshot``: the stored full value of a ``DeltaChannel``.

It sits below both the channels (``DeltaChannel`` makes and reads snapshots) and the
savers (they store them and stop their history walks at one), so neither has to import
the other. Its public home is :mod:`stategraph.checkpoint.serde.types`, which is also
the module name serializers store with it (LangGraph's name, mapped to ours), so
checkpoints saved before it lived here still load.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["_DeltaSnapshot"]


class _DeltaSnapshot(NamedTuple):
    """The full value of a delta channel, stored as a seed for later checkpoints."""

    value: Any
    """The channel's value at the checkpoint that holds this snapshot."""


# the name serializers write and resolve (see checkpoint/serde/_allowlist.py OWN_MODULES)
_DeltaSnapshot.__module__ = "stategraph.checkpoint.serde.types"
