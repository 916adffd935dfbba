"""Channels that keep the last value written: ``LastValue`` and ``LastValueAfterFinish``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic

from typing_extensions import Self

from stategraph.channels.base import MISSING, Value, _ValueChannel
from stategraph.errors import (
    EmptyChannelError,
    ErrorCode,
    InvalidUpdateError,
    create_error_message,
)

__all__ = ["LastValue", "LastValueAfterFinish"]


class LastValue(Generic[Value], _ValueChannel[Value, Value, Value]):
    """Stores the last value written; at most one write per super-step.

    This is the channel of a plain (un-annotated) state key. Two writes in the same
    step raise :class:`InvalidUpdateError`: annotate the key with a reducer to accept
    concurrent writes.
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LastValue)

    def update(self, values: Sequence[Value]) -> bool:
        """Store the single written value; raise if the step wrote several."""
        if not values:
            return False
        if len(values) != 1:
            raise InvalidUpdateError(
                create_error_message(
                    message=f"At key '{self.key}': Can receive only one value per step. "
                    "Use an Annotated key to handle multiple values.",
                    error_code=ErrorCode.INVALID_CONCURRENT_GRAPH_UPDATE,
                )
            )
        self.value = values[-1]
        return True


class LastValueAfterFinish(Generic[Value], _ValueChannel[Value, Value, tuple[Value, bool]]):
    """Stores the last value written, readable only once the graph is finishing.

    :meth:`finish` makes a stored value available; :meth:`consume` then clears it.
    Writing again after ``finish`` stores the new value and hides it until the next
    ``finish``. Several writes in one step are allowed: the last one wins.
    """

    __slots__ = ("finished",)

    finished: bool

    def __init__(self, typ: Any, key: str = "") -> None:
        super().__init__(typ, key)
        self.finished = False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LastValueAfterFinish)

    def copy(self) -> Self:
        """Return an independent channel with the same value and finished flag."""
        new = self._empty()
        new.value = self.value
        new.finished = self.finished
        return new

    def checkpoint(self) -> Any:
        """Return ``(value, finished)``, or ``MISSING`` when empty."""
        if self.value is MISSING:
            return MISSING
        return (self.value, self.finished)

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Return a new channel restored from ``(value, finished)`` (empty for ``MISSING``)."""
        new = self._empty()
        if checkpoint is MISSING:
            new.value = MISSING
            new.finished = False
        else:
            new.value, new.finished = checkpoint
        return new

    def update(self, values: Sequence[Value]) -> bool:
        """Store the last written value and hide it until the next :meth:`finish`."""
        if not values:
            return False
        self.finished = False
        self.value = values[-1]
        return True

    def consume(self) -> bool:
        """Clear the value once it was made available by :meth:`finish`."""
        if self.finished:
            self.finished = False
            self.value = MISSING
            return True
        return False

    def finish(self) -> bool:
        """Make a stored value available; return True if that changed anything."""
        if not self.finished and self.value is not MISSING:
            self.finished = True
            return True
        return False

    def get(self) -> Value:
        """Return the value if finished; raise :class:`EmptyChannelError` otherwise."""
        if self.value is MISSING or not self.finished:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        """Return True if a value is stored and :meth:`finish` was called."""
        return self.finished and self.value is not MISSING
