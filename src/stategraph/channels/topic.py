"""``Topic``: a pub/sub channel collecting every value written, optionally across steps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Union

from typing_extensions import Self

from stategraph.channels.base import MISSING, BaseChannel, Value
from stategraph.errors import EmptyChannelError

__all__ = ["Topic"]


class Topic(
    Generic[Value],
    BaseChannel[Sequence[Value], Union[Value, list[Value]], list[Value]],
):
    """Collects the values written into a list.

    A written ``list`` is flattened one level (its items are collected, not the list).
    With ``accumulate=False`` (the default) each step starts from an empty list, so the
    channel holds only the previous step's writes; with ``accumulate=True`` values
    pile up across steps. :meth:`get` returns a fresh list each call.
    """

    __slots__ = ("accumulate", "values")
    _config = ("accumulate",)

    values: list[Value]
    accumulate: bool

    def __init__(self, typ: Any, accumulate: bool = False, key: str = "") -> None:
        super().__init__(typ, key)
        self.accumulate = accumulate
        self.values = []

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Topic) and other.accumulate == self.accumulate

    @property
    def ValueType(self) -> Any:
        """``Sequence[typ]``: what :meth:`get` returns."""
        return Sequence[self.typ]  # type: ignore[name-defined]

    @property
    def UpdateType(self) -> Any:
        """``typ | list[typ]``: one value, or a list of values to add."""
        return Union[self.typ, list[self.typ]]  # type: ignore[name-defined]

    def copy(self) -> Self:
        """Return an independent channel with a copy of the collected list."""
        new = self._empty()
        new.values = self.values.copy()
        return new

    def checkpoint(self) -> list[Value]:
        """Return a copy of the collected values (``[]`` when empty)."""
        return self.values.copy()

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Return a new channel holding a copy of ``checkpoint`` (empty for ``MISSING``)."""
        new = self._empty()
        new.values = [] if checkpoint is MISSING else list(checkpoint)
        return new

    def update(self, values: Sequence[Value | list[Value]]) -> bool:
        """Collect this step's writes; without ``accumulate``, drop the previous ones."""
        updated = False
        if not self.accumulate:
            if self.values:
                updated = True
                self.values = []
            if not values:
                return updated
        current = self.values
        for value in values:
            if isinstance(value, list):
                if value:
                    current.extend(value)
                    updated = True
            else:
                current.append(value)
                updated = True
        return updated

    def get(self) -> Sequence[Value]:
        """Return a new list of the collected values; raise when there are none."""
        if self.values:
            return self.values.copy()
        raise EmptyChannelError()

    def is_available(self) -> bool:
        """Return True if at least one value was collected."""
        return bool(self.values)
