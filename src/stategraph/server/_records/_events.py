"""The run event log (database operations): what a run streamed, for other processes
and for clients that join or resume a stream."""

from __future__ import annotations

import time
from collections.abc import Sequence

from stategraph.server._db import Op

__all__ = ["append", "read", "purge"]


def append(run_id: str, events: Sequence[tuple[int, str, str]]) -> Op[None]:
    """Store ``(seq, event, data JSON)`` rows of ``run_id`` (an existing seq is kept)."""
    now = time.time()
    for seq, event, data in events:
        yield (
            "INSERT INTO sg_srv_events (run_id, seq, event, data, created_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, seq) DO NOTHING",
            (run_id, seq, event, data, now),
        )


def read(run_id: str, after: int, limit: int = 1000) -> Op[list[tuple[int, str, str]]]:
    """Events of ``run_id`` with ``seq > after``, in order."""
    rows = yield (
        "SELECT seq, event, data FROM sg_srv_events WHERE run_id = ? AND seq > ?"
        " ORDER BY seq LIMIT ?",
        (run_id, after, limit),
    )
    return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]


def purge(before: float) -> Op[int]:
    """Forget events stored before ``before`` (epoch seconds); returns how many."""
    rows = yield ("DELETE FROM sg_srv_events WHERE created_at < ? RETURNING seq", (before,))
    return len(rows)
