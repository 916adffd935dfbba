"""Reading LangGraph's checkpoint tables (SQLite file or PostgreSQL schema), read-only.

Each reader returns every :class:`LgCheckpoint` asked for, already loaded by the
allow-list decoder: one checkpoint with its channel values, metadata and pending
writes. Everything is read in one read-only transaction (one snapshot of a source a
LangGraph application may still be writing) and loaded *before* the caller writes
anything, so a bad value stops the import before it starts. Threads come in
``thread_id`` order; within a thread, namespaces in order and parents before children
(checkpoint ids are time-ordered).

Every failure is a :class:`~._errors.LangGraphImportError` naming the thread,
namespace, checkpoint and channel concerned (a missing SQLite file stays a
``FileNotFoundError``).
"""

from __future__ import annotations

import json
import sqlite3
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from stategraph.checkpoint.langgraph_import._decode import LangGraphDecoder
from stategraph.checkpoint.langgraph_import._errors import (
    LangGraphImportError,
    LangGraphNotFound,
    LangGraphSourceError,
    LangGraphValueError,
    Where,
)

__all__ = ["LgCheckpoint", "LgWrite", "read_sqlite", "read_postgres", "thread_ids"]

T = TypeVar("T")


@dataclass
class LgWrite:
    """One pending write of a LangGraph checkpoint."""

    task_id: str
    task_path: str
    idx: int
    channel: str
    value: Any


@dataclass
class LgCheckpoint:
    """One LangGraph checkpoint, decoded."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_id: str | None
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]
    writes: list[LgWrite] = field(default_factory=list)

    @property
    def where(self) -> Where:
        """This checkpoint's place in the source, for error messages."""
        return Where(self.thread_id, self.checkpoint_ns, self.checkpoint_id)


# -- checks shared by both readers ----------------------------------------------------


def _text(value: Any, what: str, where: Where, *, optional: bool = False) -> Any:
    """``value`` if it is a string stategraph can store (no NUL character)."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise LangGraphValueError(
            f"The {what} of {where} is {type(value).__name__} {value!r:.60}, not text: "
            "the source is corrupt.",
            where,
        )
    if "\x00" in value:
        raise LangGraphValueError(
            f"The {what} {value!r:.80} ({where}) holds a NUL character, which stategraph's "
            "savers do not store: rename it in the source (or leave the thread out) first.",
            where,
        )
    return value


def _ids(thread: Any, ns: Any, cid: Any) -> Where:
    """The checked ids of one row, as a :class:`Where`."""
    where = Where(thread if isinstance(thread, str) else repr(thread))
    thread = _text(thread, "thread id", where)
    where = Where(thread, ns if isinstance(ns, str) else repr(ns))
    ns = _text(ns, "checkpoint namespace", where)
    where = Where(thread, ns, cid if isinstance(cid, str) else repr(cid))
    cid = _text(cid, "checkpoint id", where)
    return Where(thread, ns, cid)


def _load(where: Where, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)``, any failure raised as :class:`LangGraphValueError` naming ``where``."""
    try:
        return fn(*args)
    except LangGraphImportError:
        raise
    except MemoryError:
        raise
    except Exception as exc:  # the decoder or an allowed class refused the value
        raise LangGraphValueError(
            f"Cannot import {where}: {type(exc).__name__}: {exc}", where
        ) from exc


def _metadata(decoder: LangGraphDecoder, raw: Any, where: Where) -> dict[str, Any]:
    where = where.at(part="metadata")
    if raw is None:
        return {}
    if isinstance(raw, dict):
        value = _load(where, decoder.loads_json, raw)
    else:
        value = _load(where, decoder.loads_json, bytes(raw) if isinstance(raw, memoryview) else raw)
    if not isinstance(value, dict):
        raise LangGraphValueError(
            f"The metadata of {where} must be a JSON object, got {value!r:.60}.", where
        )
    return value


def _write(decoder: LangGraphDecoder, row: Sequence[Any], where: Where) -> LgWrite:
    """One pending write row ``(task_id, task_path, idx, channel, type, value)``."""
    task, tpath, idx, channel, vtype, value = row
    here = where.at(part=f"a pending write of task {task!r:.60}")
    task = _text(task, "task id", here)
    tpath = _text(tpath, "task path", here, optional=True) or ""
    if isinstance(idx, bool) or not isinstance(idx, int):
        raise LangGraphValueError(f"The write index of {here} is {idx!r:.40}, not a number.", here)
    here = where.at(part=f"pending write {idx} of task {task!r}")
    channel = _text(channel, "channel", here)
    here = here.at(channel=channel)
    return LgWrite(task, tpath, idx, channel, _load(here, decoder.loads_typed, (vtype, value)))


def _blame_channel(decoder: LangGraphDecoder, payload: Any) -> str | None:
    """The channel whose value makes a whole msgpack checkpoint body fail to load.

    Only called once loading failed: the body is split with its extensions left as
    they are, and each channel value is loaded alone.
    """
    import ormsgpack

    from stategraph.checkpoint.serde._pyunpack import unpack

    try:
        body = unpack(bytes(payload), lambda code, data: ormsgpack.Ext(code, data))
        values = body.get("channel_values") if isinstance(body, dict) else None
        if not isinstance(values, dict):
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for channel, value in values.items():
                try:
                    packed = ormsgpack.packb(value, option=ormsgpack.OPT_NON_STR_KEYS)
                    decoder.loads_typed(("msgpack", packed))
                except Exception:
                    return str(channel)
    except Exception:
        return None
    return None


def _body(decoder: LangGraphDecoder, ctype: Any, blob: Any, where: Where) -> dict[str, Any]:
    """A SQLite checkpoint body (channel values inside), naming the bad channel if any."""
    try:
        body = _load(where.at(part="checkpoint body"), decoder.loads_typed, (ctype, blob))
    except LangGraphValueError as exc:
        channel = _blame_channel(decoder, blob) if ctype == "msgpack" else None
        if channel is None:
            raise
        here = where.at(channel=channel)
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        raise LangGraphValueError(
            f"Cannot import {here}: {type(cause).__name__}: {cause}", here
        ) from cause
    if not isinstance(body, dict):
        raise LangGraphValueError(
            f"The body of {where} is {type(body).__name__}, not a mapping.", where
        )
    return body


def _where_threads(threads: Sequence[str] | None, column: str, mark: str) -> tuple[str, list[Any]]:
    if not threads:
        return "", []
    return f" WHERE {column} IN ({', '.join([mark] * len(threads))})", [str(t) for t in threads]


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


def read_sqlite(
    path: str | Path, decoder: LangGraphDecoder, threads: Sequence[str] | None = None
) -> list[LgCheckpoint]:
    """Read a LangGraph SQLite checkpoint file (opened read-only: never modified)."""
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
            conn.execute("BEGIN")  # one snapshot for every statement below
            has_path = _check_sqlite_tables(conn, file)
            where, params = _where_threads(threads, "thread_id", "?")
            rows = conn.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
                f"checkpoint, metadata FROM checkpoints{where} "
                "ORDER BY thread_id, checkpoint_ns, checkpoint_id",
                params,
            ).fetchall()
            path_col = "task_path" if has_path else "NULL"
            write_rows = conn.execute(
                f"SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, {path_col}, idx, "
                f"channel, type, value FROM writes{where} ORDER BY task_id, idx",
                params,
            ).fetchall()
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
    except sqlite3.DatabaseError as exc:
        raise LangGraphSourceError(f"Cannot read {file} as a SQLite database: {exc}.") from exc
    finally:
        conn.close()
    writes: dict[tuple[str, str, str], list[LgWrite]] = {}
    for t, ns, cid, *rest in write_rows:
        at = _ids(t, ns, cid)
        writes.setdefault((t, ns, cid), []).append(_write(decoder, rest, at))
    out = []
    for t, ns, cid, parent, ctype, cblob, meta in rows:
        at = _ids(t, ns, cid)
        parent = _text(parent, "parent checkpoint id", at, optional=True)
        checkpoint = _body(decoder, ctype, cblob, at)
        out.append(
            LgCheckpoint(
                t,
                ns,
                cid,
                parent,
                checkpoint,
                _metadata(decoder, meta, at),
                writes.get((t, ns, cid), []),
            )
        )
    return out


# -- PostgreSQL -----------------------------------------------------------------------

_PG_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")


def _pg_rows(conn: Any, threads: Sequence[str] | None) -> tuple[list[Any], list[Any], list[Any]]:
    """Checkpoints, blobs and writes rows, after checking LangGraph's tables are there."""
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
    where, params = _where_threads(threads, "thread_id", "%s")
    rows = conn.execute(
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
        f"checkpoint, metadata FROM checkpoints{where} "
        "ORDER BY thread_id, checkpoint_ns, checkpoint_id",
        params,
    ).fetchall()
    blobs = conn.execute(
        "SELECT thread_id, checkpoint_ns, channel, version, type, blob "
        f"FROM checkpoint_blobs{where}",
        params,
    ).fetchall()
    writes = conn.execute(
        "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, "
        f"type, blob FROM checkpoint_writes{where} ORDER BY task_id, idx",
        params,
    ).fetchall()
    return rows, blobs, writes


def read_postgres(
    conninfo: str, decoder: LangGraphDecoder, threads: Sequence[str] | None = None
) -> list[LgCheckpoint]:
    """Read LangGraph's PostgreSQL checkpoint tables (in one read-only transaction)."""
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
        with conn:
            conn.read_only = True
            conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ  # one snapshot
            rows, blob_rows, write_rows = _pg_rows(conn, threads)
    except psycopg.Error as exc:
        raise LangGraphSourceError(
            f"Cannot read LangGraph's tables from the PostgreSQL source: "
            f"{type(exc).__name__}: {exc}".strip()
        ) from exc
    blobs: dict[tuple[str, str, str, str], Any] = {}
    for t, ns, channel, version, vtype, blob in blob_rows:
        blobs[(t, ns, channel, str(version))] = (vtype, blob)
    writes: dict[tuple[str, str, str], list[LgWrite]] = {}
    for t, ns, cid, *rest in write_rows:
        at = _ids(t, ns, cid)
        task, tpath, idx, channel, vtype, blob = rest
        writes.setdefault((t, ns, cid), []).append(
            _write(decoder, (task, tpath, idx, channel, vtype, blob), at)
        )
    out = []
    for t, ns, cid, parent, body, meta in rows:
        at = _ids(t, ns, cid)
        parent = _text(parent, "parent checkpoint id", at, optional=True)
        checkpoint = _load(
            at.at(part="checkpoint body"),
            decoder.loads_json,
            body if isinstance(body, (bytes, str)) else json.dumps(body),
        )
        if not isinstance(checkpoint, dict):
            raise LangGraphValueError(f"The body of {at} is not a mapping.", at)
        values = checkpoint.get("channel_values") or {}
        versions = checkpoint.get("channel_versions") or {}
        if not isinstance(values, dict) or not isinstance(versions, dict):
            raise LangGraphValueError(
                f"The channel values or versions of {at} are not mappings.", at
            )
        values = dict(values)
        for channel, version in versions.items():
            stored = blobs.get((t, ns, channel, str(version)))
            if stored is not None and stored[0] != "empty":
                values[channel] = _load(at.at(channel=str(channel)), decoder.loads_typed, stored)
        checkpoint["channel_values"] = values
        out.append(
            LgCheckpoint(
                t,
                ns,
                cid,
                parent,
                checkpoint,
                _metadata(decoder, meta, at),
                writes.get((t, ns, cid), []),
            )
        )
    return out


def thread_ids(records: Iterable[LgCheckpoint]) -> list[str]:
    """The distinct thread ids of ``records``, in order."""
    seen: dict[str, None] = {}
    for record in records:
        seen.setdefault(record.thread_id)
    return list(seen)
