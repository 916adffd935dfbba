"""Opening the checkpoint database named on the command line.

Inspection (``threads``, ``history``, ``show``) never writes to the database it reads:
a SQLite file is opened in read-only mode and a PostgreSQL session with
``default_transaction_read_only=on``, after checking that the database holds
stategraph's checkpoint tables in the current schema version (nothing is created,
migrated or converted). A file or database that does not (missing, empty, foreign,
LangGraph's) is refused with one line and the exit codes of :mod:`.errors`.
``resume`` opens the database for writing, but also only one that already holds
stategraph's checkpoints.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from stategraph.cli._errors import (
    EXIT_BAD_DATA,
    EXIT_NOT_FOUND,
    EXIT_USAGE,
    CliError,
)

__all__ = ["add_saver_arguments", "open_saver", "open_checkpoint_saver", "has_saver"]


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


def _check_sqlite_file(path: str, *, writable: bool) -> None:
    """Refuse, before the saver opens it, a file that is not a current stategraph
    checkpoint database. The file is read in read-only mode: a command pointed at the
    wrong file never adds tables to it."""
    from stategraph.checkpoint.langgraph_import._guard import is_langgraph_sqlite
    from stategraph.checkpoint.sqlite._schema import MIGRATIONS

    file = Path(path)
    if not file.exists():
        raise CliError(
            f"No such SQLite file: {path} (the saver creates it on the first run).",
            EXIT_NOT_FOUND,
        )
    if not file.is_file():
        raise CliError(f"{path} is not a file: name the SQLite file your SqliteSaver writes.")
    try:
        conn = sqlite3.connect(file.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            tables = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            langgraph = is_langgraph_sqlite(conn)
            version = (
                conn.execute("SELECT COALESCE(MAX(v), -1) FROM schema_migrations").fetchone()[0]
                if "schema_migrations" in tables
                else -1
            )
            journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise CliError(f"{path} is not a SQLite database ({exc}).", EXIT_NOT_FOUND) from exc
    if langgraph:
        raise CliError(
            f"{path} holds LangGraph checkpoint tables, not stategraph's: copy its threads "
            f"with `stategraph import-langgraph {path} --sqlite NEW.sqlite`, then inspect "
            "the copy.",
            EXIT_USAGE,
        )
    if "checkpoints" not in tables or "schema_migrations" not in tables:
        raise CliError(
            f"{path} holds no checkpoints (no 'checkpoints' table written by "
            "SqliteSaver): name the file your SqliteSaver writes.",
            EXIT_NOT_FOUND,
        )
    latest = len(MIGRATIONS) - 1
    if int(version) > latest:
        raise CliError(
            f"{path} was written by a newer stategraph (schema version {version}; this one "
            f"reads {latest}): upgrade stategraph.",
            EXIT_USAGE,
        )
    if writable:
        return
    if int(version) < latest:
        raise CliError(
            f"{path} was written by an older stategraph (schema version {version}, this one "
            f"uses {latest}); it would have to be migrated, which a read-only command never "
            "does. Open it once from your application (or with `stategraph resume`) to "
            "migrate it.",
            EXIT_USAGE,
        )
    if str(journal).lower() != "wal":
        raise CliError(
            f"{path} is in journal mode {journal!r}, not the 'wal' mode SqliteSaver sets; "
            "reading it read-only needs WAL: open it once from your application (or run "
            f"`sqlite3 {path} 'PRAGMA journal_mode=WAL'`).",
            EXIT_USAGE,
        )


def _open_sqlite(path: str, stack: ExitStack, *, writable: bool) -> Any:
    from stategraph.checkpoint.sqlite import SqliteSaver

    _check_sqlite_file(path, writable=writable)
    if writable:
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    else:  # the file itself refuses writes
        conn = sqlite3.connect(
            Path(path).resolve().as_uri() + "?mode=ro",
            uri=True,
            check_same_thread=False,
            isolation_level=None,
        )
    stack.callback(conn.close)
    saver = SqliteSaver(conn)
    try:
        saver.setup()  # current schema, WAL: reads only when read-only
    except (sqlite3.Error, RuntimeError) as exc:
        raise CliError(f"Cannot open {path}: {type(exc).__name__}: {exc}", EXIT_USAGE) from exc
    return saver


def open_checkpoint_saver(
    stack: ExitStack, *, sqlite: str | None, postgres: str | None, writable: bool = False
) -> Any:
    """The saver of ``--sqlite`` or ``--postgres`` (closed with ``stack``); read-only
    unless ``writable``. Raises :class:`CliError` for a database without stategraph's
    checkpoints."""
    if sqlite and postgres:
        raise CliError("Give either --sqlite or --postgres, not both.", EXIT_USAGE)
    if sqlite:
        return _open_sqlite(sqlite, stack, writable=writable)
    if postgres:
        from stategraph.cli._pg_checkpoints import open_postgres_saver

        return open_postgres_saver(postgres, stack, writable=writable)
    raise CliError(
        "Name the checkpoint database: --sqlite FILE or --postgres DSN "
        "(or set STATEGRAPH_SQLITE / STATEGRAPH_POSTGRES).",
        EXIT_USAGE,
    )


def _database_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [sqlite3.Error]
    try:
        import psycopg
    except ImportError:
        pass
    else:
        errors.append(psycopg.Error)
    return tuple(errors)


@contextmanager
def open_saver(args: argparse.Namespace, *, writable: bool = False) -> Iterator[Any]:
    """The saver of ``--sqlite`` or ``--postgres``, closed on exit; read-only unless
    ``writable``. A stored value that cannot be read, or a database failing while the
    command runs, becomes a one-line :class:`CliError`."""
    from stategraph.checkpoint.serde.base import DeserializationError

    with ExitStack() as stack:
        saver = open_checkpoint_saver(
            stack,
            sqlite=getattr(args, "sqlite", None),
            postgres=getattr(args, "postgres", None),
            writable=writable,
        )
        try:
            yield saver
        except DeserializationError as exc:
            raise CliError(f"A stored value cannot be read: {exc}", EXIT_BAD_DATA) from exc
        except _database_errors() as exc:
            raise CliError(
                f"The checkpoint database failed: {type(exc).__name__}: {exc}".strip(),
                EXIT_NOT_FOUND,
            ) from exc
