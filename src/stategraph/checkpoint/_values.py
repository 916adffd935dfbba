"""How the bundled savers serialize what they store, written once for all of them.

:class:`StoredValues` is a mixin of ``InMemorySaver``, ``SqliteSaver`` and the
PostgreSQL savers: a channel value or a pending write is stored whole, with its large
list elements interned (:mod:`._intern`), and a new version of a list value as the
change from the version stored before it (:mod:`._list_delta`). Each saver decides
only where the results go.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stategraph.checkpoint._intern import Interner
from stategraph.checkpoint._list_delta import DELTA_TYPE, ListDeltaCodec, Pending
from stategraph.checkpoint.base import dump_channel_value

if TYPE_CHECKING:
    from stategraph.checkpoint.serde.base import SerializerProtocol

__all__ = ["StoredValues", "delta_base"]

Typed = tuple[str, bytes]


class StoredValues:
    """Serializing values and writes for a saver (see the module docstring)."""

    serde: SerializerProtocol

    delta: ListDeltaCodec | None = None
    """Delta storage of list values (``None``: every value stored whole)."""

    interner: Interner | None = None
    """Interning of large list elements (``None``: values stored whole)."""

    def _init_values(self, delta_storage: bool, intern_items: bool) -> None:
        """Turn delta storage and interning on or off (the savers' constructor flags)."""
        self.delta = ListDeltaCodec(self.serde) if delta_storage else None
        self.interner = Interner(self) if intern_items else None

    def _dump(self, channel: str, value: Any, items: dict[bytes, Typed]) -> Any:
        """Serialize a value or write, interning its large list elements into
        ``items`` when interning is on."""
        if self.interner is None:
            return dump_channel_value(self.serde, channel, value)
        return self.interner.dump(channel, value, items)

    def _encode(
        self, key: tuple[str, str, str], version: Any, value: Any, items: dict[bytes, Typed]
    ) -> tuple[Typed, Pending | None]:
        """``value`` as stored at ``key`` (thread, namespace, channel) and ``version``:
        whole without delta storage, else what :meth:`ListDeltaCodec.encode` makes,
        with the entry to commit once it is stored (``None`` for a value not a list)."""
        codec = self.delta
        if codec is None:
            return self._dump(key[2], value, items), None
        codec.serde = self.serde
        channel = key[2]
        return codec.encode(key, version, value, lambda v: self._dump(channel, v, items))


def delta_base(typed: Typed, entry: Pending | None) -> str | None:
    """The version a stored delta ``typed`` is the change from (``None``: stored whole)."""
    if entry is None or entry.base is None or typed[0] != DELTA_TYPE:
        return None
    return str(entry.base)
