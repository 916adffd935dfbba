"""Compact stored form of a checkpoint's body (everything but its channel values).

A checkpoint body stored as a plain dict spends most of its bytes on version strings
(``"%032d.%016x"``: 49 characters each, repeated in ``channel_versions`` and
``versions_seen``), channel names repeated in both maps, its own id (already the
row's key) and an ISO timestamp. :func:`pack_checkpoint` turns the body into a list
the saver's ``serde`` serializes as usual (so an encrypting serializer still covers
it)::

    [MARK, FORMAT, v, ts, names, versions, channel_versions, versions_seen, updated]

* ``ts``: microseconds since the epoch when that gives back the same string, else the
  string. In format 2 (``ts_from_id``, written by ``SqliteSaver``) an int ``ts`` counts
  the microseconds from the time in the checkpoint's id (a version-6 UUID, made a few
  microseconds before ``ts``): one byte instead of nine;
* ``names``: the distinct channel and node names, referred to by index below;
* ``versions``: the distinct versions, each ``[step, random]`` when it is a string of
  the saver's own form (rebuilt exactly), else the version itself;
* ``channel_versions``: flat ``[name, version, ...]`` indexes;
* ``versions_seen``: flat ``[node, count, name, version, ...]`` indexes;
* ``updated``: ``None`` or a list of name indexes.

The checkpoint's ``id`` is not stored: :func:`unpack_checkpoint` puts back the id of
the row it was read from. A body of any other shape (extra keys, another key order)
is stored as the plain dict, and a plain dict read back (everything written before
this format) is returned unchanged, so reading never depends on the writer's format.
The result is equal to the body given to :func:`pack_checkpoint`, key order included.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

__all__ = [
    "FORMAT",
    "FORMAT_TS_FROM_ID",
    "MARK",
    "id_micros",
    "pack_checkpoint",
    "pack_version",
    "unpack_checkpoint",
]

MARK = "sg-cp"
"""First item of a packed body (a plain body is a dict, never a list)."""
FORMAT = 1
"""Version of the packed form written by this release with an absolute ``ts``."""
FORMAT_TS_FROM_ID = 2
"""Version of the packed form whose int ``ts`` is relative to the id's time."""

PACK_LIMIT = 256
"""Most version entries (channel_versions plus every versions_seen) a packed body
holds; a larger checkpoint is stored plain."""

_KEYS = ("v", "id", "ts", "channel_versions", "versions_seen", "updated_channels")
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def pack_version(version: Any) -> Any:
    """``[step, random]`` for a version string ``f"{step:032}.{random:016x}"`` (what
    ``next_string_version`` makes), else ``version`` unchanged."""
    if type(version) is str and len(version) == 49 and version[32] == ".":
        try:
            step, rand = int(version[:32]), int(version[33:], 16)
        except ValueError:
            return version
        # (int() also takes signs, "_" and spaces: only the exact form round-trips)
        if 0 <= step < 1 << 63 and f"{step:032}.{rand:016x}" == version:
            return [step, rand]
    return version


_PACKED: dict[str, tuple[int, int] | None] = {}
"""Version strings already parsed by :func:`_packed` (a checkpoint repeats most of its
parent's versions); cleared when it reaches :data:`_PACKED_MAX` entries."""
_PACKED_MAX = 4096
_UNSEEN = object()


def _packed(version: Any) -> Any:
    """:func:`pack_version` of ``version``, parsing each version string once."""
    if type(version) is not str:
        return version
    found: Any = _PACKED.get(version, _UNSEEN)  # (one lookup: another thread may clear)
    if found is _UNSEEN:
        packed = pack_version(version)
        found = None if packed is version else (packed[0], packed[1])
        if len(_PACKED) >= _PACKED_MAX:
            _PACKED.clear()
        _PACKED[version] = found
    return version if found is None else [found[0], found[1]]


def unpack_version(packed: Any) -> Any:
    """The version :func:`pack_version` packed as ``packed``."""
    if type(packed) in (list, tuple):
        return f"{packed[0]:032}.{packed[1]:016x}"
    return packed


def _pack_ts(ts: Any) -> Any:
    if type(ts) is str and len(ts) == 32 and ts.endswith("+00:00"):
        try:
            moment = datetime.fromisoformat(ts)
        except ValueError:
            return ts
        delta = moment - _EPOCH
        micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
        if _unpack_ts(micros) == ts:
            return micros
    return ts


def _unpack_ts(packed: Any) -> Any:
    if type(packed) is int:
        return (_EPOCH + timedelta(microseconds=packed)).isoformat()
    return packed


_UUID_EPOCH = 0x01B21DD213814000
"""1970-01-01 in 100-ns intervals since 1582-10-15 (the epoch of UUID times)."""


def id_micros(checkpoint_id: str) -> int | None:
    """Microseconds since the epoch of the time in ``checkpoint_id`` when it is a
    version-6 UUID string, else ``None`` (a function of the string alone, so the
    reader finds the writer's value)."""
    if len(checkpoint_id) != 36 or checkpoint_id[14] != "6":
        return None
    try:
        # time_high (32 bits), time_mid (16), time_low (12): their hex digits in a row
        ticks = int(checkpoint_id[0:8] + checkpoint_id[9:13] + checkpoint_id[15:18], 16)
    except ValueError:
        return None
    return (ticks - _UUID_EPOCH) // 10


def pack_checkpoint(body: dict[str, Any], *, ts_from_id: bool = False) -> Any:
    """The value to store for ``body`` (a checkpoint without ``channel_values``): the
    packed list, or ``body`` itself when it does not have the standard shape.
    ``ts_from_id``: write format 2 when the id is a version-6 UUID (readers before it
    refuse format 2: only a saver whose files say so may ask for it)."""
    if tuple(body) != _KEYS or type(body["id"]) is not str:
        return body
    cv, vs, updated = body["channel_versions"], body["versions_seen"], body["updated_channels"]
    if type(cv) is not dict or type(vs) is not dict:
        return body
    if updated is not None and (
        type(updated) is not list or any(type(u) is not str for u in updated)
    ):
        return body
    # packing is Python work per entry at every checkpoint: for graphs with many nodes
    # it costs more than it saves, and the plain body is stored as before. Counted
    # with an early exit, so that a big checkpoint costs O(PACK_LIMIT) here, not O(n).
    entries = len(cv)
    if entries > PACK_LIMIT or len(vs) > PACK_LIMIT:
        return body
    for seen in vs.values():
        if type(seen) is dict:
            entries += len(seen)
            if entries > PACK_LIMIT:
                return body
    for mapping in (cv, *vs.values()):
        if type(mapping) is not dict:
            return body
        for channel, v in mapping.items():
            if type(channel) is not str or type(v) not in (str, int, float):
                return body
    for node in vs:
        if type(node) is not str:
            return body
    # names and versions get indexes in the order they are first met (setdefault is
    # given the index a new key would get: len before inserting); a version is keyed
    # with its type (1 and 1.0 are equal keys but distinct versions)
    names: dict[str, int] = {}
    name = names.setdefault
    versions: dict[tuple[type, Any], int] = {}
    version = versions.setdefault
    flat_cv: list[int] = []
    for channel, v in cv.items():
        flat_cv += (name(channel, len(names)), version((type(v), v), len(versions)))
    flat_vs: list[int] = []
    for node, seen in vs.items():
        flat_vs += (name(node, len(names)), len(seen))
        for channel, v in seen.items():
            flat_vs += (name(channel, len(names)), version((type(v), v), len(versions)))
    packed_updated = None if updated is None else [name(u, len(names)) for u in updated]
    packed_versions = [_packed(v) for _, v in versions]
    form, ts = FORMAT, _pack_ts(body["ts"])
    if ts_from_id and type(ts) is int:
        at = id_micros(body["id"])
        if at is not None:
            form, ts = FORMAT_TS_FROM_ID, ts - at
    return [
        MARK,
        form,
        body["v"],
        ts,
        list(names),
        packed_versions,
        flat_cv,
        flat_vs,
        packed_updated,
    ]


def unpack_checkpoint(stored: Any, checkpoint_id: str) -> dict[str, Any]:
    """The checkpoint body stored as ``stored`` (packed or plain) by the row whose
    checkpoint id is ``checkpoint_id``."""
    if type(stored) not in (list, tuple) or not stored or stored[0] != MARK:
        return stored
    _, form, v, ts, names, packed_versions, flat_cv, flat_vs, packed_updated = stored
    if form == FORMAT_TS_FROM_ID and type(ts) is int:
        at = id_micros(checkpoint_id)
        if at is None:
            raise ValueError(
                f"Checkpoint {checkpoint_id} is stored in packed format 2, which only a "
                "version-6 UUID id can have: the row was changed by hand."
            )
        ts += at
    elif form not in (FORMAT, FORMAT_TS_FROM_ID):
        raise ValueError(
            f"Checkpoint {checkpoint_id} is stored in packed format {form}, which "
            f"this release cannot read (it reads formats {FORMAT} and "
            f"{FORMAT_TS_FROM_ID}): upgrade stategraph."
        )
    versions = [unpack_version(p) for p in packed_versions]
    cv = {names[flat_cv[i]]: versions[flat_cv[i + 1]] for i in range(0, len(flat_cv), 2)}
    vs: dict[str, dict[str, Any]] = {}
    i = 0
    while i < len(flat_vs):
        node, count = names[flat_vs[i]], flat_vs[i + 1]
        i += 2
        seen: dict[str, Any] = {}
        for _ in range(count):
            seen[names[flat_vs[i]]] = versions[flat_vs[i + 1]]
            i += 2
        vs[node] = seen
    return {
        "v": v,
        "id": checkpoint_id,
        "ts": _unpack_ts(ts),
        "channel_versions": cv,
        "versions_seen": vs,
        "updated_channels": (
            None if packed_updated is None else [names[u] for u in packed_updated]
        ),
    }
