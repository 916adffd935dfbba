"""Bringing LangGraph's saved threads into a stategraph saver.

:func:`import_langgraph` reads a LangGraph checkpoint database (a SQLite file written
by ``langgraph-checkpoint-sqlite``, or a PostgreSQL database written by
``langgraph-checkpoint-postgres``; msgpack and old JSON values), loads every value with
an allow-list decoder (LangChain messages become stategraph messages; LangGraph's
``Interrupt``/``Send``/``Command`` become stategraph's; the application's classes are
rebuilt when passed in ``allowed_types``; nothing is imported by name, pickle is
refused) and writes the threads into any stategraph saver, keeping thread ids,
checkpoint ids and parents, namespaces (subgraphs), metadata, pending writes and
pending interrupts. A ported application then resumes its old threads.

The source is opened read-only and never modified. An import is all or nothing:
everything is read (in one snapshot), loaded and checked before the first write, and
if writing fails part-way the threads written are deleted again (see
:func:`import_langgraph`). Every error is a :class:`LangGraphImportError` naming the
source thread, checkpoint and channel. The console command
``stategraph import-langgraph SOURCE --sqlite FILE`` does the same from a shell.

Example::

    from stategraph.checkpoint.langgraph_import import import_langgraph
    from stategraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string("stategraph.sqlite") as saver:
        report = import_langgraph("langgraph.sqlite", saver)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from stategraph.checkpoint.langgraph_import._errors import (
    LangGraphImportError,
    LangGraphNotFound,
    LangGraphSourceError,
    LangGraphTargetError,
    LangGraphValueError,
)
from stategraph.checkpoint.langgraph_import._report import ImportReport

__all__ = [
    "import_langgraph",
    "check_langgraph",
    "ImportReport",
    "LangGraphDatabaseError",
    "LangGraphImportError",
    "LangGraphSourceError",
    "LangGraphNotFound",
    "LangGraphValueError",
    "LangGraphTargetError",
]


def __getattr__(name: str) -> Any:
    if name == "LangGraphDatabaseError":
        from stategraph.checkpoint.langgraph_import._guard import LangGraphDatabaseError

        return LangGraphDatabaseError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _open(
    source: str | Path,
    threads: Sequence[str] | None,
    allowed_types: Iterable[type],
    strict: bool,
) -> Any:
    from stategraph.checkpoint.langgraph_import._decode import LangGraphDecoder
    from stategraph.checkpoint.langgraph_import._read import open_source

    decoder = LangGraphDecoder(allowed_types, strict=strict)
    wanted = list(dict.fromkeys(str(t) for t in threads)) if threads else None
    return open_source(source, decoder, wanted)


def check_langgraph(
    source: str | Path,
    *,
    threads: Sequence[str] | None = None,
    allowed_types: Iterable[type] = (),
    strict: bool = False,
    graph: Any = None,
) -> ImportReport:
    """A dry run of :func:`import_langgraph`: read, load and check the whole source and
    report what an import would write (``threads``, ``checkpoints``, ``writes``),
    writing nothing. Raises every error the import can meet in the source; arguments
    as for :func:`import_langgraph`."""
    from stategraph.checkpoint.langgraph_import._plan import survey

    with _open(source, threads, allowed_types, strict) as opened:
        found = survey(opened, graph)
    return ImportReport(
        threads=list(found.heads), checkpoints=found.checkpoints, writes=found.writes
    )


def import_langgraph(
    source: str | Path,
    saver: Any,
    *,
    threads: Sequence[str] | None = None,
    allowed_types: Iterable[type] = (),
    strict: bool = False,
    graph: Any = None,
) -> ImportReport:
    """Copy LangGraph's threads from ``source`` into the stategraph ``saver``.

    Args:
        source: a LangGraph SQLite file path, or a PostgreSQL connection string
            (``postgresql://...``; the schema of its ``search_path``).
        saver: any stategraph checkpoint saver (its sync ``list``/``get_tuple``/
            ``put``/``put_writes``/``delete_thread``).
        threads: only these thread ids (default: every thread); one that is not in
            the source raises :class:`LangGraphNotFound`.
        allowed_types: the application's classes stored in the state (dataclasses,
            pydantic models, enums...), to rebuild; others load as plain data.
        strict: raise instead of loading a class that is not allowed as plain data.
        graph: the application's compiled stategraph graph. With it, the pending writes
            of tasks that finished before a pause, the ids of pending interrupts and the
            namespaces of subgraph checkpoints are re-keyed with the task ids stategraph
            computes: resuming does not run finished tasks again, and a thread paused
            inside a subgraph resumes there. Without it, top-level pauses resume with
            the same result (finished tasks run once more), but a thread paused inside
            a subgraph pauses again.

    All or nothing: the source is read in one snapshot, and every value loaded and
    checked before the first write (a source over 32 MiB of stored values is then read
    again, a batch of threads at a time, to write it: memory holds one batch, not the
    whole source). A thread whose last
    checkpoint is already in ``saver`` (imported before) is skipped
    (``report.skipped``); one that is there without it is refused before anything is
    written. If writing fails part-way, the threads this import wrote are deleted again
    and :class:`LangGraphTargetError` says so. (To survive a crash of the process too,
    write inside a database transaction, as ``stategraph import-langgraph --postgres``
    does, or into a new file, as ``--sqlite`` does.)

    Raises :class:`LangGraphImportError`, naming the source thread, namespace,
    checkpoint and channel concerned: :class:`LangGraphSourceError` (not a LangGraph
    database, a table or column missing), :class:`LangGraphNotFound`,
    :class:`LangGraphValueError` (a value that cannot be loaded safely, also a
    ``DeserializationError``) or :class:`LangGraphTargetError`; ``FileNotFoundError``
    for a missing SQLite file.
    """
    from stategraph.checkpoint.langgraph_import._plan import plans, survey
    from stategraph.checkpoint.langgraph_import._write import write_threads

    with _open(source, threads, allowed_types, strict) as opened:
        found = survey(opened, graph)
        return write_threads(saver, found, plans(opened, found, graph))
