"""The run event log (database operations): what a run streamed, for other processes
and for clients that join or resume a stream."""

from __future__ import annotations

import time
from collections.abc import Sequence

from stategraph.server._db import Op

__all__ = ["append", "read", "purge", "CHANNEL", "notice", "parse_notice"]


_CHUNK = 150
"""Rows per INSERT (5 parameters each: under SQLite's and PostgreSQL's limits)."""


CHANNEL = "sg_srv_events"
"""PostgreSQL ``NOTIFY`` channel announcing new events (payload: :func:`notice`)."""

_RECORD, _FIELD = "\x1e", "\x1f"
_MAX_NOTICE = 7800
"""Bytes of a notice payload at most (PostgreSQL refuses 8000 and more)."""


def notice(run_id: str, events: Sequence[tuple[int, str, str]]) -> str:
    """The ``NOTIFY`` payload announcing ``events`` of ``run_id``: the run id, then
    the events themselves when they fit (so a follower in another process needs no
    read), framed by the ASCII record and unit separators, which JSON text never holds
    raw. Events that do not fit are announced by the run id alone."""
    parts = [run_id]
    for seq, event, data in events:
        if _RECORD in data or _FIELD in data or _RECORD in event or _FIELD in event:
            return run_id
        parts.append(f"{seq}{_FIELD}{event}{_FIELD}{data}")
    payload = _RECORD.join(parts)
    if len(payload) > _MAX_NOTICE // 4 and len(payload.encode()) > _MAX_NOTICE:
        return run_id
    return payload


def parse_notice(payload: str) -> tuple[str, list[tuple[int, str, str]] | None]:
    """``(run_id, events)`` of a :func:`notice` payload; ``events`` is ``None`` when
    the payload named the run alone (read the table)."""
    run_id, sep, rest = payload.partition(_RECORD)
    if not sep:
        return run_id, None
    out = []
    for record in rest.split(_RECORD):
        seq, event, data = record.split(_FIELD, 2)
        out.append((int(seq), event, data))
    return run_id, out


def append(
    run_id: str, events: Sequence[tuple[int, str, str]], *, notify: bool = False
) -> Op[None]:
    """Store ``(seq, event, data JSON)`` rows of ``run_id`` (an existing seq is kept),
    a batch per statement (one round trip per 150 events). ``notify`` (PostgreSQL)
    announces them on :data:`CHANNEL` when the transaction commits (with the events
    themselves when they fit: :func:`notice`)."""
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
        yield (f"SELECT pg_notify('{CHANNEL}', ?)", (notice(run_id, events),))


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
