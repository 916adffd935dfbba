"""``EphemeralValue``: a value that lives for exactly one super-step."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic

from typing_extensions import Self

from stategraph.channels.base import Value, _ValueChannel
from stategraph.errors import InvalidUpdateError

__all__ = ["EphemeralValue"]


def guard_error(name: str, key: str) -> InvalidUpdateError:
    """The error of a guarded channel ``name`` (``EphemeralValue``, ``UntrackedValue``)
    at ``key`` that was written several values in one step."""
    return InvalidUpdateError(
        f"At key '{key}': {name}(guard=True) can receive only one "
        "value per step. Use guard=False if you want to store any one of "
        "multiple values."
    )


class _GuardedValue(_ValueChannel[Value, Value, Value]):
    """A value channel with a ``guard``: when set, a step may write at most one value."""

    __slots__ = ("guard",)
    _config = ("guard",)

    guard: bool

    def __init__(self, typ: Any, guard: bool = True, key: str = "") -> None:
        super().__init__(typ, key)
        self.guard = guard

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Return a new channel holding ``checkpoint`` (empty for ``MISSING``)."""
        # (the configuration copied by name, not through ``_config``: a graph has one
        # such channel per node, each made again for every run)
        cls = self.__class__
        new = cls.__new__(cls)
        new.typ = self.typ
        new.key = self.key
        new.guard = self.guard
        new.value = checkpoint
        return new


class EphemeralValue(Generic[Value], _GuardedValue[Value]):
    """Stores the value written in the previous step and clears it a step later.

    A step with no writes empties the channel. With ``guard=True`` (the default) a
    step may write at most one value; with ``guard=False`` the last write wins.
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EphemeralValue) and other.guard == self.guard

    def update(self, values: Sequence[Value]) -> bool:
        """Replace the value with this step's write, or clear it if nothing was written."""
        if not values:
            return self._clear()
        if self.guard and len(values) != 1:
            raise guard_error("EphemeralValue", self.key)
        self.value = values[-1]
        return True
