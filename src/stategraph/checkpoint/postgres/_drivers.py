"""The drivers of :data:`~._base.Plan`: run a plan's statements on a psycopg
connection (sync or async), feeding the plan their rows. The only I/O of a plan."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, TypeVar

import psycopg
from psycopg.rows import tuple_row

from stategraph.checkpoint.postgres import _sql
from stategraph.checkpoint.postgres._base import Plan

__all__ = ["adrive_on", "drive_on"]

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
        rows: Any = None
        while True:
            try:
                sql, params = plan.send(rows)
            except StopIteration as stop:
                result: T = stop.value
                return result
            cur.execute(sql, params)
            rows = cur.fetchall() if cur.description is not None else None


async def adrive_on(
    conn: psycopg.AsyncConnection[Any],
    plan: Plan[T],
    *,
    transaction: bool = False,
    snapshot: bool = False,
) -> T:
    """Execute the statements of ``plan`` on a cursor of ``conn``, feeding it their
    rows; with ``transaction`` in one transaction, with ``snapshot`` in one REPEATABLE
    READ transaction."""
    async with (
        conn.transaction() if transaction or snapshot else nullcontext(),
        conn.cursor(row_factory=tuple_row) as cur,
    ):
        if snapshot:
            await cur.execute(_sql.REPEATABLE_READ)
        rows: Any = None
        while True:
            try:
                sql, params = plan.send(rows)
            except StopIteration as stop:
                result: T = stop.value
                return result
            await cur.execute(sql, params)
            rows = await cur.fetchall() if cur.description is not None else None
