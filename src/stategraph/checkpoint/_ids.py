"""Time-ordered ids (UUID version 6) and collision-free channel versions.

Both are used on every super-step, so they avoid the cost of importing :mod:`uuid`
(which pulls in :mod:`platform`) and :mod:`random`: randomness comes from
:func:`os.urandom` and the id string is formatted directly from an integer.
"""

from __future__ import annotations

import os
import struct
import threading
from typing import TYPE_CHECKING, Union

from stategraph import _clock

if TYPE_CHECKING:
    import uuid

__all__ = ["uuid6", "uuid6_str", "next_string_version"]

# 100-ns intervals between the Gregorian epoch (1582-10-15) and the Unix epoch.
_GREGORIAN_OFFSET = 0x01B21DD213814000
_TS_MASK = (1 << 60) - 1

_lock = threading.Lock()
_last_timestamp = 0

# os.urandom is a system call (several microseconds on some VMs); ids are made on every
# super-step, so random bytes are drawn in blocks of 4 KiB, as 512 64-bit numbers handed
# out one at a time. list.pop and list.extend are atomic: no lock is needed, and no
# number is handed out twice.
_rand_pool: list[int] = []


def _reset_pool() -> None:
    _rand_pool.clear()


if hasattr(os, "register_at_fork"):
    # a forked child must not hand out the same random bytes as its parent
    os.register_at_fork(after_in_child=_reset_pool)


def _rand64() -> int:
    """64 random bits from the pooled ``os.urandom`` output."""
    if _clock._source is not _clock.SYSTEM:
        _rand_pool.clear()
        return int.from_bytes(_clock.random_bytes(8), "big")
    try:
        return _rand_pool.pop()
    except IndexError:
        _rand_pool.extend(struct.unpack("<512Q", os.urandom(4096)))
        return _rand_pool.pop()


def _next_timestamp() -> int:
    """Return a 60-bit timestamp strictly greater than every one returned before.

    Wall-clock time in 100-ns units; when two calls fall into the same tick (or the
    clock steps backwards) the previous value plus one is used, so ids made one after
    another in this process always sort in creation order.
    """
    global _last_timestamp
    source = _clock._source
    now = (source.time_ns() // 100 + _GREGORIAN_OFFSET) & _TS_MASK
    with _lock:
        if source is not _clock.SYSTEM:
            # a replaced clock (tests) decides alone: no memory of earlier real ids
            _last_timestamp = now
            return now
        if now <= _last_timestamp:
            now = _last_timestamp + 1
        _last_timestamp = now
    return now


def _uuid6_fields(node: int | None, clock_seq: int | None) -> tuple[int, int, int]:
    """The 60-bit timestamp, 14-bit clock sequence and 48-bit node of a new id."""
    ts = _next_timestamp()
    if node is None or clock_seq is None:
        rand = _rand64()
        if node is None:
            # Random node ids set the multicast bit (RFC 9562 §6.10).
            node = (rand & 0xFFFFFFFFFFFF) | 0x010000000000
        if clock_seq is None:
            clock_seq = rand >> 50
    return ts, clock_seq & 0x3FFF, node & 0xFFFFFFFFFFFF


def _uuid6_int(node: int | None, clock_seq: int | None) -> int:
    """Assemble the 128-bit integer of an RFC 9562 version-6 UUID."""
    ts, clock_seq, node = _uuid6_fields(node, clock_seq)
    time_high = ts >> 28  # 32 bits
    time_mid = (ts >> 12) & 0xFFFF  # 16 bits
    time_low = ts & 0x0FFF  # 12 bits
    return (
        (time_high << 96)
        | (time_mid << 80)
        | (0x6 << 76)
        | (time_low << 64)
        | (0b10 << 62)
        | (clock_seq << 48)
        | node
    )


def uuid6_str(node: int | None = None, clock_seq: int | None = None) -> str:
    """Return a new version-6 UUID as its canonical 36-character string.

    Strings made one after another in this process sort in creation order.
    """
    ts, clock_seq, node = _uuid6_fields(node, clock_seq)
    # the five fields of the canonical form formatted at once (a checkpoint id is made
    # on every step: no 128-bit integer, no slicing of its hex digits; %-formatting
    # costs about a third fewer instructions than an f-string with format specs)
    return "%08x-%04x-%04x-%04x-%012x" % (  # noqa: UP031 (cheaper, see above)
        ts >> 28,
        (ts >> 12) & 0xFFFF,
        0x6000 | (ts & 0x0FFF),
        0x8000 | clock_seq,
        node,
    )


def uuid6(node: int | None = None, clock_seq: int | None = None) -> uuid.UUID:
    """Return a new RFC 9562 version-6 (time-ordered) :class:`uuid.UUID`.

    ``node`` (48 bits) and ``clock_seq`` (14 bits) default to random values. Ids made
    in sequence in one process are strictly increasing, both as UUIDs and as strings.
    """
    import uuid

    return uuid.UUID(int=_uuid6_int(node, clock_seq))


VersionLike = Union[str, int, float, None]


def next_string_version(current: VersionLike) -> str:
    """Return the channel version that follows ``current`` in the string scheme.

    Versions look like ``"00000000000000000000000000000003.9f1c0a2b3d4e5f60"``: a
    zero-padded step counter, then 16 random hex digits. Zero padding makes string
    order equal numeric order, and the random part keeps two forks of one parent from
    producing the same ``(channel, version)`` with different values.
    """
    global _last_version
    if type(current) is str:
        last = _last_version
        try:
            # most often the version made last (a step's top version): its counter is
            # known without parsing 32 digits
            major = last[1] if current is last[0] else int(current.partition(".")[0])
        except ValueError:
            raise ValueError(
                f"Cannot derive the next channel version from {current!r}: string "
                "versions must start with an integer counter (like '0000...0003.<hex>')."
            ) from None
    elif current is None:
        major = 0
    elif isinstance(current, str):
        return next_string_version(str(current))  # a str subclass
    elif isinstance(current, (int, float)):
        major = int(current)
    else:
        raise TypeError(
            f"Cannot derive the next channel version from {current!r} "
            f"(type {type(current).__name__}); expected None, int, float or str."
        )
    made = "%032d.%016x" % (major + 1, _rand64())  # noqa: UP031 (as in uuid6_str)
    _last_version = (made, major + 1)  # replaced whole: threads read one or the other
    return made


_last_version: tuple[str, int] = ("", 0)
"""The last version :func:`next_string_version` made, with its counter."""
