"""The one place the library reads the clock and draws random ids.

Checkpoint ids, timestamps, channel versions and generated message ids all come from
here, so :func:`stategraph.testing.deterministic` can make a run reproducible by
swapping the source (a fixed start time that ticks on each read, a seeded generator).
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone
from typing import Protocol

__all__ = [
    "Source",
    "SYSTEM",
    "get_source",
    "set_source",
    "utc_now",
    "utc_now_iso",
    "iso_of_ns",
    "time_ns",
    "random_bytes",
    "uuid4_str",
]


class Source(Protocol):
    """Where time and randomness come from."""

    def time_ns(self) -> int:
        """Nanoseconds since the Unix epoch."""
        ...

    def random_bytes(self, n: int) -> bytes:
        """``n`` random bytes."""
        ...


class _System:
    """The real clock and ``os.urandom``."""

    def time_ns(self) -> int:
        return time.time_ns()

    def random_bytes(self, n: int) -> bytes:
        return os.urandom(n)


SYSTEM: Source = _System()
_source: Source = SYSTEM


def get_source() -> Source:
    """The source in use."""
    return _source


def set_source(source: Source) -> Source:
    """Use ``source`` from now on; returns the previous one (to restore it)."""
    global _source
    previous, _source = _source, source
    return previous


def time_ns() -> int:
    """Current time in nanoseconds since the epoch, from the active source."""
    return _source.time_ns()


def random_bytes(n: int) -> bytes:
    """``n`` random bytes from the active source."""
    return _source.random_bytes(n)


def utc_now() -> datetime:
    """Current UTC time (timezone-aware), from the active source."""
    ns = _source.time_ns()
    return datetime.fromtimestamp(ns // 1_000_000_000, tz=timezone.utc).replace(
        microsecond=(ns // 1000) % 1_000_000
    )


_iso_second: tuple[int, str] = (-1, "")  # (epoch second, its ISO text up to the seconds)


def utc_now_iso() -> str:
    """``utc_now().isoformat()``, without building a datetime on every call.

    The text up to the seconds is made once per second (kept in one tuple, replaced
    whole, so threads never mix two seconds); microseconds are appended as
    ``isoformat`` does (left out when zero).
    """
    return iso_of_ns(_source.time_ns())


def iso_of_ns(ns: int) -> str:
    """The time ``ns`` (nanoseconds since the epoch) as :func:`utc_now_iso` writes it."""
    global _iso_second
    sec, us = divmod(ns // 1000, 1_000_000)
    cached = _iso_second
    if cached[0] != sec:
        head = datetime.fromtimestamp(sec, tz=timezone.utc).isoformat()
        cached = _iso_second = (sec, head[:-6])  # without the "+00:00" offset
    if us:
        return f"{cached[1]}.{us:06d}+00:00"
    return f"{cached[1]}+00:00"


def uuid4_str() -> str:
    """A random (version 4) UUID string, from the active source."""
    value = int.from_bytes(_source.random_bytes(16), "big")
    value = (value & ~(0xF000 << 64)) | (0x4000 << 64)  # version 4
    value = (value & ~(0xC000 << 48)) | (0x8000 << 48)  # RFC 4122 variant
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
