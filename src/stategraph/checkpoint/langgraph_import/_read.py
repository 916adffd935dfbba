"""Reading LangGraph's checkpoint tables (SQLite file or PostgreSQL schema), read-only.

Each reader yields :class:`LgCheckpoint` records: one checkpoint with its channel
values, metadata and pending writes, already loaded by the allow-list decoder.
Threads come in ``thread_id`` order; within a thread, parents before children
(checkpoint ids are time-ordered), so a saver receives each checkpoint after its
parent.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stategraph.checkpoint.langgraph_import._decode import LangGraphDecoder
from stategraph.checkpoint.serde.base import DeserializationError

__all__ = ["LgCheckpoint", "LgWrite", "read_sqlite", "read_postgres"]


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


def _metadata(decoder: LangGraphDecoder, raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    if isinstance(raw, dict):
        value = decoder.loads_json(raw)
    else:
        value = decoder.loads_json(bytes(raw) if isinstance(raw, memoryview) else raw)
    if not isinstance(value, dict):
        raise DeserializationError(f"LangGraph metadata must be a JSON object, got {value!r:.60}.")
    return value


def _where_threads(threads: Sequence[str] | None, column: str, mark: str) -> tuple[str, list[Any]]:
    if not threads:
        return "", []
    return f" WHERE {column} IN ({', '.join([mark] * len(threads))})", [str(t) for t in threads]


def read_sqlite(
    path: str | Path, decoder: LangGraphDecoder, threads: Sequence[str] | None = None
) -> Iterator[LgCheckpoint]:
    """Read a LangGraph SQLite checkpoint file (opened read-only: never modified)."""
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"No such LangGraph SQLite file: {file}")
    conn = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)
    try:
        from stategraph.checkpoint.langgraph_import._guard import is_langgraph_sqlite

        if not is_langgraph_sqlite(conn):
            raise ValueError(
                f"{file} does not hold LangGraph checkpoint tables (checkpoints with a "
                f"metadata column, and writes)."
            )
        where, params = _where_threads(threads, "thread_id", "?")
        rows = conn.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
            f"checkpoint, metadata FROM checkpoints{where} "
            "ORDER BY thread_id, checkpoint_ns, checkpoint_id",
            params,
        ).fetchall()
        write_cols = {row[1] for row in conn.execute("PRAGMA table_info(writes)")}
        path_col = "task_path" if "task_path" in write_cols else "''"
        writes: dict[tuple[str, str, str], list[LgWrite]] = {}
        for t, ns, cid, task, tpath, idx, channel, vtype, value in conn.execute(
            f"SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, {path_col}, idx, "
            f"channel, type, value FROM writes{where} ORDER BY task_id, idx",
            params,
        ):
            writes.setdefault((t, ns, cid), []).append(
                LgWrite(task, tpath or "", idx, channel, decoder.loads_typed((vtype, value)))
            )
    finally:
        conn.close()
    for t, ns, cid, parent, ctype, cblob, meta in rows:
        checkpoint = decoder.loads_typed((ctype, cblob))
        if not isinstance(checkpoint, dict):
            raise DeserializationError(f"Checkpoint {cid} of thread {t!r} is not a mapping.")
        yield LgCheckpoint(
            t, ns, cid, parent, checkpoint, _metadata(decoder, meta), writes.get((t, ns, cid), [])
        )


def read_postgres(
    conninfo: str, decoder: LangGraphDecoder, threads: Sequence[str] | None = None
) -> Iterator[LgCheckpoint]:
    """Read LangGraph's PostgreSQL checkpoint tables (in a read-only transaction)."""
    import psycopg
    from psycopg.rows import tuple_row

    with psycopg.connect(conninfo, row_factory=tuple_row) as conn:
        conn.read_only = True
        where, params = _where_threads(threads, "thread_id", "%s")
        present = conn.execute("SELECT to_regclass('checkpoint_migrations') IS NOT NULL").fetchone()
        if not present or not present[0]:
            raise ValueError(
                "This PostgreSQL schema does not hold LangGraph checkpoint tables "
                "(checkpoints, checkpoint_blobs, checkpoint_writes, checkpoint_migrations)."
            )
        rows = conn.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
            f"checkpoint, metadata FROM checkpoints{where} "
            "ORDER BY thread_id, checkpoint_ns, checkpoint_id",
            params,
        ).fetchall()
        blobs: dict[tuple[str, str, str, str], Any] = {}
        for t, ns, channel, version, vtype, blob in conn.execute(
            f"SELECT thread_id, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs{where}",
            params,
        ):
            blobs[(t, ns, channel, str(version))] = (vtype, blob)
        writes: dict[tuple[str, str, str], list[LgWrite]] = {}
        for t, ns, cid, task, tpath, idx, channel, vtype, blob in conn.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, "
            f"type, blob FROM checkpoint_writes{where} ORDER BY task_id, idx",
            params,
        ):
            writes.setdefault((t, ns, cid), []).append(
                LgWrite(task, tpath or "", idx, channel, decoder.loads_typed((vtype, blob)))
            )
    for t, ns, cid, parent, body, meta in rows:
        checkpoint = decoder.loads_json(
            body if isinstance(body, (bytes, str)) else json.dumps(body)
        )
        if not isinstance(checkpoint, dict):
            raise DeserializationError(f"Checkpoint {cid} of thread {t!r} is not a mapping.")
        values = dict(checkpoint.get("channel_values") or {})
        for channel, version in (checkpoint.get("channel_versions") or {}).items():
            stored = blobs.get((t, ns, channel, str(version)))
            if stored is not None and stored[0] != "empty":
                values[channel] = decoder.loads_typed(stored)
        checkpoint["channel_values"] = values
        yield LgCheckpoint(
            t, ns, cid, parent, checkpoint, _metadata(decoder, meta), writes.get((t, ns, cid), [])
        )


def thread_ids(records: Iterable[LgCheckpoint]) -> list[str]:
    """The distinct thread ids of ``records``, in order."""
    seen: dict[str, None] = {}
    for record in records:
        seen.setdefault(record.thread_id)
    return list(seen)
