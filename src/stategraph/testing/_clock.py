"""Deterministic ids and clock: runs that produce the same checkpoints every time."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone

from stategraph import _clock

__all__ = ["DeterministicSource", "deterministic"]

_EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc)


class DeterministicSource:
    """A clock that starts at ``start`` and moves ``tick`` forward on every read, and
    random bytes from a generator seeded with ``seed``.

    Checkpoint ids (time-ordered UUIDs), their timestamps, task ids, channel versions
    and the ids given to messages all come out the same on every run.
    """

    def __init__(
        self,
        *,
        start: datetime = _EPOCH,
        tick: timedelta = timedelta(milliseconds=1),
        seed: int = 0,
    ) -> None:
        if start.tzinfo is None:
            raise ValueError("start must be timezone-aware, e.g. datetime(2024, 1, 1, tzinfo=UTC).")
        if tick <= timedelta(0):
            raise ValueError(f"tick must be positive, got {tick}.")
        self._now = round(start.timestamp() * 1_000_000) * 1000
        self._tick = round(tick.total_seconds() * 1_000_000) * 1000
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    def time_ns(self) -> int:
        """The current fake time; each read advances it by one tick."""
        with self._lock:
            now = self._now
            self._now += self._tick
            return now

    def random_bytes(self, n: int) -> bytes:
        """``n`` bytes from the seeded generator."""
        with self._lock:
            return self._random.randbytes(n)


@contextmanager
def deterministic(
    *,
    start: datetime = _EPOCH,
    tick: timedelta = timedelta(milliseconds=1),
    seed: int = 0,
) -> Iterator[DeterministicSource]:
    """Inside the block, ids and timestamps are reproducible (see :class:`DeterministicSource`).

    Example::

        with deterministic():
            graph.invoke(inputs, config)
            ids = [c.config["configurable"]["checkpoint_id"] for c in graph.get_state_history(config)]

    Run the same code twice and ``ids`` are equal. Work done by other threads in the
    meantime draws from the same source, so keep runs in the block sequential.
    """
    source = DeterministicSource(start=start, tick=tick, seed=seed)
    previous = _clock.set_source(source)
    try:
        yield source
    finally:
        _clock.set_source(previous)
