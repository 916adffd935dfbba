"""Delta storage of list values: what the bundled savers store for a channel whose
value is a list (``add_messages``, ``operator.add`` on lists, an accumulating ``Topic``).

A list that grows by a few items per step would cost O(N) bytes per checkpoint if
stored whole. Instead, a new version of a list channel is stored as a *delta* against
the version of the same channel the saver stored last, when that helps::

    value = base[:prefix] + items + base[len(base) - suffix:]

``prefix``/``suffix`` count the items shared with the base (recognised by identity:
the runtime passes the very objects it read back), ``items`` are serialized with the
saver's serializer. Appends, replacements by id and removals all fit.

Which earlier version is the base (*segments*): number the versions stored since the
last whole copy (the *root*, depth 0) 1, 2, 3, ... Version ``n`` is based on version
``n - SPAN**j`` for the largest ``j < LEVELS`` with ``SPAN**j`` dividing ``n``: most
versions hold the items of one step, every :data:`SPAN`-th the items of the last
``SPAN`` steps, every ``SPAN**2``-th those of the last ``SPAN**2``... Rebuilding any
version follows at most ``SPAN - 1`` bases per level (``(SPAN - 1) * LEVELS`` rows:
93 with the defaults), and each item is stored once per level reached, so the total
stays a small multiple of the raw bytes (about twice up to ``SPAN**2`` = 1,024 steps,
three times up to 32,768) with no whole copies of a long list. A whole copy (a
*snapshot*, the next root) is stored instead when the delta would not be much smaller
than the value or at depth :data:`MAX_DEPTH`.

On-disk format of a delta: the blob's type is :data:`DELTA_TYPE` and its bytes a
msgpack array ``[format, base_version, root_version, depth, delta_bytes_since_root,
base_len, prefix, suffix, items_type, items_bytes]``. Format 1 stores the two versions
as they are; format 2 (written since) stores a version string of the savers' own form
(``f"{step:032}.{random:016x}"``) as ``[step, random]`` (see
:func:`~stategraph.checkpoint._compact.pack_version`: 19 bytes instead of 50). Both
are read. Any other type is a value stored whole by ``serde`` (every database written
before delta storage holds only those), so reading never depends on which format wrote
a version.

The codec also keeps recently read or written versions in memory (their items, not
copies of them): reading the latest version of a thread again costs O(N) pointer
copies instead of deserializing N items. Values must not be mutated in place (as for
any checkpointed state).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Optional

from stategraph.checkpoint._compact import pack_version, unpack_version

__all__ = [
    "DELTA_TYPE",
    "FORMAT",
    "MAX_DEPTH",
    "ListDeltaCodec",
    "Pending",
    "delta_base",
    "delta_header",
]

DELTA_TYPE = "sg-list-delta"
"""Blob type of a list stored as a delta."""
FORMAT = 2
"""Version of the delta format written by this release (it reads 1 and 2)."""
READS = (1, 2)
"""Delta formats this release reads."""
SPAN = 32
"""Steps combined into one segment at the next level."""
LEVELS = 3
"""Levels of segments (1 = every version based on the one before it)."""
MAX_DEPTH = SPAN**LEVELS
"""Depth at which a whole copy is stored (the chains restart from it)."""
CACHE_SIZE = 256
"""Versions (their items) kept in memory per saver."""

Typed = tuple[str, bytes]
Key = tuple[str, str, str]  # thread_id, checkpoint_ns, channel


Anchor = Optional[tuple[Any, "_Entry"]]


class _Entry:
    __slots__ = ("acc", "anchors", "depth", "items", "root", "root_bytes")

    def __init__(
        self,
        items: tuple[Any, ...],
        depth: int,
        root: Any,
        acc: int,
        root_bytes: int,
        anchors: tuple[Anchor, ...] | None = None,
    ) -> None:
        self.items = items
        self.depth = depth  # versions between this one and its snapshot
        self.root = root  # version of that snapshot
        self.acc = acc  # delta bytes stored since that snapshot
        self.root_bytes = root_bytes  # size of that snapshot
        # anchors[j - 1]: (version, entry) at depth (depth // SPAN**j) * SPAN**j, the
        # base of the next level-j segment; None when that is this entry itself
        self.anchors = (None,) * (LEVELS - 1) if anchors is None else anchors

    def anchor(self, version: Any, level: int) -> tuple[Any, _Entry]:
        """The version (and entry) a level-``level`` segment after this one (stored as
        ``version``) is based on."""
        if level == 0:
            return version, self
        found = self.anchors[level - 1]
        return (version, self) if found is None else found


def _level(depth: int) -> int:
    """The segment level of the version at ``depth`` (0: based on the one before)."""
    level = 0
    while level < LEVELS - 1 and depth % SPAN ** (level + 1) == 0:
        level += 1
    return level


def _anchors(depth: int, base_version: Any, base: _Entry) -> tuple[Anchor, ...]:
    """The anchors of a version at ``depth`` whose delta is based on ``base``."""
    return tuple(
        None if depth % SPAN**j == 0 else base.anchor(base_version, j) for j in range(1, LEVELS)
    )


def delta_header(blob: bytes, channel: str = "?", version: Any = "?") -> list[Any]:
    """The header of a stored delta, versions unpacked (any format this release reads);
    raises naming ``channel`` and ``version`` for a format it does not read."""
    import ormsgpack

    header: list[Any] = ormsgpack.unpackb(blob)
    if header[0] not in READS:
        raise ValueError(
            f"Channel '{channel}' version {version} is stored in delta "
            f"format {header[0]}, which this release cannot read (it reads "
            f"formats {READS[0]} to {READS[-1]}): upgrade stategraph."
        )
    if header[0] >= 2:
        header[1] = unpack_version(header[1])
        header[2] = unpack_version(header[2])
    return header


def delta_base(blob: bytes) -> Any:
    """The version a stored delta is based on."""
    return delta_header(blob)[1]


class Pending:
    """A version encoded but not yet known to be stored."""

    __slots__ = ("base", "entry", "key", "version")

    def __init__(self, key: Key, version: Any, entry: _Entry, base: Any) -> None:
        self.key = key
        self.version = version
        self.entry = entry
        self.base = base


class ListDeltaCodec:
    """Encodes list channel values as deltas and decodes them, with a small cache.

    ``serde`` serializes values; thread-safe.
    """

    def __init__(self, serde: Any) -> None:
        self.serde = serde
        self._cache: OrderedDict[tuple[Any, ...], _Entry] = OrderedDict()
        self._latest: dict[Key, Any] = {}
        self._lock = threading.Lock()

    # -- cache -------------------------------------------------------------------

    def _remember(self, key: Key, version: Any, entry: _Entry) -> None:
        with self._lock:
            full = (*key, version)
            self._cache[full] = entry
            self._cache.move_to_end(full)
            while len(self._cache) > CACHE_SIZE:
                old, _ = self._cache.popitem(last=False)
                if self._latest.get(old[:3]) == old[3]:
                    del self._latest[old[:3]]
            latest = self._latest.get(key)
            try:
                newer = latest is None or version >= latest
            except TypeError:  # versions of mixed types (a saver used by hand)
                newer = True
            if newer:
                self._latest[key] = version

    def _lookup(self, key: Key, version: Any) -> _Entry | None:
        with self._lock:
            entry = self._cache.get((*key, version))
            if entry is not None:
                self._cache.move_to_end((*key, version))
            return entry

    def is_cached(self, key: Key, version: Any) -> bool:
        """Whether version ``version`` of ``key`` is in memory."""
        with self._lock:
            return (*key, version) in self._cache

    def forget(self, thread_id: str | None = None) -> None:
        """Drop cached versions (of one thread, or all): after deletes or pruning."""
        with self._lock:
            if thread_id is None:
                self._cache.clear()
                self._latest.clear()
                return
            for k in [k for k in self._cache if k[0] == thread_id]:
                del self._cache[k]
            for lk in [k for k in self._latest if k[0] == thread_id]:
                del self._latest[lk]

    # -- writing -----------------------------------------------------------------

    def encode(
        self, key: Key, version: Any, value: Any, dump: Callable[[Any], Typed]
    ) -> tuple[Typed, Pending | None]:
        """Serialize ``value`` (version ``version`` of channel ``key``): a delta against
        the version stored last when that is worth it, else ``dump(value)``.

        Returns the blob and, for a list, what to :meth:`commit` once the blob is
        stored (``pending.base`` is the version the delta needs, ``None`` for a
        snapshot: a saver that cannot find that base stored must store
        ``dump(value)`` instead and commit :meth:`as_snapshot` of it).
        """
        if type(value) is not list:
            return dump(value), None
        with self._lock:
            base_version = self._latest.get(key)
            base = self._cache.get((*key, base_version)) if base_version is not None else None
        items = tuple(value)
        if (
            base is not None
            and base_version is not None
            and base_version != version
            and base.depth + 1 < MAX_DEPTH
        ):
            depth = base.depth + 1
            ref_version, ref = base.anchor(base_version, _level(depth))
            old = ref.items
            n_old, n_new = len(old), len(items)
            limit = min(n_old, n_new)
            prefix = 0
            while prefix < limit and items[prefix] is old[prefix]:
                prefix += 1
            suffix = 0
            while suffix < limit - prefix and items[n_new - 1 - suffix] is old[n_old - 1 - suffix]:
                suffix += 1
            middle = list(items[prefix : n_new - suffix])
            if prefix + suffix > 0 and len(middle) * 2 <= n_new:
                import ormsgpack

                itype, ibytes = dump(middle)
                acc = base.acc + len(ibytes)
                payload = ormsgpack.packb(
                    [
                        FORMAT,
                        pack_version(ref_version),
                        pack_version(base.root),
                        depth,
                        acc,
                        n_old,
                        prefix,
                        suffix,
                        itype,
                        ibytes,
                    ]
                )
                entry = _Entry(
                    items,
                    depth,
                    base.root,
                    acc,
                    base.root_bytes,
                    _anchors(depth, base_version, base),
                )
                return (DELTA_TYPE, payload), Pending(key, version, entry, ref_version)
        typed = dump(value)
        return typed, Pending(key, version, _Entry(items, 0, version, 0, len(typed[1])), None)

    @staticmethod
    def as_snapshot(pending: Pending, typed: Typed) -> Pending:
        """The pending entry of the same value stored whole as ``typed``."""
        entry = _Entry(pending.entry.items, 0, pending.version, 0, len(typed[1]))
        return Pending(pending.key, pending.version, entry, None)

    def commit(self, pending: Pending | None) -> None:
        """Record a stored version (the next one of its channel can be a delta on it)."""
        if pending is not None:
            self._remember(pending.key, pending.version, pending.entry)

    # -- reading -----------------------------------------------------------------

    def decode(
        self,
        key: Key,
        version: Any,
        typed: Typed,
        fetch: Callable[[Any], Typed | None],
        loads: Callable[[Typed], Any] | None = None,
    ) -> Any:
        """Return the value of version ``version`` of ``key`` stored as ``typed``;
        ``fetch(v)`` returns the stored blob of another version (a delta's base);
        ``loads`` deserializes a stored value or a delta's items (default:
        ``serde.loads_typed``; the savers pass one that resolves interned items)."""
        entry = self._lookup(key, version)
        if entry is not None:
            return list(entry.items)
        if loads is None:
            loads = self.serde.loads_typed
        if typed[0] != DELTA_TYPE:
            value = loads(typed)
            if type(value) is list:
                self._remember(key, version, _Entry(tuple(value), 0, version, 0, len(typed[1])))
            return value
        return list(self._entry(key, version, typed, fetch, loads).items)

    def _entry(
        self,
        key: Key,
        version: Any,
        typed: Typed,
        fetch: Callable[[Any], Typed | None],
        loads: Callable[[Typed], Any],
    ) -> _Entry:
        # walk down to a cached version or a snapshot, then rebuild upwards
        chain: list[tuple[Any, list[Any]]] = []
        current_version, current = version, typed
        base_entry: _Entry | None = None
        while True:
            if current[0] != DELTA_TYPE:
                value = loads(current)
                if type(value) is not list:
                    raise ValueError(
                        f"Corrupt delta chain for channel '{key[2]}': version "
                        f"{current_version}, the base of a delta, is not a list."
                    )
                base_entry = _Entry(tuple(value), 0, current_version, 0, len(current[1]))
                self._remember(key, current_version, base_entry)
                break
            header = delta_header(current[1], key[2], current_version)
            chain.append((current_version, header))
            base_version = header[1]
            base_entry = self._lookup(key, base_version)
            if base_entry is not None:
                break
            blob = fetch(base_version)
            if blob is None:
                raise ValueError(
                    f"Checkpoint data is incomplete: version {base_version} of channel "
                    f"'{key[2]}', the base of a stored delta, is missing."
                )
            current_version, current = base_version, blob
        assert base_entry is not None
        entry = base_entry
        for v, header in reversed(chain):
            _, ref_version, root, depth, acc, n_old, prefix, suffix, itype, ibytes = header
            old = entry.items
            if len(old) != n_old:
                raise ValueError(
                    f"Corrupt delta chain for channel '{key[2]}' at version {v}: its base "
                    f"has {len(old)} items, the delta expects {n_old}."
                )
            middle = loads((itype, ibytes))
            items = (*old[:prefix], *middle, *old[n_old - suffix :])
            entry = _Entry(
                items, depth, root, acc, entry.root_bytes, _anchors(depth, ref_version, entry)
            )
            self._remember(key, v, entry)
        return entry
