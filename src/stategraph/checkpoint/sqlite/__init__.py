"""``SqliteSaver``: the embedded, durable checkpoint saver (one SQLite file).

Tables (see ``_schema.py``): ``checkpoints`` (one row per checkpoint, without channel
values), ``blobs`` (channel values, once per ``(channel, version)``: an unchanged
channel is never stored again), ``writes`` (pending writes) and ``schema_migrations``.

Concurrency: one connection guarded by a re-entrant lock serves every thread of the
process. That is what ``SqliteSaver(conn)`` can offer for any connection it is given
(an in-memory database exists only inside its one connection) and costs little
because SQLite admits one writer at a time anyway. Across processes the file is
shared safely: WAL journal, ``busy_timeout`` of 30 s, and ``BEGIN IMMEDIATE`` for each
``put`` / ``put_writes`` / ``delete_thread``, so each is one atomic transaction that
waits for the write lock instead of failing with "database is locked". Reads run in a
(deferred) transaction too, so a checkpoint and its values come from one snapshot.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from stategraph.checkpoint._ids import next_string_version
from stategraph.checkpoint._util import checkpoint_config, metadata_matches, thread_ns_id
from stategraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
    SerializerProtocol,
    dump_channel_value,
    get_checkpoint_metadata,
)
from stategraph.checkpoint.sqlite._filters import filter_clauses, metadata_json
from stategraph.checkpoint.sqlite._schema import configure, has_json, migrate
from stategraph.constants import CONF

__all__ = ["SqliteSaver"]

_PAGE = 100
_COLUMNS = (
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
    "type, checkpoint, metadata_type, metadata"
)
_INSERT_BLOB = (
    "INSERT OR IGNORE INTO blobs (thread_id, checkpoint_ns, channel, version, type, blob) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
_INSERT_CHECKPOINT = (
    "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
    "parent_checkpoint_id, type, checkpoint, metadata_type, metadata, metadata_json) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_WRITE_COLUMNS = (
    "thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path, seq"
)
_INSERT_WRITE = (
    f"INSERT OR IGNORE INTO writes ({_WRITE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_UPSERT_WRITE = (
    f"INSERT INTO writes ({_WRITE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET "
    "channel = excluded.channel, type = excluded.type, value = excluded.value, "
    "task_path = excluded.task_path"
)
_EMPTY = "empty"


class SqliteSaver(BaseCheckpointSaver[str]):
    """Checkpoint saver backed by SQLite (a file, or ``":memory:"``).

    ``SqliteSaver(conn)`` uses a connection you opened; to use it from several threads
    open it with ``check_same_thread=False`` (``from_conn_string`` does). The saver sets
    WAL mode, ``busy_timeout`` and ``synchronous=NORMAL`` on it and applies its schema
    migrations on first use (or when you call :meth:`setup`). Do not leave your own
    transaction open on the connection while the saver uses it.

    The async methods run the sync ones on a worker thread; for a saver whose calls
    all go through one dedicated thread, use ``AsyncSqliteSaver``.
    """

    conn: sqlite3.Connection
    """The connection every call goes through (guarded by :attr:`lock`)."""

    def __init__(
        self, conn: sqlite3.Connection, *, serde: SerializerProtocol | None = None
    ) -> None:
        """Wrap ``conn``; ``serde`` defaults to ``JsonPlusSerializer()``."""
        super().__init__(serde=serde)
        self.conn = conn
        self.lock = threading.RLock()
        self.is_setup = False
        self._json = False

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str) -> Iterator[SqliteSaver]:
        """Open ``conn_string`` (a path or ``":memory:"``), yield a saver, then close.

        Usage: ``with SqliteSaver.from_conn_string("checkpoints.sqlite") as saver: ...``
        """
        conn = sqlite3.connect(conn_string, check_same_thread=False, isolation_level=None)
        try:
            yield cls(conn)
        finally:
            conn.close()

    # -- plumbing --------------------------------------------------------------

    def setup(self) -> None:
        """Configure the connection and apply missing migrations (idempotent)."""
        with self.lock:
            if self.is_setup:
                return
            self._check_idle()
            configure(self.conn)
            migrate(self.conn)
            self._json = has_json(self.conn)
            self.is_setup = True

    def _check_idle(self) -> None:
        if self.conn.in_transaction:
            raise RuntimeError(
                f"{type(self).__name__}: the SQLite connection has an open transaction "
                "begun outside the saver. Commit or roll it back first, or give the saver "
                "a connection of its own (SqliteSaver.from_conn_string(path))."
            )

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[sqlite3.Connection]:
        """Hold the lock and run the block in one transaction (``IMMEDIATE`` for
        writes, so it waits for the file's write lock up front); roll back on error."""
        with self.lock:
            if not self.is_setup:
                self.setup()
            self._check_idle()
            conn = self.conn
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.rollback()
                raise
            conn.commit()

    def _load(self, conn: sqlite3.Connection, row: Sequence[Any]) -> CheckpointTuple:
        """Build a tuple from a ``checkpoints`` row, reading its values and writes."""
        thread_id, ns, checkpoint_id, parent_id, ctype, cbytes, mtype, mbytes = row
        loads = self.serde.loads_typed
        checkpoint: Checkpoint = loads((ctype, cbytes))
        values: dict[str, Any] = {}
        for channel, version in checkpoint["channel_versions"].items():
            blob = conn.execute(
                "SELECT type, blob FROM blobs WHERE thread_id = ? AND checkpoint_ns = ? "
                "AND channel = ? AND version = ?",
                (thread_id, ns, channel, str(version)),
            ).fetchone()
            if blob is not None and blob[1] is not None:
                values[channel] = loads((blob[0], blob[1]))
        checkpoint["channel_values"] = values
        pending: list[PendingWrite] = [
            (task_id, channel, loads((wtype, value)))
            for task_id, channel, wtype, value in conn.execute(
                "SELECT task_id, channel, type, value FROM writes WHERE thread_id = ? "
                "AND checkpoint_ns = ? AND checkpoint_id = ? ORDER BY seq",
                (thread_id, ns, checkpoint_id),
            )
        ]
        return CheckpointTuple(
            config=checkpoint_config(thread_id, ns, checkpoint_id),
            checkpoint=checkpoint,
            metadata=loads((mtype, mbytes)),
            parent_config=(
                checkpoint_config(thread_id, ns, parent_id) if parent_id is not None else None
            ),
            pending_writes=pending,
        )

    # -- reading ---------------------------------------------------------------

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """Return the checkpoint named by ``config`` or the latest of its
        ``(thread_id, checkpoint_ns)``, with its pending writes; ``None`` if absent."""
        thread_id, ns, checkpoint_id = thread_ns_id(config, f"{type(self).__name__}.get_tuple")
        with self._transaction(write=False) as conn:
            if checkpoint_id is None:
                row = conn.execute(
                    f"SELECT {_COLUMNS} FROM checkpoints WHERE thread_id = ? AND "
                    "checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1",
                    (thread_id, ns),
                ).fetchone()
            else:
                row = conn.execute(
                    f"SELECT {_COLUMNS} FROM checkpoints WHERE thread_id = ? AND "
                    "checkpoint_ns = ? AND checkpoint_id = ?",
                    (thread_id, ns, checkpoint_id),
                ).fetchone()
            return None if row is None else self._load(conn, row)

    def list(
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Yield matching checkpoints newest first (see ``BaseCheckpointSaver.list``).

        Results are read in pages, each in its own short read transaction; no lock is
        held while the caller consumes them.
        """
        if limit is not None and limit <= 0:
            return
        conf = (config or {}).get(CONF) or {}
        where: list[str] = []
        params: list[Any] = []
        if conf.get("thread_id") is not None:
            where.append("thread_id = ?")
            params.append(str(conf["thread_id"]))
        if "checkpoint_ns" in conf:
            where.append("checkpoint_ns = ?")
            params.append(conf["checkpoint_ns"] or "")
        if conf.get("checkpoint_id"):
            where.append("checkpoint_id = ?")
            params.append(conf["checkpoint_id"])
        before_id = ((before or {}).get(CONF) or {}).get("checkpoint_id")
        if before_id:
            where.append("checkpoint_id < ?")
            params.append(before_id)
        if not self.is_setup:
            self.setup()
        fwhere, fparams, exact = filter_clauses(filter, self._json)
        where += fwhere
        params += fparams
        remaining = limit
        last: tuple[str, str, str] | None = None
        while True:
            page = _PAGE if remaining is None or not exact else min(_PAGE, remaining)
            conds = (
                [*where, "(checkpoint_id, thread_id, checkpoint_ns) < (?, ?, ?)"] if last else where
            )
            sql = (
                f"SELECT {_COLUMNS} FROM checkpoints"
                + (f" WHERE {' AND '.join(conds)}" if conds else "")
                + " ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC LIMIT ?"
            )
            args = [*params, *(last or ()), page]
            items: list[CheckpointTuple] = []
            with self._transaction(write=False) as conn:
                rows = conn.execute(sql, args).fetchall()
                for row in rows:
                    if not exact and not metadata_matches(
                        self.serde.loads_typed((row[6], row[7])), filter
                    ):
                        continue
                    items.append(self._load(conn, row))
            for item in items:
                yield item
                if remaining is not None:
                    remaining -= 1
                    if remaining <= 0:
                        return
            if len(rows) < page:
                return
            last_row = rows[-1]
            last = (last_row[2], last_row[0], last_row[1])

    # -- writing ---------------------------------------------------------------

    def put(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        """Save ``checkpoint`` in one transaction: the values of the channels in
        ``new_versions`` first, then the checkpoint row that refers to them.
        ``config``'s ``checkpoint_id`` is recorded as the parent and its scalar user
        keys are added to the metadata (``get_checkpoint_metadata``). Returns the
        config naming the new checkpoint."""
        thread_id, ns, parent_id = thread_ns_id(config, f"{type(self).__name__}.put")
        body = dict(checkpoint)
        values: dict[str, Any] = body.pop("channel_values")  # type: ignore[assignment]
        blob_rows: list[tuple[str, str, str, str, str, bytes | None]] = []
        for channel, version in new_versions.items():
            if channel in values:
                vtype, vbytes = dump_channel_value(self.serde, channel, values[channel])
                blob_rows.append((thread_id, ns, channel, str(version), vtype, vbytes))
            else:
                blob_rows.append((thread_id, ns, channel, str(version), _EMPTY, None))
        ctype, cbytes = self.serde.dumps_typed(body)
        stored_metadata = get_checkpoint_metadata(config, metadata)
        mtype, mbytes = self.serde.dumps_typed(stored_metadata)
        row = (
            thread_id,
            ns,
            checkpoint["id"],
            parent_id,
            ctype,
            cbytes,
            mtype,
            mbytes,
            metadata_json(stored_metadata),
        )
        with self._transaction(write=True) as conn:
            if blob_rows:
                conn.executemany(_INSERT_BLOB, blob_rows)
            conn.execute(_INSERT_CHECKPOINT, row)
        return checkpoint_config(thread_id, ns, checkpoint["id"])

    def put_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save task ``task_id``'s writes against ``config``'s checkpoint in one
        transaction: special channels replace, regular writes are kept only if absent."""
        name = f"{type(self).__name__}.put_writes"
        thread_id, ns, checkpoint_id = thread_ns_id(config, name)
        if checkpoint_id is None:
            raise ValueError(
                f"{name} needs config['configurable']['checkpoint_id']: the id of the "
                "checkpoint the writes belong to."
            )
        prepared = [
            (
                WRITES_IDX_MAP.get(channel, i),
                channel,
                *dump_channel_value(self.serde, channel, value),
            )
            for i, (channel, value) in enumerate(writes)
        ]
        if not prepared:
            return
        with self._transaction(write=True) as conn:
            (seq0,) = conn.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM writes WHERE thread_id = ? AND "
                "checkpoint_ns = ? AND checkpoint_id = ?",
                (thread_id, ns, checkpoint_id),
            ).fetchone()
            special: list[tuple[Any, ...]] = []
            regular: list[tuple[Any, ...]] = []
            for i, (idx, channel, wtype, wbytes) in enumerate(prepared, start=seq0 + 1):
                row = (thread_id, ns, checkpoint_id, task_id, idx, channel, wtype, wbytes)
                (special if idx < 0 else regular).append((*row, task_path, i))
            if regular:
                conn.executemany(_INSERT_WRITE, regular)
            if special:
                conn.executemany(_UPSERT_WRITE, special)

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and value of ``thread_id`` in one transaction."""
        key = (str(thread_id),)
        with self._transaction(write=True) as conn:
            conn.execute("DELETE FROM checkpoints WHERE thread_id = ?", key)
            conn.execute("DELETE FROM writes WHERE thread_id = ?", key)
            conn.execute("DELETE FROM blobs WHERE thread_id = ?", key)

    def get_next_version(self, current: str | int | float | None, channel: None) -> str:
        """Same string scheme as ``InMemorySaver``: ``f"{step:032}.{16 hex digits}"``,
        so forks of one parent never collide on ``(channel, version)``."""
        return next_string_version(current)
