"""Runs (database operations): the record the API shows, not the queue."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from stategraph.server._db import Op
from stategraph.server._json import dumps, iso, loads

__all__ = ["RUN_COLS", "run_json", "insert", "get", "list_runs", "set_status", "delete", "result"]

RUN_COLS = (
    "run_id, thread_id, assistant_id, created_at, updated_at, status, metadata, kwargs, "
    "multitask_strategy"
)
RUN_STATUSES = ("pending", "running", "error", "success", "timeout", "interrupted")


def run_json(row: tuple[Any, ...]) -> dict[str, Any]:
    """An ``sg_srv_runs`` row as LangGraph's Run."""
    return {
        "run_id": row[0],
        "thread_id": row[1],
        "assistant_id": row[2],
        "metadata": loads(row[6]),
        "status": row[5],
        "kwargs": loads(row[7]),
        "multitask_strategy": row[8],
        "created_at": iso(row[3]),
        "updated_at": iso(row[4]),
        "langsmith_session_name": None,
    }


def insert(
    run_id: str,
    thread_id: str | None,
    assistant_id: str,
    metadata: Mapping[str, Any],
    kwargs: Mapping[str, Any],
    multitask_strategy: str,
    created_at: float | None = None,
) -> Op[dict[str, Any]]:
    """Record a new pending run."""
    now = created_at if created_at is not None else time.time()
    rows = yield (
        "INSERT INTO sg_srv_runs (run_id, thread_id, assistant_id, created_at, updated_at,"
        " status, metadata, kwargs, multitask_strategy)"
        f" VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?) RETURNING {RUN_COLS}",
        (
            run_id,
            thread_id,
            assistant_id,
            now,
            now,
            dumps(metadata),
            dumps(kwargs),
            multitask_strategy,
        ),
    )
    return run_json(rows[0])


def get(run_id: str, thread_id: str | None = None) -> Op[dict[str, Any] | None]:
    """The run (of ``thread_id`` when given), or ``None``."""
    if thread_id is None:
        rows = yield (f"SELECT {RUN_COLS} FROM sg_srv_runs WHERE run_id = ?", (run_id,))
    else:
        rows = yield (
            f"SELECT {RUN_COLS} FROM sg_srv_runs WHERE run_id = ? AND thread_id = ?",
            (run_id, thread_id),
        )
    return run_json(rows[0]) if rows else None


def list_runs(
    thread_id: str, *, limit: int = 10, offset: int = 0, status: str | None = None
) -> Op[list[dict[str, Any]]]:
    """The thread's runs, newest first."""
    where = "thread_id = ?"
    params: list[Any] = [thread_id]
    if status:
        where += " AND status = ?"
        params.append(status)
    rows = yield (
        f"SELECT {RUN_COLS} FROM sg_srv_runs WHERE {where} ORDER BY created_at DESC, run_id DESC"
        " LIMIT ? OFFSET ?",
        (*params, limit, offset),
    )
    return [run_json(r) for r in rows]


def set_status(
    run_id: str,
    status: str,
    *,
    result: Any = None,
    metadata: Mapping[str, Any] | None = None,
    only_if: tuple[str, ...] = (),
    attempt: int | None = None,
    worker_id: str | None = None,
    kwargs: Mapping[str, Any] | None = None,
) -> Op[bool]:
    """Set the run's status (and final ``result``, JSON text or a value); with
    ``only_if``, only from one of those statuses. ``False`` when nothing changed.
    ``worker_id`` records which worker executes it (for operators; not in the API).
    ``attempt`` is written into the run's config metadata (``kwargs``: the run's
    kwargs when the caller just read them, saving a read)."""
    now = time.time()
    sets = "status = ?, updated_at = ?"
    params: list[Any] = [status, now]
    if worker_id is not None:
        sets += ", worker_id = ?"
        params.append(worker_id)
    if result is not None:
        sets += ", result = ?"
        params.append(result if isinstance(result, str) else dumps(result))
    if metadata:
        rows = yield ("SELECT metadata FROM sg_srv_runs WHERE run_id = ?", (run_id,))
        if rows:
            sets += ", metadata = ?"
            params.append(dumps({**loads(rows[0][0]), **metadata}))
    if attempt is not None:
        if kwargs is None:
            rows = yield ("SELECT kwargs FROM sg_srv_runs WHERE run_id = ?", (run_id,))
            kwargs = loads(rows[0][0]) if rows else None
        if kwargs is not None:
            config = dict(kwargs.get("config") or {})
            config["metadata"] = {**(config.get("metadata") or {}), "run_attempt": attempt}
            sets += ", kwargs = ?"
            params.append(dumps({**kwargs, "config": config}))
    where = "run_id = ?"
    params.append(run_id)
    if only_if:
        where += f" AND status IN ({', '.join('?' for _ in only_if)})"
        params.extend(only_if)
    rows = yield (f"UPDATE sg_srv_runs SET {sets} WHERE {where} RETURNING run_id", tuple(params))
    return bool(rows)


def result(run_id: str) -> Op[tuple[str | None, str | None]]:
    """``(status, final result as JSON text)`` of the run (``(None, None)`` if unknown)."""
    rows = yield ("SELECT status, result FROM sg_srv_runs WHERE run_id = ?", (run_id,))
    return (rows[0][0], rows[0][1]) if rows else (None, None)


def delete(run_id: str, thread_id: str | None = None) -> Op[bool]:
    """Delete the run and its events; ``False`` if there was none."""
    if thread_id is None:
        rows = yield ("DELETE FROM sg_srv_runs WHERE run_id = ? RETURNING run_id", (run_id,))
    else:
        rows = yield (
            "DELETE FROM sg_srv_runs WHERE run_id = ? AND thread_id = ? RETURNING run_id",
            (run_id, thread_id),
        )
    yield ("DELETE FROM sg_srv_events WHERE run_id = ?", (run_id,))
    return bool(rows)
