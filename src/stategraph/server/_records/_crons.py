"""Crons (database operations): schedules that start runs."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from typing_extensions import Unpack

from stategraph.server._db import Op
from stategraph.server._json import dumps, iso, loads
from stategraph.server._records._listing import Found, Listing, Page

__all__ = [
    "CRON_COLS",
    "cron_json",
    "insert",
    "get",
    "search",
    "delete",
    "due",
    "set_next",
    "update",
]

CRON_COLS = (
    "cron_id, assistant_id, thread_id, user_id, schedule, timezone, payload, metadata, "
    "end_time, next_run_date, on_run_completed, enabled, created_at, updated_at"
)
_SORTABLE = (
    "cron_id",
    "assistant_id",
    "thread_id",
    "next_run_date",
    "end_time",
    "created_at",
    "updated_at",
)


def cron_json(row: tuple[Any, ...]) -> dict[str, Any]:
    """An ``sg_srv_crons`` row as LangGraph's Cron."""
    return {
        "cron_id": row[0],
        "assistant_id": row[1],
        "thread_id": row[2],
        "user_id": row[3] or "",
        "end_time": None if row[8] is None else iso(row[8]),
        "schedule": row[4],
        "timezone": row[5],
        "payload": loads(row[6]),
        "next_run_date": None if row[9] is None else iso(row[9]),
        "metadata": loads(row[7]),
        "on_run_completed": row[10],
        "enabled": bool(row[11]),
        "created_at": iso(row[12]),
        "updated_at": iso(row[13]),
    }


_LISTING = Listing("sg_srv_crons", CRON_COLS, "cron_id", _SORTABLE, cron_json)


def insert(cron: Mapping[str, Any]) -> Op[dict[str, Any]]:
    """Record a new cron (``cron`` has every column, times as epoch seconds)."""
    now = time.time()
    rows = yield (
        "INSERT INTO sg_srv_crons (cron_id, assistant_id, thread_id, user_id, schedule,"
        " timezone, payload, metadata, end_time, next_run_date, on_run_completed, enabled,"
        f" created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING {CRON_COLS}",
        (
            cron["cron_id"],
            cron["assistant_id"],
            cron.get("thread_id"),
            cron.get("user_id") or "",
            cron["schedule"],
            cron.get("timezone"),
            dumps(cron["payload"]),
            dumps(cron.get("metadata") or {}),
            cron.get("end_time"),
            cron.get("next_run_date"),
            cron.get("on_run_completed"),
            1 if cron.get("enabled", True) else 0,
            now,
            now,
        ),
    )
    return cron_json(rows[0])


def get(cron_id: str) -> Op[dict[str, Any] | None]:
    """The cron, or ``None``."""
    rows = yield (f"SELECT {CRON_COLS} FROM sg_srv_crons WHERE cron_id = ?", (cron_id,))
    return cron_json(rows[0]) if rows else None


def search(
    *,
    assistant_id: str | None = None,
    thread_id: str | None = None,
    enabled: bool | None = None,
    metadata: Mapping[str, Any] | None = None,
    **page: Unpack[Page],
) -> Op[Found]:
    """Crons matching every filter; the page and the total count."""
    where: list[str] = []
    params: list[Any] = []
    for column, value in (("assistant_id", assistant_id), ("thread_id", thread_id)):
        if value:
            where.append(f"{column} = ?")
            params.append(value)
    if enabled is not None:
        where.append("enabled = ?")
        params.append(1 if enabled else 0)
    return (yield from _LISTING.page(where, params, {"metadata": metadata}, **page))


def delete(cron_id: str) -> Op[bool]:
    """Delete the cron; ``False`` if there was none."""
    rows = yield ("DELETE FROM sg_srv_crons WHERE cron_id = ? RETURNING cron_id", (cron_id,))
    return bool(rows)


def update(cron_id: str, changes: Mapping[str, Any]) -> Op[dict[str, Any] | None]:
    """Change columns of a cron (``schedule``, ``payload``, ``enabled``, ``end_time``,
    ``next_run_date``, ``metadata``, ``on_run_completed``, ``timezone``)."""
    rows = yield (f"SELECT {CRON_COLS} FROM sg_srv_crons WHERE cron_id = ?", (cron_id,))
    if not rows:
        return None
    sets: list[str] = ["updated_at = ?"]
    params: list[Any] = [time.time()]
    for key, value in changes.items():
        if key in ("payload", "metadata"):
            value = dumps(value)
        elif key == "enabled":
            value = 1 if value else 0
        sets.append(f"{key} = ?")
        params.append(value)
    rows = yield (
        f"UPDATE sg_srv_crons SET {', '.join(sets)} WHERE cron_id = ? RETURNING {CRON_COLS}",
        (*params, cron_id),
    )
    return cron_json(rows[0])


def due(now: float) -> Op[list[tuple[str, float]]]:
    """``(cron_id, next_run_date)`` of enabled crons due at ``now``."""
    rows = yield (
        "SELECT cron_id, next_run_date FROM sg_srv_crons WHERE enabled = 1"
        " AND next_run_date IS NOT NULL AND next_run_date <= ? ORDER BY next_run_date",
        (now,),
    )
    return [(r[0], float(r[1])) for r in rows]


def set_next(cron_id: str, fired: float, next_run: float | None) -> Op[None]:
    """Move a cron from the tick ``fired`` to ``next_run`` (``None``: it ended), unless
    another process moved it already."""
    yield (
        "UPDATE sg_srv_crons SET next_run_date = ?, enabled = ?, updated_at = ?"
        " WHERE cron_id = ? AND next_run_date = ?",
        (next_run, 1 if next_run is not None else 0, time.time(), cron_id, fired),
    )
