"""Entry point of the ``stategraph`` console script.

Subcommands are modules of :mod:`stategraph.cli` (``_import_langgraph`` is the command
``import-langgraph``) with ``HELP`` (its line in ``stategraph --help``),
``DESCRIPTION`` (what ``stategraph COMMAND --help`` says it does),
``add_arguments(parser) -> None`` (its arguments) and ``run(args) -> int`` (runs it and
returns the exit code). A module missing from this installation is skipped, so optional
commands plug in by existing.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

from stategraph.cli._errors import EXIT_USAGE, CliError

__all__ = ["main", "build_parser", "COMMANDS"]

COMMANDS = (
    "draw",
    "threads",
    "history",
    "show",
    "resume",
    "import_langgraph",
    "studio",
    "serve",
    "worker",
)
"""Modules of :mod:`stategraph.cli` tried, in this order, as subcommands."""

EPILOG = """\
exit codes:
  0  done
  1  the graph (or code it imports) raised an error
  2  bad arguments, module or attribute not found, bad JSON
  3  database, thread or checkpoint not found
  4  resume: the run paused again on an interrupt
  5  an optional dependency is missing (Pillow for PNG, psycopg for PostgreSQL)
  6  a stored value cannot be read (malformed, refused, or from a newer stategraph)
  7  import-langgraph: the target refused the import or writing failed (nothing imported)
"""


def _load(name: str) -> ModuleType | None:
    full = f"stategraph.cli._{name}"
    try:
        return importlib.import_module(full)
    except ModuleNotFoundError as exc:
        if exc.name == full:
            return None
        raise


def build_parser() -> argparse.ArgumentParser:
    """The parser with every available subcommand registered."""
    from stategraph import __version__

    parser = argparse.ArgumentParser(
        prog="stategraph",
        description="Draw graphs and inspect, resume and manage saved threads.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"stategraph {__version__}")
    parser.add_argument(
        "--traceback", action="store_true", help="on errors, print the full Python traceback"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = _load(name)
        if module is None:
            continue
        command = subparsers.add_parser(
            name.replace("_", "-"), help=module.HELP, description=module.DESCRIPTION
        )
        module.add_arguments(command)
        command.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (see ``stategraph --help``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "_run", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        with warnings.catch_warnings():
            if not args.traceback:
                warnings.simplefilter("ignore")
            code: int = args._run(args)
        return code
    except CliError as exc:
        if args.traceback:
            raise
        message = " ".join(exc.message.split())  # one line, whatever the cause printed
        print(f"stategraph {args.command}: error: {message}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


def console() -> None:
    """The console script: exit with :func:`main`'s code."""
    sys.exit(main())


if __name__ == "__main__":
    console()
