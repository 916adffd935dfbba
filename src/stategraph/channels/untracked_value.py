"""``UntrackedValue``: a last-value channel that is never saved in checkpoints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic

from typing_extensions import Self

from stategraph.channels.base import MISSING, Value
from stategraph.channels.ephemeral_value import _GuardedValue, guard_error

__all__ = ["UntrackedValue"]


class UntrackedValue(Generic[Value], _GuardedValue[Value]):
    """Stores the last value written, but never persists it.

    :meth:`checkpoint` always returns ``MISSING`` and :meth:`from_checkpoint` always
    gives an empty channel, so the value lives only in the running graph. :meth:`copy`
    keeps the value. With ``guard=True`` (the default) a step may write at most one
    value; with ``guard=False`` the last write wins.
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UntrackedValue) and other.guard == self.guard

    def __repr__(self) -> str:
        return f"UntrackedValue(key={self.key!r}, value={self.value!r})"

    def checkpoint(self) -> Any:
        """Always ``MISSING``: an untracked value is never saved."""
        return MISSING

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Return a new, empty channel with the same configuration."""
        return super().from_checkpoint(MISSING)

    def update(self, values: Sequence[Value]) -> bool:
        """Store this step's write; a step without writes keeps the value."""
        if not values:
            return False
        if self.guard and len(values) != 1:
            raise guard_error("UntrackedValue", self.key)
        self.value = values[-1]
        return True
