"""Barrier channels: available once every expected name was written.

They implement "wait for all of these nodes" joins: each upstream node writes its own
name, and the channel becomes available when all names were seen.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Generic

from typing_extensions import Self

from stategraph.channels.base import MISSING, BaseChannel, Checkpoint, Value, _ValueChannel
from stategraph.errors import EmptyChannelError, InvalidUpdateError

__all__ = ["NamedBarrierValue", "NamedBarrierValueAfterFinish"]


def _names_repr(names: Iterable[Any]) -> str:
    # Sorted so the message is the same on every run (set order depends on hashing).
    if not names:
        return "set()"
    return "{" + ", ".join(sorted(map(repr, names))) + "}"


class _Barrier(BaseChannel[Value, Value, Checkpoint]):
    """What both barriers share: the expected ``names``, the ``seen`` ones, the update
    that records written names, their copy and their repr."""

    __slots__ = ("names", "seen")
    _config = ("names",)

    names: set[Value]
    seen: set[Value]

    def __init__(self, typ: Any, names: Iterable[Value], key: str = "") -> None:
        super().__init__(typ, key)
        self.names = set(names)
        self.seen = set()

    # ``typ`` is the type of the names, read and written.
    ValueType = _ValueChannel.ValueType
    UpdateType = _ValueChannel.UpdateType

    def _repr(self, name: str, more: str = "") -> str:
        """``name(key=..., names={...}, seen={...}<more>)``, names sorted."""
        return (
            f"{name}(key={self.key!r}, names={_names_repr(self.names)}, "
            f"seen={_names_repr(self.seen)}{more})"
        )

    def _empty(self) -> Self:
        # Shares ``names`` (never mutated) instead of copying it again.
        new = super()._empty()
        new.seen = set()
        return new

    def copy(self) -> Self:
        """Return an independent channel with a copy of the seen names."""
        new = self._empty()
        new.seen = self.seen.copy()
        return new

    def update(self, values: Sequence[Value]) -> bool:
        """Record written names; raise :class:`InvalidUpdateError` for an unexpected one."""
        names = self.names
        seen = self.seen
        updated = False
        for value in values:
            if value in names:
                if value not in seen:
                    seen.add(value)
                    updated = True
            else:
                raise InvalidUpdateError(
                    f"At key '{self.key}': Value {value} not in {_names_repr(names)}. "
                    "Only the names this barrier waits for may be written to it."
                )
        return updated


class NamedBarrierValue(Generic[Value], _Barrier[Value, set[Value]]):
    """Becomes available (with value ``None``) once every name in ``names`` was written.

    Writes accumulate across steps. :meth:`consume`, called after the waiting node ran,
    resets the barrier.
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamedBarrierValue) and other.names == self.names

    def __repr__(self) -> str:
        return self._repr("NamedBarrierValue")

    def checkpoint(self) -> set[Value]:
        """Return a copy of the set of names seen so far."""
        return self.seen.copy()

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Return a new channel that has seen the names in ``checkpoint``."""
        new = self._empty()
        if checkpoint is not MISSING:
            new.seen = set(checkpoint)
        return new

    def get(self) -> Value:
        """Return ``None`` once every name was seen; raise :class:`EmptyChannelError` before."""
        if self.seen != self.names:
            raise EmptyChannelError()
        return None  # type: ignore[return-value]

    def is_available(self) -> bool:
        """Return True once every name was seen."""
        return self.seen == self.names

    def consume(self) -> bool:
        """Reset the barrier if it was complete; return True if it was."""
        if self.seen == self.names:
            self.seen = set()
            return True
        return False


class NamedBarrierValueAfterFinish(Generic[Value], _Barrier[Value, tuple[set[Value], bool]]):
    """Like :class:`NamedBarrierValue`, but available only after :meth:`finish`.

    Used for deferred nodes, which run only when the rest of the graph is done.
    """

    __slots__ = ("finished",)

    finished: bool

    def __init__(self, typ: Any, names: Iterable[Value], key: str = "") -> None:
        super().__init__(typ, names, key)
        self.finished = False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamedBarrierValueAfterFinish) and other.names == self.names

    def __repr__(self) -> str:
        return self._repr("NamedBarrierValueAfterFinish", f", finished={self.finished}")

    def _empty(self) -> Self:
        new = super()._empty()
        new.finished = False
        return new

    def copy(self) -> Self:
        """Return an independent channel with a copy of the seen names."""
        new = super().copy()
        new.finished = self.finished
        return new

    def checkpoint(self) -> tuple[set[Value], bool]:
        """Return ``(seen names, finished)``, the set being a copy."""
        return (self.seen.copy(), self.finished)

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Return a new channel restored from ``(seen names, finished)``."""
        new = self._empty()
        if checkpoint is not MISSING:
            seen, finished = checkpoint
            new.seen = set(seen)
            new.finished = finished
        return new

    def get(self) -> Value:
        """Return ``None`` once finished with every name seen; raise before."""
        if not self.finished or self.seen != self.names:
            raise EmptyChannelError()
        return None  # type: ignore[return-value]

    def is_available(self) -> bool:
        """Return True once every name was seen and :meth:`finish` was called."""
        return self.finished and self.seen == self.names

    def consume(self) -> bool:
        """Reset the barrier and the finished flag if it was available."""
        if self.finished and self.seen == self.names:
            self.seen = set()
            self.finished = False
            return True
        return False

    def finish(self) -> bool:
        """Make a complete barrier available; return True if that changed anything."""
        if not self.finished and self.seen == self.names:
            self.finished = True
            return True
        return False
