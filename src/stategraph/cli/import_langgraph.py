"""``stategraph import-langgraph``: copy LangGraph's saved threads into a stategraph database.

``stategraph import-langgraph SOURCE --sqlite NEW.sqlite`` (or ``--postgres DSN``)
reads SOURCE — a LangGraph SQLite checkpoint file, or a PostgreSQL connection string
of a database written by LangGraph's ``PostgresSaver`` — read-only, and writes its
threads with :func:`stategraph.checkpoint.langgraph_import.import_langgraph`.
"""

from __future__ import annotations

import argparse
import importlib
import json
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from stategraph.cli.errors import (
    EXIT_MISSING_DEPENDENCY,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
)

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    """Register ``import-langgraph``."""
    parser = subparsers.add_parser(
        "import-langgraph",
        help="copy the threads of a LangGraph checkpoint database into a stategraph one",
        description=(
            "Copy LangGraph's threads (checkpoints, parents, metadata, pending writes and "
            "interrupts; LangChain messages become stategraph messages) into a stategraph "
            "database. The source is opened read-only."
        ),
    )
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


def _open_target(args: argparse.Namespace, stack: ExitStack) -> Any:
    if bool(args.sqlite) == bool(args.postgres):
        raise CliError("Name the stategraph database to write: --sqlite FILE or --postgres DSN.")
    if args.sqlite:
        if Path(args.sqlite).resolve() == Path(args.source).resolve():
            raise CliError("The target must be another file than the LangGraph source.")
        from stategraph.checkpoint.sqlite import SqliteSaver

        return stack.enter_context(SqliteSaver.from_conn_string(args.sqlite))
    try:
        from stategraph.checkpoint.postgres import PostgresSaver
    except ImportError as exc:
        raise CliError(
            f"PostgreSQL needs psycopg: pip install 'stategraph[postgres]' ({exc}).",
            EXIT_MISSING_DEPENDENCY,
        ) from exc
    return stack.enter_context(PostgresSaver.from_conn_string(args.postgres))


def run(args: argparse.Namespace) -> int:
    """Import and print what was copied."""
    from stategraph.checkpoint.langgraph_import import import_langgraph
    from stategraph.checkpoint.langgraph_import._guard import LangGraphDatabaseError

    allowed = _allowed(args.allow)
    graph = None
    if args.graph:
        from stategraph.cli.loading import load_graph

        graph = load_graph(args.graph)
    with ExitStack() as stack:
        saver = _open_target(args, stack)
        try:
            report = import_langgraph(
                args.source,
                saver,
                threads=args.thread or None,
                allowed_types=allowed,
                strict=args.strict,
                graph=graph,
            )
        except FileNotFoundError as exc:
            raise CliError(str(exc), EXIT_NOT_FOUND) from exc
        except LangGraphDatabaseError as exc:
            raise CliError(str(exc), EXIT_USAGE) from exc
        except ValueError as exc:
            raise CliError(str(exc), EXIT_USAGE) from exc
    if args.json:
        print(
            json.dumps(
                {
                    "threads": report.threads,
                    "checkpoints": report.checkpoints,
                    "writes": report.writes,
                }
            )
        )
    else:
        print(
            f"Imported {len(report.threads)} thread(s), {report.checkpoints} checkpoint(s), "
            f"{report.writes} pending write(s): {', '.join(report.threads) or '-'}"
        )
    return EXIT_OK
