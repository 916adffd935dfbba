"""Errors the command line reports as one line, and its exit codes."""

from __future__ import annotations

__all__ = [
    "CliError",
    "EXIT_OK",
    "EXIT_GRAPH_ERROR",
    "EXIT_USAGE",
    "EXIT_NOT_FOUND",
    "EXIT_INTERRUPTED",
    "EXIT_MISSING_DEPENDENCY",
    "EXIT_BAD_DATA",
    "EXIT_NOT_IMPORTED",
    "missing_extra",
]

EXIT_OK = 0
"""The command did what was asked."""
EXIT_GRAPH_ERROR = 1
"""The user's graph (or code it imports) raised an error."""
EXIT_USAGE = 2
"""Bad arguments: unknown option, a module or attribute that does not exist, bad JSON."""
EXIT_NOT_FOUND = 3
"""The database, thread or checkpoint named does not exist."""
EXIT_INTERRUPTED = 4
"""``resume``: the run paused again on an interrupt (answer it with another resume)."""
EXIT_MISSING_DEPENDENCY = 5
"""An optional dependency is missing (Pillow for PNG, psycopg for PostgreSQL)."""
EXIT_BAD_DATA = 6
"""A stored value cannot be read: malformed, refused by the decoder, or written by a
newer stategraph (``import-langgraph``: a value of the source; nothing was written)."""
EXIT_NOT_IMPORTED = 7
"""``import-langgraph``: the target refused the import (a thread already there with
other checkpoints) or writing failed; nothing was imported."""


class CliError(Exception):
    """A mistake to report without a traceback: ``message`` and the exit ``code``."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def missing_extra(needs: str, extra: str, exc: ImportError) -> CliError:
    """The error for a missing optional dependency: ``needs`` says what needs it
    (``"The server needs its extra"``), ``extra`` names the extra to install."""
    return CliError(f"{needs}: pip install 'stategraph[{extra}]' ({exc}).", EXIT_MISSING_DEPENDENCY)
