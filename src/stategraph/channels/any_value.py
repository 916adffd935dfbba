"""``AnyValue``: keeps the last of any number of writes, assuming they are equal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic

from stategraph.channels.base import Value, _ValueChannel

__all__ = ["AnyValue"]


class AnyValue(Generic[Value], _ValueChannel[Value, Value, Value]):
    """Stores the last value written in a step; several writes per step are allowed.

    Meant for values that every writer sets to the same thing. A step with no writes
    empties the channel.
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AnyValue)

    def update(self, values: Sequence[Value]) -> bool:
        """Keep the last write of the step, or clear the value if nothing was written."""
        if not values:
            return self._clear()
        self.value = values[-1]
        return True
