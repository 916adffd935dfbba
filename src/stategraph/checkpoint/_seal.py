"""Encryption bound to place: what the savers store when their serializer encrypts.

An :class:`~stategraph.checkpoint.serde.encrypted.EncryptedSerializer` authenticates a
value's bytes and type tag, but not *where* a value is stored: a row copied from one
thread, channel, version or checkpoint into another would decrypt there as well. So a
saver whose ``serde`` encrypts *seals* every row it writes (checkpoint bodies,
metadata, channel values, pending writes and interned items) with its location as
associated data, and unseals it with the location it is read from:

* checkpoint body ``("c", thread_id, checkpoint_ns, checkpoint_id)``;
* metadata ``("m", thread_id, checkpoint_ns, checkpoint_id)``;
* channel value ``("b", thread_id, checkpoint_ns, channel, version)``;
* pending write ``("w", thread_id, checkpoint_ns, checkpoint_id, task_id, channel)``;
* interned item ``("i", thread_id, checkpoint_ns, hash)`` (the hash is also checked
  against the item's bytes by the reader).

A sealed row has type :data:`SEALED_TYPE` and as bytes the msgpack array
``[FORMAT, cipher, refs, base, ciphertext]``. The ciphertext holds the inner
``(type, bytes)`` (so the stored type no longer says whether a value is a list, a
delta or a message). ``refs`` (the item hashes the value refers to) and ``base`` (the
version a delta is based on, else ``None``) stay readable, so retention and garbage
collection work without the key; they are authenticated with the location, so
editing them (reordering, dropping, duplicating or emptying a thread's history) fails
to decrypt. Any mismatch is a :class:`DeserializationError` naming the thread and the
channel (or checkpoint), never a wrong value.

Rows written before binding (the serializer's own ``"<type>+aes-gcm"`` values, or
plaintext) are read only when the serializer is in migration mode
(``EncryptedSerializer(..., migration=True)``); by default they are refused.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from stategraph.checkpoint._intern import refs, unpack_header
from stategraph.checkpoint._list_delta import DELTA_TYPE, delta_base
from stategraph.checkpoint.serde.base import DeserializationError

if TYPE_CHECKING:
    from stategraph.checkpoint.serde.encrypted import EncryptedSerializer

__all__ = [
    "FORMAT",
    "SEALED_TYPE",
    "Sealer",
    "sealer_of",
    "stored_base",
    "stored_refs",
    "referenced",
]

SEALED_TYPE = "sg-sealed"
"""Type tag of a row sealed to its location."""
FORMAT = 1
"""Version of the sealed form written (and read) by this release."""

Typed = tuple[str, bytes]
_AD_PREFIX = b"sg-sealed/1\x00"


def _header(blob: bytes) -> list[Any]:
    return unpack_header(blob, 5, FORMAT, "sealed value", "is sealed in format")


def stored_refs(typed: Typed | None) -> Iterable[bytes]:
    """The item hashes a stored row refers to, sealed or not (readable without the key)."""
    if typed is not None and typed[0] == SEALED_TYPE and typed[1] is not None:
        found = _header(typed[1])[2]
        return [h for h in found if type(h) is bytes] if type(found) is list else ()
    return refs(typed)


def referenced(typeds: Iterable[Typed | None]) -> set[bytes]:
    """Every item hash the stored rows ``typeds`` refer to (the mark of a GC)."""
    out: set[bytes] = set()
    for typed in typeds:
        out.update(stored_refs(typed))
    return out


def stored_base(typed: Typed | None) -> Any:
    """The version a stored delta is based on (``None`` for any other row)."""
    if typed is None or typed[1] is None:
        return None
    if typed[0] == SEALED_TYPE:
        return _header(typed[1])[3]
    if typed[0] == DELTA_TYPE:
        return delta_base(typed[1])
    return None


def _where(parts: tuple[Any, ...]) -> bytes:
    import ormsgpack

    return ormsgpack.packb([str(p) if p is not None else None for p in parts])


def _describe(parts: tuple[Any, ...]) -> str:
    kind, thread_id = parts[0], parts[1]
    ns = f" (namespace '{parts[2]}')" if parts[2] else ""
    if kind == "b":
        return f"Thread '{thread_id}'{ns}, channel '{parts[3]}' version {parts[4]}"
    if kind == "w":
        return f"Thread '{thread_id}'{ns}, channel '{parts[5]}' (a write of task {parts[4]})"
    if kind == "i":
        return f"interned item {parts[3]} of thread '{thread_id}'{ns}"
    what = "metadata" if kind == "m" else "checkpoint"
    return f"Thread '{thread_id}'{ns}, {what} {parts[3]}"


class Sealer:
    """Seals and unseals rows for a saver whose serializer is ``serde``."""

    __slots__ = ("serde",)

    def __init__(self, serde: EncryptedSerializer) -> None:
        self.serde = serde

    def seal(self, parts: tuple[Any, ...], typed: Typed) -> Typed:
        """``typed`` encrypted with its location ``parts`` (see the module docstring)."""
        import ormsgpack

        found = list(refs(typed))
        base = delta_base(typed[1]) if typed[0] == DELTA_TYPE else None
        clear = ormsgpack.packb([found, None if base is None else str(base)])
        inner = ormsgpack.packb([typed[0], typed[1]])
        name, data = self.serde.encrypt_bound(inner, _AD_PREFIX + _where(parts) + clear)
        return SEALED_TYPE, ormsgpack.packb(
            [FORMAT, name, found, None if base is None else str(base), data]
        )

    def unseal(self, parts: tuple[Any, ...], typed: Typed) -> Typed:
        """The row stored as ``typed`` at ``parts``; raises naming thread and channel
        if it was written elsewhere or changed."""
        import ormsgpack

        if typed[0] != SEALED_TYPE:
            if self.serde.migration:
                return typed  # written before binding: read while migrating
            raise DeserializationError(
                f"{_describe(parts)}: refusing a stored value that is not sealed to its "
                f"place (type {typed[0]!r}): it was written without encryption, before "
                "this release, or put there by hand. To read a database written before, "
                "open the saver with EncryptedSerializer(..., migration=True)."
            )
        try:
            header = _header(bytes(typed[1]))
            _, name, found, base, data = header
            clear = ormsgpack.packb([found, base])
            inner = self.serde.decrypt_bound(name, data, _AD_PREFIX + _where(parts) + clear)
            itype, ibytes = ormsgpack.unpackb(inner)
        except DeserializationError as exc:
            raise DeserializationError(
                f"{_describe(parts)}: the stored value does not belong here or was modified ({exc})"
            ) from None
        except (ValueError, TypeError) as exc:
            raise DeserializationError(
                f"{_describe(parts)}: a sealed value is malformed ({exc!r})."
            ) from None
        return itype, ibytes


def item_fetcher(
    items: Mapping[tuple[str, str, bytes], Typed], thread_id: str, ns: str, sealer: Sealer | None
) -> Callable[[list[bytes]], dict[bytes, Typed]]:
    """The ``fetch`` of a :class:`~._intern.Resolver`: the items of ``(thread_id, ns)``
    found in ``items`` (keyed ``(thread_id, ns, hash)``), unsealed when encrypting."""

    def fetch(hashes: list[bytes]) -> dict[bytes, Typed]:
        found: dict[bytes, Typed] = {}
        for h in hashes:
            item = items.get((thread_id, ns, h))
            if item is not None:
                found[h] = (
                    item if sealer is None else sealer.unseal(("i", thread_id, ns, h.hex()), item)
                )
        return found

    return fetch


def sealer_of(serde: Any) -> Sealer | None:
    """A :class:`Sealer` when ``serde`` encrypts, else ``None`` (rows stored as they are).

    Cheap on the hot path, and imports nothing: no ``EncryptedSerializer`` exists
    before its module is imported."""
    module = sys.modules.get("stategraph.checkpoint.serde.encrypted")
    if module is not None and isinstance(serde, module.EncryptedSerializer):
        return Sealer(serde)
    return None
