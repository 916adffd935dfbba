"""``EphemeralValue``: a value that lives for exactly one super-step."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic

from typing_extensions import Self

from stategraph.channels.base import MISSING, BaseChannel, Value
from stategraph.errors import EmptyChannelError, InvalidUpdateError

__all__ = ["EphemeralValue"]


class EphemeralValue(Generic[Value], BaseChannel[Value, Value, Value]):
    """Stores the value written in the previous step and clears it a step later.

    A step with no writes empties the channel. With ``guard=True`` (the default) a
    step may write at most one value; with ``guard=False`` the last write wins.
    """

    __slots__ = ("guard", "value")

    value: Any
    guard: bool

    def __init__(self, typ: Any, guard: bool = True, key: str = "") -> None:
        super().__init__(typ, key)
        self.guard = guard
        self.value = MISSING

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EphemeralValue) and other.guard == self.guard

    @property
    def ValueType(self) -> Any:
        """The type of the stored value."""
        return self.typ

    @property
    def UpdateType(self) -> Any:
        """The type of a written value."""
        return self.typ

    def copy(self) -> Self:
        """Return an independent channel holding the same value."""
        new = self.__class__(self.typ, self.guard, self.key)
        new.value = self.value
        return new

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Return a new channel holding ``checkpoint`` (empty for ``MISSING``)."""
        new = self.__class__(self.typ, self.guard, self.key)
        new.value = checkpoint
        return new

    def update(self, values: Sequence[Value]) -> bool:
        """Replace the value with this step's write, or clear it if nothing was written."""
        if not values:
            if self.value is MISSING:
                return False
            self.value = MISSING
            return True
        if self.guard and len(values) != 1:
            raise InvalidUpdateError(
                f"At key '{self.key}': EphemeralValue(guard=True) can receive only one "
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
        """Return True if the previous step wrote a value."""
        return self.value is not MISSING

    def checkpoint(self) -> Any:
        """Return the value, or ``MISSING`` when empty."""
        return self.value
