"""``AnyValue``: keeps the last of any number of writes, assuming they are equal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic

from typing_extensions import Self

from stategraph.channels.base import MISSING, BaseChannel, Value
from stategraph.errors import EmptyChannelError

__all__ = ["AnyValue"]


class AnyValue(Generic[Value], BaseChannel[Value, Value, Value]):
    """Stores the last value written in a step; several writes per step are allowed.

    Meant for values that every writer sets to the same thing. A step with no writes
    empties the channel.
    """

    __slots__ = ("value",)

    value: Any

    def __init__(self, typ: Any, key: str = "") -> None:
        super().__init__(typ, key)
        self.value = MISSING

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AnyValue)

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
        new = self.__class__(self.typ, self.key)
        new.value = self.value
        return new

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Return a new channel holding ``checkpoint`` (empty for ``MISSING``)."""
        new = self.__class__(self.typ, self.key)
        new.value = checkpoint
        return new

    def update(self, values: Sequence[Value]) -> bool:
        """Keep the last write of the step, or clear the value if nothing was written."""
        if not values:
            if self.value is MISSING:
                return False
            self.value = MISSING
            return True
        self.value = values[-1]
        return True

    def get(self) -> Value:
        """Return the value; raise :class:`EmptyChannelError` when empty."""
        if self.value is MISSING:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        """Return True if the last step wrote a value."""
        return self.value is not MISSING

    def checkpoint(self) -> Any:
        """Return the value, or ``MISSING`` when empty."""
        return self.value
