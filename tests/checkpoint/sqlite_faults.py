"""Failures injected into a SQLite connection's statements, for crash-path tests."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from typing import Any


def executemany_failing_after_first_row(
    real: Callable[[str, Any], sqlite3.Cursor], marker: str, inserted: list[Any]
) -> Callable[[str, Any], sqlite3.Cursor]:
    """A stand-in for ``conn.executemany`` (``real``): a statement whose text holds
    ``marker`` inserts its first row (recorded in ``inserted``), then fails with
    ``sqlite3.OperationalError("injected failure")``; others run as they are."""

    def executemany(sql: str, rows: Any) -> sqlite3.Cursor:
        if marker not in sql:
            return real(sql, rows)

        def first_row_then_failure() -> Iterator[Any]:
            it = iter(rows)
            inserted.append(next(it))
            yield inserted[-1]
            raise sqlite3.OperationalError("injected failure")

        return real(sql, first_row_then_failure())

    return executemany
