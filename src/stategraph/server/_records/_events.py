"""The run event log (database operations): what a run streamed, for other processes
and for clients that join or resume a stream."""

from __future__ import annotations

import time
from collections.abc import Sequence

from stategraph.server._db import Op

__all__ = ["append", "read", "purge", "CHANNEL"]


_CHUNK = 150
"""Rows per INSERT (5 parameters each: under SQLite's and PostgreSQL's limits)."""


CHANNEL = "sg_srv_events"
"""PostgreSQL ``NOTIFY`` channel announcing new events (payload: the run id)."""


def append(
    run_id: str, events: Sequence[tuple[int, str, str]], *, notify: bool = False
) -> Op[None]:
    """Store ``(seq, event, data JSON)`` rows of ``run_id`` (an existing seq is kept),
    a batch per statement (one round trip per 150 events). ``notify`` (PostgreSQL)
    announces them on :data:`CHANNEL` when the transaction commits."""
    now = time.time()
    for start in range(0, len(events), _CHUNK):
        chunk = events[start : start + _CHUNK]
        params: list[object] = []
        for seq, event, data in chunk:
            params += [run_id, seq, event, data, now]
        values = ", ".join("(?, ?, ?, ?, ?)" for _ in chunk)
        yield (
            f"INSERT INTO sg_srv_events (run_id, seq, event, data, created_at) VALUES {values}"
            " ON CONFLICT (run_id, seq) DO NOTHING",
            tuple(params),
        )
    if notify and events:
        yield (f"SELECT pg_notify('{CHANNEL}', ?)", (run_id,))


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
