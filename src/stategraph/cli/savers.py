"""Opening the checkpoint database named on the command line."""

from __future__ import annotations

import argparse
import os
import sqlite3
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from stategraph.cli.errors import EXIT_MISSING_DEPENDENCY, EXIT_NOT_FOUND, EXIT_USAGE, CliError

__all__ = ["add_saver_arguments", "open_saver", "has_saver"]


def add_saver_arguments(parser: argparse.ArgumentParser) -> None:
    """``--sqlite FILE`` / ``--postgres DSN`` (environment: ``STATEGRAPH_SQLITE`` /
    ``STATEGRAPH_POSTGRES``)."""
    group = parser.add_argument_group("checkpoint database (one of)")
    group.add_argument(
        "--sqlite",
        metavar="FILE",
        default=os.environ.get("STATEGRAPH_SQLITE"),
        help="SQLite file written by SqliteSaver (default: $STATEGRAPH_SQLITE)",
    )
    group.add_argument(
        "--postgres",
        metavar="DSN",
        default=os.environ.get("STATEGRAPH_POSTGRES"),
        help="PostgreSQL connection string for PostgresSaver (default: $STATEGRAPH_POSTGRES)",
    )


def has_saver(args: argparse.Namespace) -> bool:
    """True when the command line names a database."""
    return bool(getattr(args, "sqlite", None) or getattr(args, "postgres", None))


def _check_sqlite_file(path: str) -> None:
    """Refuse, before the saver opens (and migrates) it, a file holding no checkpoints.

    The file is read in read-only mode: a command pointed at the wrong file never adds
    tables to it. A missing file is left to the caller to report.
    """
    if not Path(path).is_file():
        return
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
        try:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise CliError(f"{path} is not a SQLite database ({exc}).", EXIT_NOT_FOUND) from exc
    if "checkpoints" not in tables:
        raise CliError(
            f"{path} holds no checkpoints (no 'checkpoints' table): name the file "
            "your SqliteSaver writes.",
            EXIT_NOT_FOUND,
        )


@contextmanager
def open_saver(args: argparse.Namespace) -> Iterator[Any]:
    """The saver of ``--sqlite`` or ``--postgres``, closed on exit."""
    sqlite, postgres = getattr(args, "sqlite", None), getattr(args, "postgres", None)
    if sqlite and postgres:
        raise CliError("Give either --sqlite or --postgres, not both.", EXIT_USAGE)
    if sqlite:
        _check_sqlite_file(sqlite)
        if not Path(sqlite).is_file():
            raise CliError(
                f"No such SQLite file: {sqlite} (the saver creates it on the first run).",
                EXIT_NOT_FOUND,
            )
        from stategraph.checkpoint.langgraph_import._guard import LangGraphDatabaseError
        from stategraph.checkpoint.sqlite import SqliteSaver

        with SqliteSaver.from_conn_string(sqlite) as saver:
            try:
                saver.setup()
            except LangGraphDatabaseError as exc:
                raise CliError(str(exc), EXIT_USAGE) from exc
            yield saver
        return
    if postgres:
        try:
            from stategraph.checkpoint.postgres import PostgresSaver
        except ImportError as exc:
            raise CliError(
                f"PostgreSQL needs psycopg: pip install 'stategraph[postgres]' ({exc}).",
                EXIT_MISSING_DEPENDENCY,
            ) from exc
        with ExitStack() as stack:
            try:
                pg_saver = stack.enter_context(PostgresSaver.from_conn_string(postgres))
            except ImportError as exc:
                raise CliError(
                    f"PostgreSQL needs psycopg: pip install 'stategraph[postgres]' ({exc}).",
                    EXIT_MISSING_DEPENDENCY,
                ) from exc
            except Exception as exc:
                raise CliError(
                    f"Cannot connect to PostgreSQL: {type(exc).__name__}: {exc}", EXIT_NOT_FOUND
                ) from exc
            yield pg_saver
        return
    raise CliError(
        "Name the checkpoint database: --sqlite FILE or --postgres DSN "
        "(or set STATEGRAPH_SQLITE / STATEGRAPH_POSTGRES).",
        EXIT_USAGE,
    )
