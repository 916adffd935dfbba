"""Threads (database operations): metadata, status and the cached state values."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from typing_extensions import Unpack

from stategraph.server._db import Op
from stategraph.server._json import dumps, iso, loads
from stategraph.server._records._listing import Found, Listing, Page

__all__ = [
    "THREAD_COLS",
    "thread_json",
    "get",
    "insert",
    "update",
    "set_state",
    "set_status",
    "delete",
    "search",
    "expired",
    "copy",
]

THREAD_COLS = (
    "thread_id, created_at, updated_at, state_updated_at, metadata, status, config, "
    "state_values, interrupts, error, ttl_minutes, expires_at"
)
_SORTABLE = ("thread_id", "status", "created_at", "updated_at", "state_updated_at")
STATUSES = ("idle", "busy", "interrupted", "error")


def thread_json(row: Sequence[Any]) -> dict[str, Any]:
    """An ``sg_srv_threads`` row as LangGraph's Thread."""
    out: dict[str, Any] = {
        "thread_id": row[0],
        "created_at": iso(row[1]),
        "updated_at": iso(row[2]),
        "state_updated_at": iso(row[3]),
        "metadata": loads(row[4]),
        "status": row[5],
        "config": loads(row[6]),
        "values": loads(row[7]),
    }
    if row[8] is not None or row[9] is not None:
        out["error"] = loads(row[9])
        out["interrupts"] = loads(row[8]) or {}
    return out


_LISTING = Listing("sg_srv_threads", THREAD_COLS, "thread_id", _SORTABLE, thread_json)


def get(thread_id: str) -> Op[dict[str, Any] | None]:
    """The thread, or ``None``."""
    rows = yield (f"SELECT {THREAD_COLS} FROM sg_srv_threads WHERE thread_id = ?", (thread_id,))
    return thread_json(rows[0]) if rows else None


def insert(
    thread_id: str,
    metadata: Mapping[str, Any],
    ttl_minutes: float | None = None,
    config: Mapping[str, Any] | None = None,
) -> Op[tuple[dict[str, Any], bool]]:
    """Create a thread; returns ``(thread, created)`` (``created=False``: it existed)."""
    rows = yield (f"SELECT {THREAD_COLS} FROM sg_srv_threads WHERE thread_id = ?", (thread_id,))
    if rows:
        return thread_json(rows[0]), False
    now = time.time()
    expires = now + ttl_minutes * 60 if ttl_minutes else None
    rows = yield (
        "INSERT INTO sg_srv_threads (thread_id, created_at, updated_at, state_updated_at,"
        " metadata, status, config, ttl_minutes, expires_at)"
        f" VALUES (?, ?, ?, ?, ?, 'idle', ?, ?, ?) RETURNING {THREAD_COLS}",
        (thread_id, now, now, now, dumps(metadata), dumps(config or {}), ttl_minutes, expires),
    )
    return thread_json(rows[0]), True


def update(
    thread_id: str,
    metadata: Mapping[str, Any] | None,
    ttl_minutes: float | None = None,
) -> Op[dict[str, Any] | None]:
    """Merge ``metadata`` into the thread's and (re)set its ttl; ``None`` if unknown."""
    rows = yield (f"SELECT {THREAD_COLS} FROM sg_srv_threads WHERE thread_id = ?", (thread_id,))
    if not rows:
        return None
    now = time.time()
    merged = {**loads(rows[0][4]), **(metadata or {})}
    ttl = ttl_minutes if ttl_minutes is not None else rows[0][10]
    expires = now + ttl * 60 if ttl else None
    rows = yield (
        "UPDATE sg_srv_threads SET metadata = ?, updated_at = ?, ttl_minutes = ?, expires_at = ?"
        f" WHERE thread_id = ? RETURNING {THREAD_COLS}",
        (dumps(merged), now, ttl, expires, thread_id),
    )
    return thread_json(rows[0])


def set_state(
    thread_id: str,
    *,
    status: str,
    values: Any,
    interrupts: Mapping[str, Any],
    error: Any = None,
    metadata: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
) -> Op[None]:
    """Record the thread's state after a run or a state update (values as JSON text)."""
    rows = yield (
        "SELECT metadata, ttl_minutes FROM sg_srv_threads WHERE thread_id = ?",
        (thread_id,),
    )
    if not rows:
        return
    now = time.time()
    merged = {**loads(rows[0][0]), **(metadata or {})}
    expires = now + rows[0][1] * 60 if rows[0][1] else None
    cfg = dumps(config) if config is not None else None
    yield (
        "UPDATE sg_srv_threads SET status = ?, state_values = ?, interrupts = ?, error = ?,"
        " metadata = ?, updated_at = ?, state_updated_at = ?, expires_at = ?,"
        " config = COALESCE(?, config) WHERE thread_id = ?",
        (
            status,
            values if isinstance(values, str) or values is None else dumps(values),
            dumps(interrupts),
            None if error is None else dumps(error),
            dumps(merged),
            now,
            now,
            expires,
            cfg,
            thread_id,
        ),
    )


def set_status(thread_id: str, status: str, metadata: Mapping[str, Any] | None = None) -> Op[None]:
    """Set the thread's status (e.g. ``busy`` when a run starts), merging ``metadata``
    (nothing is written when the thread already has that status and metadata)."""
    now = time.time()
    if metadata:
        rows = yield (
            "SELECT metadata, status FROM sg_srv_threads WHERE thread_id = ?",
            (thread_id,),
        )
        if rows:
            current = loads(rows[0][0])
            merged = {**current, **metadata}
            if rows[0][1] == status and merged == current:
                return
            yield (
                "UPDATE sg_srv_threads SET status = ?, metadata = ?, updated_at = ?"
                " WHERE thread_id = ?",
                (status, dumps(merged), now, thread_id),
            )
        return
    yield (
        "UPDATE sg_srv_threads SET status = ?, updated_at = ? WHERE thread_id = ?",
        (status, now, thread_id),
    )


def delete(thread_id: str, *, keep_runs: bool = False) -> Op[tuple[bool, list[str]]]:
    """Delete the thread, its runs (unless ``keep_runs``: a stateless run's temporary
    thread, whose run record clients still read), their events and its crons; returns
    whether it existed and the deleted run ids."""
    rows = yield (
        "DELETE FROM sg_srv_threads WHERE thread_id = ? RETURNING thread_id",
        (thread_id,),
    )
    if not rows:
        return False, []
    if keep_runs:
        return True, []
    runs = yield ("DELETE FROM sg_srv_runs WHERE thread_id = ? RETURNING run_id", (thread_id,))
    run_ids = [r[0] for r in runs]
    for run_id in run_ids:
        yield ("DELETE FROM sg_srv_events WHERE run_id = ?", (run_id,))
    yield ("DELETE FROM sg_srv_crons WHERE thread_id = ?", (thread_id,))
    return True, run_ids


def search(
    *,
    ids: Sequence[str] | None = None,
    metadata: Mapping[str, Any] | None = None,
    values: Mapping[str, Any] | None = None,
    status: str | None = None,
    **page: Unpack[Page],
) -> Op[Found]:
    """Threads matching every filter; the page and the total count. ``allowed``: an
    extra predicate on the thread (auth filters)."""
    where: list[str] = []
    params: list[Any] = []
    if ids:
        where.append(f"thread_id IN ({', '.join('?' for _ in ids)})")
        params.extend(ids)
    if status:
        where.append("status = ?")
        params.append(status)
    filters = {"metadata": metadata, "values": values}
    return (yield from _LISTING.page(where, params, filters, **page))


def expired(now: float) -> Op[list[str]]:
    """Ids of threads whose ttl ran out."""
    rows = yield (
        "SELECT thread_id FROM sg_srv_threads WHERE expires_at IS NOT NULL AND expires_at < ?",
        (now,),
    )
    return [r[0] for r in rows]


def copy(source_id: str, target_id: str) -> Op[dict[str, Any] | None]:
    """A new thread ``target_id`` with the metadata, config and state of ``source_id``."""
    rows = yield (f"SELECT {THREAD_COLS} FROM sg_srv_threads WHERE thread_id = ?", (source_id,))
    if not rows:
        return None
    src = rows[0]
    now = time.time()
    status = "interrupted" if src[5] == "interrupted" else "idle"
    rows = yield (
        "INSERT INTO sg_srv_threads (thread_id, created_at, updated_at, state_updated_at,"
        " metadata, status, config, state_values, interrupts, error, ttl_minutes, expires_at)"
        f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING {THREAD_COLS}",
        (
            target_id,
            now,
            now,
            now,
            src[4],
            status,
            src[6],
            src[7],
            src[8],
            src[9],
            src[10],
            now + src[10] * 60 if src[10] else None,
        ),
    )
    return thread_json(rows[0])
