"""``stategraph import-langgraph``: copy LangGraph's saved threads into a stategraph database.

``stategraph import-langgraph SOURCE --sqlite NEW.sqlite`` (or ``--postgres DSN``)
reads SOURCE — a LangGraph SQLite checkpoint file, or a PostgreSQL connection string
of a database written by LangGraph's ``PostgresSaver`` — read-only, and writes its
threads with :func:`stategraph.checkpoint.langgraph_import.import_langgraph`.

All or nothing: the source is read, loaded and checked whole before the target is
opened. A new ``--sqlite`` file is written under a temporary name in the same folder
and renamed when complete (a failure, even a crash, leaves no file); an existing one
gets the threads this import wrote deleted again on failure; ``--postgres`` writes in
one transaction. Errors are one line naming the source thread, checkpoint and channel,
with the exit codes of :mod:`stategraph.cli._errors`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stategraph.cli._errors import (
    EXIT_BAD_DATA,
    EXIT_GRAPH_ERROR,
    EXIT_NOT_FOUND,
    EXIT_NOT_IMPORTED,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
)

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run"]

HELP = "copy the threads of a LangGraph checkpoint database into a stategraph one"

DESCRIPTION = (
    "Copy LangGraph's threads (checkpoints, parents, metadata, pending writes and "
    "interrupts; LangChain messages become stategraph messages) into a stategraph "
    "database. The source is opened read-only; the import is all or nothing."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``stategraph import-langgraph``."""
    parser.add_argument(
        "source", help="LangGraph SQLite file, or PostgreSQL connection string (postgresql://...)"
    )
    target = parser.add_argument_group("stategraph database to write (one of)")
    target.add_argument("--sqlite", metavar="FILE", help="SQLite file (created if missing)")
    target.add_argument("--postgres", metavar="DSN", help="PostgreSQL connection string")
    parser.add_argument(
        "--thread", action="append", default=[], metavar="ID", help="only this thread (repeatable)"
    )
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="MODULE:CLASS",
        help="an application class stored in the state, rebuilt on import (repeatable)",
    )
    parser.add_argument(
        "--graph",
        metavar="MODULE:GRAPH",
        help="the application's compiled graph: re-keys the pending writes of finished "
        "tasks so resuming does not run them again",
    )
    parser.add_argument(
        "--strict", action="store_true", help="fail on a class not allowed instead of plain data"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _allowed(specs: list[str]) -> list[type]:
    out: list[type] = []
    for spec in specs:
        module, _, name = spec.partition(":")
        if not module or not name:
            raise CliError(f"--allow needs MODULE:CLASS, got {spec!r}.", EXIT_USAGE)
        try:
            obj: Any = importlib.import_module(module)
            for part in name.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise CliError(f"--allow {spec}: {exc}", EXIT_USAGE) from exc
        if not isinstance(obj, type):
            raise CliError(f"--allow {spec} is not a class.", EXIT_USAGE)
        out.append(obj)
    return out


def _is_postgres_source(source: str) -> bool:
    from stategraph.checkpoint.langgraph_import._read import is_postgres

    return is_postgres(source)


def _check_sqlite_target(target: Path, source: str) -> None:
    """Refuse, before reading anything, a target that is not a new file, an empty
    SQLite file or a stategraph checkpoint file."""
    if not _is_postgres_source(source) and target.resolve() == Path(source).resolve():
        raise CliError("The target must be another file than the LangGraph source.")
    if not target.exists():
        if not target.parent.is_dir():
            raise CliError(f"No such folder for the target: {target.parent}", EXIT_NOT_FOUND)
        return
    if not target.is_file():
        raise CliError(f"The target {target} is not a file.")
    from stategraph.checkpoint.langgraph_import._guard import is_langgraph_sqlite

    try:
        conn = sqlite3.connect(f"{target.resolve().as_uri()}?mode=ro", uri=True)
        try:
            tables = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            langgraph = is_langgraph_sqlite(conn)
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise CliError(f"The target {target} is not a SQLite database ({exc}).") from exc
    if langgraph:
        raise CliError(
            f"The target {target} holds LangGraph checkpoint tables: write into a new file "
            "or a stategraph one."
        )
    if tables and not {"checkpoints", "schema_migrations"} <= tables:
        raise CliError(
            f"The target {target} holds other tables ({', '.join(sorted(tables)[:5])}), not "
            "a stategraph checkpoint database: give a new file or one SqliteSaver writes."
        )


def _remove_sqlite(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _into_new_sqlite(target: Path, write: Callable[[Any], Any]) -> Any:
    """Write into a temporary file beside ``target``, renamed to it once complete."""
    from stategraph.checkpoint.sqlite import SqliteSaver

    try:
        fd, name = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".importing", dir=target.parent
        )
    except OSError as exc:
        raise CliError(f"Cannot create {target}: {exc}", EXIT_NOT_IMPORTED) from exc
    os.close(fd)
    temp = Path(name)
    try:
        with SqliteSaver.from_conn_string(str(temp)) as saver:
            report = write(saver)
            saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try:
            os.link(temp, target)  # fails if the target appeared meanwhile
        except FileExistsError:
            raise CliError(
                f"The target {target} was created by someone else during the import: "
                "nothing was imported."
            ) from None
        except OSError:  # a file system without hard links
            if target.exists():
                raise CliError(
                    f"The target {target} was created by someone else during the import: "
                    "nothing was imported."
                ) from None
            os.replace(temp, target)
        return report
    finally:
        _remove_sqlite(temp)


def _into_sqlite(target: Path, found: Any, plans: Any) -> Any:
    from stategraph.checkpoint.langgraph_import._write import write_threads
    from stategraph.checkpoint.sqlite import SqliteSaver

    if not target.exists():
        return _into_new_sqlite(
            target, lambda saver: write_threads(saver, found, plans, undo=False)
        )
    with SqliteSaver.from_conn_string(str(target)) as saver:
        return write_threads(saver, found, plans, undo=True)


def _connect_postgres(dsn: str) -> Any:
    from stategraph.cli._pg_checkpoints import connect_postgres

    conn = connect_postgres(dsn, "the target PostgreSQL")
    from stategraph.checkpoint.langgraph_import._guard import (
        langgraph_postgres_statement,
        postgres_error,
    )

    if postgres_error("", conn.execute(langgraph_postgres_statement()).fetchone()) is not None:
        conn.close()
        raise CliError(
            "The target PostgreSQL schema holds LangGraph checkpoint tables: write into "
            "another database or schema (put it first on the search_path)."
        )
    return conn


def _into_postgres(conn: Any, found: Any, plans: Any) -> Any:
    """Write in one transaction: a failure (or a crash) rolls everything back."""
    from stategraph.checkpoint.langgraph_import._write import write_threads
    from stategraph.checkpoint.postgres import PostgresSaver

    with conn, conn.transaction():
        return write_threads(PostgresSaver(conn), found, plans, undo=False)


def _one_line(exc: Exception) -> CliError:
    """The command's error (and exit code) for a failed import."""
    from stategraph.checkpoint.langgraph_import import (
        LangGraphImportError,
        LangGraphNotFound,
        LangGraphSourceError,
        LangGraphTargetError,
        LangGraphValueError,
    )
    from stategraph.checkpoint.langgraph_import._guard import LangGraphDatabaseError

    message = " ".join(str(exc).split())  # one line
    if isinstance(exc, (FileNotFoundError, LangGraphNotFound)):
        return CliError(message, EXIT_NOT_FOUND)
    if isinstance(exc, (LangGraphSourceError, LangGraphDatabaseError)):
        return CliError(message, EXIT_USAGE)
    if isinstance(exc, LangGraphValueError):
        return CliError(f"{message} Nothing was imported.", EXIT_BAD_DATA)
    if isinstance(exc, LangGraphTargetError):
        return CliError(message, EXIT_NOT_IMPORTED)
    if isinstance(exc, LangGraphImportError):
        return CliError(f"{message} Nothing was imported.", EXIT_GRAPH_ERROR)
    return CliError(f"{type(exc).__name__}: {message}", EXIT_GRAPH_ERROR)


def run(args: argparse.Namespace) -> int:
    """Import and print what was copied."""
    from stategraph.checkpoint.langgraph_import import LangGraphImportError
    from stategraph.checkpoint.langgraph_import._decode import LangGraphDecoder
    from stategraph.checkpoint.langgraph_import._guard import LangGraphDatabaseError
    from stategraph.checkpoint.langgraph_import._plan import plans, survey
    from stategraph.checkpoint.langgraph_import._read import open_source

    if bool(args.sqlite) == bool(args.postgres):
        raise CliError("Name the stategraph database to write: --sqlite FILE or --postgres DSN.")
    allowed = _allowed(args.allow)
    target = Path(args.sqlite) if args.sqlite else None
    if target is not None:
        _check_sqlite_target(target, args.source)
    conn = _connect_postgres(args.postgres) if args.postgres else None
    try:
        graph = None
        if args.graph:
            from stategraph.cli._loading import load_graph

            graph = load_graph(args.graph)
        decoder = LangGraphDecoder(allowed, strict=args.strict)
        wanted = list(dict.fromkeys(args.thread)) or None
        try:
            # the whole source is checked before the target is touched, then read again
            # (same snapshot) a batch of threads at a time as it is written
            with open_source(args.source, decoder, wanted) as source:
                found = survey(source, graph)
                todo = plans(source, found, graph)
                report = (
                    _into_sqlite(target, found, todo)
                    if target is not None
                    else _into_postgres(conn, found, todo)
                )
        except (FileNotFoundError, LangGraphImportError, LangGraphDatabaseError) as exc:
            raise _one_line(exc) from exc
    finally:
        if conn is not None:
            conn.close()
    if args.json:
        print(
            json.dumps(
                {
                    "threads": report.threads,
                    "checkpoints": report.checkpoints,
                    "writes": report.writes,
                    "skipped": report.skipped,
                }
            )
        )
    else:
        print(
            f"Imported {len(report.threads)} thread(s), {report.checkpoints} checkpoint(s), "
            f"{report.writes} pending write(s): {', '.join(report.threads) or '-'}"
            + (
                f"; skipped {len(report.skipped)} already imported: {', '.join(report.skipped)}"
                if report.skipped
                else ""
            )
        )
    return EXIT_OK
