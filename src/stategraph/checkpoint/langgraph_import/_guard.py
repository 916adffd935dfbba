"""Refusing to open LangGraph's checkpoint tables with a stategraph saver.

LangGraph's SQLite saver uses tables named like stategraph's (``checkpoints``,
``writes``) with other columns; opening such a file used to add stategraph's tables
and then fail. The savers call these checks *before* changing anything (not even the
journal mode) and raise :class:`LangGraphDatabaseError`, which names the importer.
"""

from __future__ import annotations

import sqlite3
from typing import Any

__all__ = ["LangGraphDatabaseError", "refuse_langgraph_sqlite", "langgraph_postgres_statement"]

_HOW = (
    "stategraph never modifies it. Copy its threads into a stategraph database with "
    "`stategraph import-langgraph {source} --sqlite NEW.sqlite` (or --postgres DSN) or "
    "stategraph.checkpoint.langgraph_import.import_langgraph(...), then open the new one."
)


class LangGraphDatabaseError(RuntimeError):
    """A stategraph saver was pointed at a database holding LangGraph's checkpoints."""


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def is_langgraph_sqlite(conn: sqlite3.Connection) -> bool:
    """Whether the database has LangGraph's checkpoint tables (and not stategraph's)."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "checkpoints" not in tables or "schema_migrations" in tables:
        return False
    columns = _columns(conn, "checkpoints")
    return "metadata" in columns and "metadata_type" not in columns


def refuse_langgraph_sqlite(conn: sqlite3.Connection, owner: str) -> None:
    """Raise :class:`LangGraphDatabaseError` if ``conn`` holds LangGraph's tables."""
    if is_langgraph_sqlite(conn):
        path = next(
            (row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), ""
        )
        raise LangGraphDatabaseError(
            f"{owner}: this SQLite database ({path or 'in memory'}) holds LangGraph "
            f"checkpoint tables; " + _HOW.format(source=path or "FILE")
        )


def langgraph_postgres_statement() -> str:
    """SQL answering ``(langgraph tables present, stategraph tables present)`` for the
    connection's current schema."""
    return (
        "SELECT to_regclass('checkpoint_migrations') IS NOT NULL "
        "AND to_regclass('checkpoints') IS NOT NULL, "
        "to_regclass('sg_checkpoint_migrations') IS NOT NULL"
    )


def postgres_error(owner: str, row: Any) -> LangGraphDatabaseError | None:
    """The error to raise for a row of :func:`langgraph_postgres_statement`, if any."""
    if row and row[0] and not row[1]:
        return LangGraphDatabaseError(
            f"{owner}: this PostgreSQL schema holds LangGraph checkpoint tables "
            f"(checkpoints, checkpoint_migrations); " + _HOW.format(source="postgresql://...")
        )
    return None
