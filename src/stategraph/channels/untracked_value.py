"""``UntrackedValue``: a last-value channel that is never saved in checkpoints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic

from typing_extensions import Self

from stategraph.channels.base import MISSING, BaseChannel, Value
from stategraph.errors import EmptyChannelError, InvalidUpdateError

__all__ = ["UntrackedValue"]


class UntrackedValue(Generic[Value], BaseChannel[Value, Value, Value]):
    """Stores the last value written, but never persists it.

    :meth:`checkpoint` always returns ``MISSING`` and :meth:`from_checkpoint` always
    gives an empty channel, so the value lives only in the running graph. :meth:`copy`
    keeps the value. With ``guard=True`` (the default) a step may write at most one
    value; with ``guard=False`` the last write wins.
    """

    __slots__ = ("guard", "value")

    value: Any
    guard: bool

    def __init__(self, typ: Any, guard: bool = True, key: str = "") -> None:
        super().__init__(typ, key)
        self.guard = guard
        self.value = MISSING

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UntrackedValue) and other.guard == self.guard

    def __repr__(self) -> str:
        return f"UntrackedValue(key={self.key!r}, value={self.value!r})"

    @property
    def ValueType(self) -> Any:
        """The type of the stored value."""
        return self.typ

    @property
    def UpdateType(self) -> Any:
        """The type of a written value."""
        return self.typ

    def copy(self) -> Self:
        """Return an independent channel holding the same (unsaved) value."""
        new = self.__class__(self.typ, self.guard, self.key)
        new.value = self.value
        return new

    def checkpoint(self) -> Any:
        """Always ``MISSING``: an untracked value is never saved."""
        return MISSING

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Return a new, empty channel with the same configuration."""
        return self.__class__(self.typ, self.guard, self.key)

    def update(self, values: Sequence[Value]) -> bool:
        """Store this step's write; a step without writes keeps the value."""
        if not values:
            return False
        if self.guard and len(values) != 1:
            raise InvalidUpdateError(
                f"At key '{self.key}': UntrackedValue(guard=True) can receive only one "
                "value per step. Use guard=False if you want to store any one of "
                "multiple values."
            )
        self.value = values[-1]
        return True

    def get(self) -> Value:
        """Return the value; raise :class:`EmptyChannelError` when empty."""
        if self.value is MISSING:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        """Return True if a value was written."""
        return self.value is not MISSING
