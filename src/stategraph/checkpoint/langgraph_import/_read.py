"""Reading LangGraph's checkpoint tables (SQLite file or PostgreSQL schema), read-only.

:func:`open_source` opens the source in one read-only transaction, so every read sees
one snapshot of a database a LangGraph application may still be writing, and checks
its tables are LangGraph's. The open :class:`LangGraphSource` lists the threads, then
gives their checkpoints a batch of threads at a time (:meth:`LangGraphSource.batches`),
so an import need not hold the whole source in memory, and can read it twice (once to
check everything, once to write) from the same snapshot.

Threads come in ``thread_id`` order; within a thread, namespaces in order and parents
before children (checkpoint ids are time-ordered). Every failure is a
:class:`~._errors.LangGraphImportError` naming the thread, namespace, checkpoint and
channel concerned (a missing SQLite file stays a ``FileNotFoundError``).
"""

from __future__ import annotations

import json
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from stategraph.checkpoint.langgraph_import import _rows as rows
from stategraph.checkpoint.langgraph_import._decode import LangGraphDecoder
from stategraph.checkpoint.langgraph_import._errors import (
    LangGraphNotFound,
    LangGraphSourceError,
    LangGraphValueError,
    Where,
)
from stategraph.checkpoint.langgraph_import._rows import LgCheckpoint, LgWrite

__all__ = [
    "LgCheckpoint",
    "LgWrite",
    "LangGraphSource",
    "open_source",
    "is_postgres",
    "BATCH_THREADS",
]

BATCH_THREADS = 64
"""Threads read (and held in memory) at a time."""


def is_postgres(source: str | Path) -> bool:
    """Whether ``source`` names a PostgreSQL database rather than a SQLite file."""
    text = str(source)
    return text.startswith(("postgresql://", "postgres://")) or (
        "=" in text and not Path(text).exists()
    )


class LangGraphSource(ABC):
    """An open LangGraph checkpoint database, read in one snapshot."""

    def __init__(self, decoder: LangGraphDecoder, threads: Sequence[str] | None) -> None:
        self.decoder = decoder
        self.wanted = list(threads) if threads else None
        self._ids: list[str] | None = None

    @abstractmethod
    def _thread_rows(self) -> list[Any]:
        """The distinct thread ids of the checkpoints (as stored), in order."""

    @abstractmethod
    def _batch(self, thread_ids: list[str]) -> tuple[list[LgCheckpoint], int]:
        """The checkpoints of these threads, loaded, in thread order; and the bytes of
        stored payload they were loaded from."""

    def thread_ids(self) -> list[str]:
        """The ids of the threads to read (checked; in order)."""
        if self._ids is None:
            found = [rows.text(t, "thread id", Where(repr(t))) for t in self._thread_rows()]
            if self.wanted:
                present = set(found)
                missing = [t for t in self.wanted if t not in present]
                if missing:
                    raise LangGraphNotFound(
                        f"The source has no thread {', '.join(repr(t) for t in missing)}: "
                        "nothing was imported."
                    )
            self._ids = found
        return self._ids

    def batches(self) -> Iterator[tuple[list[list[LgCheckpoint]], int]]:
        """Each batch of :data:`BATCH_THREADS` threads: their checkpoints (a list per
        thread) and the bytes of stored payload they were loaded from."""
        ids = self.thread_ids()
        for start in range(0, len(ids), BATCH_THREADS):
            batch, size = self._batch(ids[start : start + BATCH_THREADS])
            by_thread: dict[str, list[LgCheckpoint]] = {}
            for record in batch:
                by_thread.setdefault(record.thread_id, []).append(record)
            yield list(by_thread.values()), size


def _marks(n: int, mark: str) -> str:
    return ", ".join([mark] * n)


def _size(*values: Any) -> int:
    """Bytes of the stored payloads among ``values``."""
    return sum(len(v) for v in values if isinstance(v, (bytes, bytearray, memoryview, str)))


# -- SQLite ---------------------------------------------------------------------------

_SQLITE_COLUMNS = {
    "checkpoints": (
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "parent_checkpoint_id",
        "type",
        "checkpoint",
        "metadata",
    ),
    "writes": (
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "task_id",
        "idx",
        "channel",
        "type",
        "value",
    ),
}


def _check_sqlite_tables(conn: sqlite3.Connection, file: Path) -> bool:
    """Refuse a file without LangGraph's tables; True when ``writes`` has ``task_path``."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    columns = {t: {row[1] for row in conn.execute(f"PRAGMA table_info({t})")} for t in tables}
    if "schema_migrations" in tables and "metadata_type" in columns.get("checkpoints", ()):
        raise LangGraphSourceError(
            f"{file} is a stategraph checkpoint database, not a LangGraph one: there is "
            "nothing to import (open it with SqliteSaver)."
        )
    for table, needed in _SQLITE_COLUMNS.items():
        if table not in tables:
            found = ", ".join(sorted(tables)) or "none"
            raise LangGraphSourceError(
                f"{file} is not a LangGraph checkpoint database: it has no '{table}' table "
                f"(LangGraph's SqliteSaver writes 'checkpoints' and 'writes'; tables "
                f"found: {found})."
            )
        missing = [c for c in needed if c not in columns[table]]
        if missing:
            raise LangGraphSourceError(
                f"{file} is not a LangGraph checkpoint database: its '{table}' table has "
                f"no {', '.join(repr(c) for c in missing)} column."
            )
    return "task_path" in columns["writes"]


class SqliteSource(LangGraphSource):
    """A LangGraph SQLite file, opened read-only, in one read transaction."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        file: Path,
        decoder: LangGraphDecoder,
        threads: Sequence[str] | None,
    ) -> None:
        super().__init__(decoder, threads)
        self.conn = conn
        self.file = file
        self.path_col = "task_path" if _check_sqlite_tables(conn, file) else "NULL"

    def _query(self, sql: str, params: Sequence[Any]) -> list[Any]:
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise LangGraphSourceError(
                f"Cannot read {self.file} as a SQLite database: {exc}."
            ) from exc

    def _thread_rows(self) -> list[Any]:
        where = f" WHERE thread_id IN ({_marks(len(self.wanted), '?')})" if self.wanted else ""
        found = self._query(
            f"SELECT DISTINCT thread_id FROM checkpoints{where} ORDER BY thread_id",
            self.wanted or [],
        )
        return [row[0] for row in found]

    def _batch(self, thread_ids: list[str]) -> tuple[list[LgCheckpoint], int]:
        marks = _marks(len(thread_ids), "?")
        checkpoints = self._query(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
            f"checkpoint, metadata FROM checkpoints WHERE thread_id IN ({marks}) "
            "ORDER BY thread_id, checkpoint_ns, checkpoint_id",
            thread_ids,
        )
        write_rows = self._query(
            f"SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, {self.path_col}, idx, "
            f"channel, type, value FROM writes WHERE thread_id IN ({marks}) "
            "ORDER BY task_id, idx",
            thread_ids,
        )
        decoder = self.decoder
        size = sum(_size(r[5], r[6]) for r in checkpoints) + sum(_size(r[8]) for r in write_rows)
        writes: dict[tuple[Any, Any, Any], list[LgWrite]] = {}
        for t, ns, cid, *rest in write_rows:
            writes.setdefault((t, ns, cid), []).append(
                rows.write(decoder, rest, rows.ids(t, ns, cid))
            )
        out = []
        for t, ns, cid, parent, ctype, blob, meta in checkpoints:
            at = rows.ids(t, ns, cid)
            out.append(
                LgCheckpoint(
                    t,
                    ns,
                    cid,
                    rows.text(parent, "parent checkpoint id", at, optional=True),
                    rows.body(decoder, ctype, blob, at),
                    rows.metadata(decoder, meta, at),
                    writes.get((t, ns, cid), []),
                )
            )
        return out, size


@contextmanager
def _open_sqlite(
    path: str | Path, decoder: LangGraphDecoder, threads: Sequence[str] | None
) -> Iterator[LangGraphSource]:
    file = Path(path)
    if not file.exists():
        raise FileNotFoundError(f"No such LangGraph SQLite file: {file}")
    if not file.is_file():
        raise LangGraphSourceError(f"{file} is not a file (give LangGraph's SQLite file).")
    try:
        conn = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise LangGraphSourceError(f"Cannot open {file} as SQLite: {exc}.") from exc
    try:
        try:
            conn.execute("BEGIN")  # one snapshot for every read, until closed
            source = SqliteSource(conn, file, decoder, threads)
        except sqlite3.DatabaseError as exc:
            raise LangGraphSourceError(f"Cannot read {file} as a SQLite database: {exc}.") from exc
        yield source
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()


# -- PostgreSQL -----------------------------------------------------------------------

_PG_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")


def _check_pg_tables(conn: Any) -> None:
    found = conn.execute(
        "SELECT " + ", ".join(f"to_regclass('{t}') IS NOT NULL" for t in _PG_TABLES) + ", "
        "to_regclass('sg_checkpoints') IS NOT NULL, current_schema()"
    ).fetchone()
    present = dict(zip(_PG_TABLES, found[: len(_PG_TABLES)], strict=True))
    schema = found[-1]
    if not any(present.values()):
        hint = (
            " (it holds stategraph's tables: there is nothing to import)"
            if found[len(_PG_TABLES)]
            else ""
        )
        raise LangGraphSourceError(
            f"Schema {schema!r} of this PostgreSQL database holds no LangGraph checkpoint "
            f"tables{hint}. Give the database (and search_path) LangGraph's PostgresSaver "
            "writes."
        )
    missing = [t for t, ok in present.items() if not ok]
    if missing:
        raise LangGraphSourceError(
            f"Schema {schema!r} of this PostgreSQL database misses LangGraph's "
            f"{', '.join(repr(t) for t in missing)} table(s): it is not a complete "
            "LangGraph checkpoint database."
        )


class PostgresSource(LangGraphSource):
    """LangGraph's PostgreSQL tables, in one read-only repeatable-read transaction."""

    def __init__(self, conn: Any, decoder: LangGraphDecoder, threads: Sequence[str] | None) -> None:
        super().__init__(decoder, threads)
        self.conn = conn

    def _query(self, sql: str, params: Sequence[Any]) -> list[Any]:
        import psycopg

        try:
            return list(self.conn.execute(sql, params).fetchall())
        except psycopg.Error as exc:
            raise LangGraphSourceError(
                f"Cannot read LangGraph's tables from the PostgreSQL source: "
                f"{type(exc).__name__}: {exc}".strip()
            ) from exc

    def _thread_rows(self) -> list[Any]:
        where = " WHERE thread_id = ANY(%s)" if self.wanted else ""
        found = self._query(
            f"SELECT DISTINCT thread_id FROM checkpoints{where} ORDER BY thread_id",
            [self.wanted] if self.wanted else [],
        )
        return [row[0] for row in found]

    def _batch(self, thread_ids: list[str]) -> tuple[list[LgCheckpoint], int]:
        checkpoints = self._query(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
            "checkpoint, metadata FROM checkpoints WHERE thread_id = ANY(%s) "
            "ORDER BY thread_id, checkpoint_ns, checkpoint_id",
            [thread_ids],
        )
        size = 0
        blobs: dict[tuple[str, str, str, str], Any] = {}
        for t, ns, channel, version, vtype, blob in self._query(
            "SELECT thread_id, checkpoint_ns, channel, version, type, blob "
            "FROM checkpoint_blobs WHERE thread_id = ANY(%s)",
            [thread_ids],
        ):
            blobs[(t, ns, channel, str(version))] = (vtype, blob)
            size += _size(blob)
        decoder = self.decoder
        writes: dict[tuple[str, str, str], list[LgWrite]] = {}
        for t, ns, cid, *rest in self._query(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, "
            "type, blob FROM checkpoint_writes WHERE thread_id = ANY(%s) ORDER BY task_id, idx",
            [thread_ids],
        ):
            size += _size(rest[-1])
            writes.setdefault((t, ns, cid), []).append(
                rows.write(decoder, rest, rows.ids(t, ns, cid))
            )
        out = []
        for t, ns, cid, parent, body, meta in checkpoints:
            at = rows.ids(t, ns, cid)
            checkpoint = rows.load(
                at.at(part="checkpoint body"),
                decoder.loads_json,
                body if isinstance(body, (bytes, str)) else json.dumps(body),
            )
            values = checkpoint.get("channel_values") if isinstance(checkpoint, dict) else None
            versions = checkpoint.get("channel_versions") if isinstance(checkpoint, dict) else None
            if not isinstance(values or {}, dict) or not isinstance(versions or {}, dict):
                raise LangGraphValueError(
                    f"The body, channel values or versions of {at} are not mappings.", at
                )
            assert isinstance(checkpoint, dict)
            loaded = dict(values or {})
            for channel, version in (versions or {}).items():
                stored = blobs.get((t, ns, channel, str(version)))
                if stored is not None and stored[0] != "empty":
                    loaded[channel] = rows.load(
                        at.at(channel=str(channel)), decoder.loads_typed, stored
                    )
            checkpoint["channel_values"] = loaded
            out.append(
                LgCheckpoint(
                    t,
                    ns,
                    cid,
                    rows.text(parent, "parent checkpoint id", at, optional=True),
                    checkpoint,
                    rows.metadata(decoder, meta, at),
                    writes.get((t, ns, cid), []),
                )
            )
        return out, size


@contextmanager
def _open_postgres(
    conninfo: str, decoder: LangGraphDecoder, threads: Sequence[str] | None
) -> Iterator[LangGraphSource]:
    import psycopg
    from psycopg.rows import tuple_row

    try:
        conn = psycopg.connect(conninfo, row_factory=tuple_row)
    except psycopg.ProgrammingError as exc:
        raise LangGraphSourceError(
            f"The PostgreSQL source is not a valid connection string: {exc}"
        ) from exc
    except psycopg.Error as exc:
        raise LangGraphNotFound(
            f"Cannot connect to the PostgreSQL source: {type(exc).__name__}: {exc}".strip()
        ) from exc
    try:
        conn.read_only = True
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ  # one snapshot
        try:
            _check_pg_tables(conn)
        except psycopg.Error as exc:
            raise LangGraphSourceError(
                f"Cannot read the PostgreSQL source: {type(exc).__name__}: {exc}".strip()
            ) from exc
        yield PostgresSource(conn, decoder, threads)
    finally:
        conn.close()  # the read-only transaction ends with it


@contextmanager
def open_source(
    source: str | Path, decoder: LangGraphDecoder, threads: Sequence[str] | None = None
) -> Iterator[LangGraphSource]:
    """The LangGraph database ``source`` (a SQLite path or a PostgreSQL connection
    string), open read-only in one snapshot until the block ends; only ``threads``
    when given (each must be there)."""
    opened = (
        _open_postgres(str(source), decoder, threads)
        if is_postgres(source)
        else _open_sqlite(source, decoder, threads)
    )
    with opened as reader:
        yield reader
