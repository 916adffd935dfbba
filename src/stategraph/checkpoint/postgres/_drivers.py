"""The drivers of :data:`~._base.Plan`: run a plan's statements on a psycopg
connection (sync or async), feeding the plan their rows. The only I/O of a plan."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, TypeVar

import psycopg
from psycopg.rows import tuple_row

from stategraph.checkpoint.postgres import _sql
from stategraph.checkpoint.postgres._base import Plan

__all__ = ["adrive_on", "adrive_retained", "drive_on", "drive_retained"]

T = TypeVar("T")


def drive_on(
    conn: psycopg.Connection[Any],
    plan: Plan[T],
    *,
    transaction: bool = False,
    snapshot: bool = False,
) -> T:
    """Execute the statements of ``plan`` on a cursor of ``conn``, feeding it their
    rows; with ``transaction`` in one transaction, with ``snapshot`` in one REPEATABLE
    READ transaction."""
    with (
        conn.transaction() if transaction or snapshot else nullcontext(),
        conn.cursor(row_factory=tuple_row) as cur,
    ):
        if snapshot:
            cur.execute(_sql.REPEATABLE_READ)
        send = plan.send
        try:  # one handler for the whole run: no call per statement besides the plan's
            sql, params = send(None)
            while True:
                cur.execute(sql, params)
                sql, params = send(cur.fetchall() if cur.description is not None else None)
        except StopIteration as stop:
            result: T = stop.value
            return result


async def adrive_on(
    conn: psycopg.AsyncConnection[Any],
    plan: Plan[T],
    *,
    transaction: bool = False,
    snapshot: bool = False,
) -> T:
    """:func:`drive_on` for an async connection."""
    async with (
        conn.transaction() if transaction or snapshot else nullcontext(),
        conn.cursor(row_factory=tuple_row) as cur,
    ):
        if snapshot:
            await cur.execute(_sql.REPEATABLE_READ)
        rows: Any = None
        try:
            while True:
                statement = plan.send(rows)
                await cur.execute(*statement)
                rows = await cur.fetchall() if cur.description is not None else None
        except StopIteration as stop:
            result: T = stop.value
            return result


def drive_retained(conn: psycopg.Connection[Any], thread_id: str, plan: Plan[Any]) -> None:
    """Run a retention ``plan`` of thread ``thread_id`` in one REPEATABLE READ
    transaction holding the thread's retention lock, taken before the transaction:
    its snapshot must see what writers that held the lock committed (see
    :data:`~._sql.LOCK_BASES`)."""
    conn.execute(_sql.LOCK_BASES, {"thread_id": thread_id})
    try:
        drive_on(conn, plan, snapshot=True)
    finally:
        if not conn.closed:  # a lost session released the lock with it
            conn.execute(_sql.UNLOCK_BASES, {"thread_id": thread_id})


async def adrive_retained(
    conn: psycopg.AsyncConnection[Any], thread_id: str, plan: Plan[Any]
) -> None:
    """:func:`drive_retained` for an async connection."""
    await conn.execute(_sql.LOCK_BASES, {"thread_id": thread_id})
    try:
        await adrive_on(conn, plan, snapshot=True)
    finally:
        if not conn.closed:
            await conn.execute(_sql.UNLOCK_BASES, {"thread_id": thread_id})
