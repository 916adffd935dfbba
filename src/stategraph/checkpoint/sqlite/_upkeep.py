"""Upkeep of a :class:`~stategraph.checkpoint.sqlite.SqliteSaver`: deleting threads,
retention (``prune``, ``delete_for_runs``), ``copy_thread``, time to live and space.

A mixin: its methods run on the saver (typed by the small :class:`_Host` protocol of
what they use), so the saver's module keeps reading and writing checkpoints only.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from stategraph.checkpoint._body_delta import Keyframes
from stategraph.checkpoint._list_delta import ListDeltaCodec
from stategraph.checkpoint._retention import (
    PruneStrategy,
    Sweeper,
    SweeperThread,
    TTLConfig,
    check_prune_args,
    close_over_deltas,
    keep_latest,
    keep_without_runs,
    partition,
)
from stategraph.checkpoint._seal import Sealer, referenced, sealer_of, stored_base
from stategraph.checkpoint._util import check_ids
from stategraph.checkpoint.base import CheckpointTuple
from stategraph.checkpoint.sqlite._filters import JSON_METADATA
from stategraph.checkpoint.sqlite._schema import BUMP_THREAD
from stategraph.checkpoint.sqlite._statements import (
    _COLUMNS,
    _INSERT_BLOB,
    _INSERT_CHECKPOINT,
    _INSERT_ITEM,
    _SELECT_BLOB,
    _TOUCH,
    _WRITE_COLUMNS,
)

__all__ = ["SqliteUpkeep"]

_THREAD_TABLES = ("checkpoints", "writes", "blobs", "items", "thread_ttl")
"""The tables holding rows of one thread (what deleting a thread deletes of it; its
``thread_changes`` row is moved up instead, so the studio sees the thread gone)."""


class _Host(Protocol):
    """What the upkeep methods use of the saver."""

    conn: sqlite3.Connection
    lock: threading.RLock
    is_setup: bool
    ttl: TTLConfig | None
    delta: ListDeltaCodec | None
    keyframes: Keyframes
    serde: Any
    _sweeper: Sweeper | None

    def setup(self) -> None: ...
    def _check_idle(self) -> None: ...
    def _transaction(self, *, write: bool) -> AbstractContextManager[sqlite3.Connection]: ...
    def _load(self, conn: sqlite3.Connection, row: Sequence[Any]) -> CheckpointTuple: ...
    def _dump(self, channel: str, value: Any, items: dict[bytes, tuple[str, bytes]]) -> Any: ...
    def _item_rows(
        self, thread_id: str, ns: str, items: dict[bytes, tuple[str, bytes]], sealer: Sealer | None
    ) -> Sequence[tuple[Any, ...]]: ...
    def sweep(self) -> int: ...
    def delete_thread(self, thread_id: str) -> None: ...
    def _thread_tuples(
        self, conn: sqlite3.Connection, thread_id: str
    ) -> Sequence[CheckpointTuple]: ...
    def _retain(
        self,
        conn: sqlite3.Connection,
        tid: str,
        keep: set[tuple[str, str]],
        tuples: Sequence[CheckpointTuple],
    ) -> None: ...
    def _collect(self, conn: sqlite3.Connection, tid: str) -> None: ...
    def _rewrite_bodies(
        self, conn: sqlite3.Connection, tid: str, keep: set[tuple[str, str]]
    ) -> None: ...
    def _copy_sealed(
        self, conn: sqlite3.Connection, sealer: Sealer, src: str, dst: str
    ) -> None: ...
    def _reclaim(self) -> None: ...


class SqliteUpkeep(SweeperThread):
    """Deleting, retention, copying, time to live and vacuum for ``SqliteSaver``."""

    _sweeper_name = "stategraph-ttl-sqlite"

    _sweeper: Sweeper | None

    def delete_thread(self: _Host, thread_id: str) -> None:
        """Delete every checkpoint, write and value of ``thread_id`` in one transaction."""
        check_ids("delete_thread", thread_id=thread_id)
        key = (str(thread_id),)
        with self._transaction(write=True) as conn:
            for table in _THREAD_TABLES:
                conn.execute(f"DELETE FROM {table} WHERE thread_id = ?", key)
            conn.execute(BUMP_THREAD, key)
        self.keyframes.forget(str(thread_id))
        if self.delta is not None:
            self.delta.forget(str(thread_id))
        self._reclaim()

    # -- retention ---------------------------------------------------------------

    def _thread_tuples(
        self: _Host, conn: sqlite3.Connection, thread_id: str
    ) -> Sequence[CheckpointTuple]:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id DESC",
            (thread_id,),
        ).fetchall()
        return [self._load(conn, row) for row in rows]

    def prune(
        self: _Host,
        thread_ids: Sequence[str],
        *,
        strategy: PruneStrategy = "keep_latest",
        keep_last: int | None = None,
    ) -> None:
        """Shrink the history of ``thread_ids``, one transaction per thread
        (``"keep_latest"`` / ``"delete"``: "Retention" in docs/persistence.md). Other
        connections keep working meanwhile (they wait for the write lock, as for any
        write); freed pages go back to the file system in incremental-vacuum mode (new
        files use it; see :meth:`vacuum`)."""
        check_ids("prune", thread_ids=thread_ids)
        ids, n = check_prune_args(thread_ids, strategy, keep_last, type(self).__name__)
        for tid in ids:
            if strategy == "delete":
                self.delete_thread(tid)
                continue
            with self._transaction(write=True) as conn:
                tuples = self._thread_tuples(conn, tid)
                self._retain(conn, tid, close_over_deltas(tuples, keep_latest(tuples, n)), tuples)
            if self.delta is not None:
                self.delta.forget(tid)
        self._reclaim()

    def delete_for_runs(self: _Host, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata ``run_id`` is in
        ``run_ids``, in every thread; one a remaining checkpoint needs to rebuild its
        ``DeltaChannel`` values stays. One transaction."""
        check_ids("delete_for_runs", run_ids=run_ids)
        wanted = {str(r) for r in run_ids}
        if not wanted:
            return
        touched: list[str] = []
        with self._transaction(write=True) as conn:
            threads = [r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")]
            for tid in threads:
                tuples = self._thread_tuples(conn, tid)
                keep = keep_without_runs(tuples, wanted)
                if keep is not None:
                    self._retain(conn, tid, keep, tuples)
                    touched.append(tid)
        if self.delta is not None:
            for tid in touched:
                self.delta.forget(tid)
        self._reclaim()

    def copy_thread(self: _Host, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, write and value of one thread to a new thread id
        (checkpoint ids, parents and metadata unchanged), in one transaction. The
        target must be empty."""
        check_ids(
            "copy_thread", source_thread_id=source_thread_id, target_thread_id=target_thread_id
        )
        src, dst = str(source_thread_id), str(target_thread_id)
        name = type(self).__name__
        with self._transaction(write=True) as conn:
            if (
                conn.execute("SELECT 1 FROM checkpoints WHERE thread_id = ?", (src,)).fetchone()
                is None
            ):
                raise ValueError(f"{name}.copy_thread: thread '{src}' has no checkpoints.")
            if conn.execute("SELECT 1 FROM checkpoints WHERE thread_id = ?", (dst,)).fetchone():
                raise ValueError(
                    f"{name}.copy_thread: thread '{dst}' already has checkpoints; delete it "
                    "first (delete_thread) or pick another id."
                )
            sealer = sealer_of(self.serde)
            if sealer is not None:
                self._copy_sealed(conn, sealer, src, dst)
                if self.ttl is not None:
                    conn.execute(_TOUCH, (dst, time.time()))
                return
            conn.execute(
                "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
                "parent_checkpoint_id, type, checkpoint, metadata_type, metadata, "
                "metadata_json, body_base) SELECT ?, checkpoint_ns, checkpoint_id, "
                "parent_checkpoint_id, type, checkpoint, metadata_type, metadata, "
                "metadata_json, body_base FROM checkpoints WHERE thread_id = ?",
                (dst, src),
            )
            conn.execute(
                f"INSERT INTO writes ({_WRITE_COLUMNS}) SELECT ?, checkpoint_ns, "
                "checkpoint_id, task_id, idx, channel, type, value, task_path, seq FROM "
                "writes WHERE thread_id = ?",
                (dst, src),
            )
            conn.execute(
                "INSERT INTO blobs (thread_id, checkpoint_ns, channel, version, type, blob, "
                "base) SELECT ?, checkpoint_ns, channel, version, type, blob, base FROM blobs "
                "WHERE thread_id = ?",
                (dst, src),
            )
            conn.execute(
                "INSERT OR IGNORE INTO items (thread_id, checkpoint_ns, hash, type, value) "
                "SELECT ?, checkpoint_ns, hash, type, value FROM items WHERE thread_id = ?",
                (dst, src),
            )
            if self.ttl is not None:
                conn.execute(_TOUCH, (dst, time.time()))

    @staticmethod
    def _copy_sealed(conn: sqlite3.Connection, sealer: Sealer, src: str, dst: str) -> None:
        """copy_thread for an encrypting saver: every row is bound to its thread, so each
        is unsealed at ``src`` and sealed again at ``dst`` (in the caller's transaction)."""

        def move(parts: tuple[Any, ...], t: str, b: Any) -> tuple[str, bytes]:
            return sealer.seal((parts[0], dst, *parts[2:]), sealer.unseal(parts, (t, b)))

        rows = conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, "
            "metadata_type, metadata, metadata_json, body_base FROM checkpoints "
            "WHERE thread_id = ?",
            (src,),
        ).fetchall()
        conn.executemany(
            _INSERT_CHECKPOINT,
            [
                (
                    dst,
                    ns,
                    cid,
                    parent,
                    *move(("c", src, ns, cid), ct, cb),
                    # (a row whose metadata is its JSON text alone, written before
                    # encryption, seals that text)
                    *move(("m", src, ns, cid), mt, mjson.encode() if mt == JSON_METADATA else mb),
                    mjson,
                    base,
                )
                for ns, cid, parent, ct, cb, mt, mb, mjson, base in rows
            ],
        )
        writes = conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, "
            "task_path, seq FROM writes WHERE thread_id = ?",
            (src,),
        ).fetchall()
        conn.executemany(
            f"INSERT INTO writes ({_WRITE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    dst,
                    ns,
                    cid,
                    task,
                    idx,
                    ch,
                    *move(("w", src, ns, cid, task, ch), t, v),
                    path,
                    seq,
                )
                for ns, cid, task, idx, ch, t, v, path, seq in writes
            ],
        )
        blobs = conn.execute(
            "SELECT checkpoint_ns, channel, version, type, blob, base FROM blobs "
            "WHERE thread_id = ?",
            (src,),
        ).fetchall()
        conn.executemany(
            _INSERT_BLOB,
            [
                (
                    dst,
                    ns,
                    ch,
                    v,
                    *(move(("b", src, ns, ch, v), t, b) if b is not None else (t, b)),
                    base,
                )
                for ns, ch, v, t, b, base in blobs
            ],
        )
        items = conn.execute(
            "SELECT checkpoint_ns, hash, type, value FROM items WHERE thread_id = ?", (src,)
        ).fetchall()
        conn.executemany(
            _INSERT_ITEM,
            [(dst, ns, h, *move(("i", src, ns, bytes(h).hex()), t, v)) for ns, h, t, v in items],
        )

    def _retain(
        self: _Host,
        conn: sqlite3.Connection,
        tid: str,
        keep: set[tuple[str, str]],
        tuples: Sequence[CheckpointTuple],
    ) -> None:
        """Keep only the checkpoints ``keep`` of thread ``tid`` (inside a write
        transaction): rebase the kept delta values and bodies, then delete the rest."""
        self._rewrite_bodies(conn, tid, keep)
        dropped, referenced, kept = partition(tuples, keep)
        drop = [(tid, ns, cid) for ns, cid in dropped]
        for ns, channel, version, value in kept:
            found = conn.execute(_SELECT_BLOB, (tid, ns, channel, version)).fetchone()
            base = None if found is None else stored_base((found[0], found[1]))
            if base is not None and (ns, channel, str(base)) not in referenced:
                # rebase: the delta's base goes, store this version whole
                items: dict[bytes, tuple[str, bytes]] = {}
                vtype, vbytes = self._dump(channel, value, items)
                sealer = sealer_of(self.serde)
                if sealer is not None:
                    vtype, vbytes = sealer.seal(("b", tid, ns, channel, version), (vtype, vbytes))
                conn.executemany(_INSERT_ITEM, self._item_rows(tid, ns, items, sealer))
                conn.execute(
                    "UPDATE blobs SET type = ?, blob = ?, base = NULL WHERE thread_id = ? AND "
                    "checkpoint_ns = ? AND channel = ? AND version = ?",
                    (vtype, vbytes, tid, ns, channel, version),
                )
        conn.executemany(
            "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND "
            "checkpoint_id = ?",
            drop,
        )
        if drop:
            conn.execute(BUMP_THREAD, (tid,))
        conn.executemany(
            "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            drop,
        )
        gone = [
            (tid, ns, channel, version)
            for ns, channel, version in conn.execute(
                "SELECT checkpoint_ns, channel, version FROM blobs WHERE thread_id = ?", (tid,)
            ).fetchall()
            if (ns, channel, version) not in referenced
        ]
        conn.executemany(
            "DELETE FROM blobs WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? "
            "AND version = ?",
            gone,
        )
        self._collect(conn, tid)

    @staticmethod
    def _collect(conn: sqlite3.Connection, tid: str) -> None:
        """Delete the items of thread ``tid`` no remaining value or write refers to
        (inside the caller's write transaction): mark from the remaining rows, sweep."""
        if (
            conn.execute("SELECT 1 FROM items WHERE thread_id = ? LIMIT 1", (tid,)).fetchone()
            is None
        ):
            return
        by_ns: dict[str, list[tuple[str, bytes]]] = {}
        for ns, t, b in conn.execute(
            "SELECT checkpoint_ns, type, blob FROM blobs WHERE thread_id = ? AND blob IS NOT NULL "
            "UNION ALL SELECT checkpoint_ns, type, value FROM writes WHERE thread_id = ?",
            (tid, tid),
        ):
            by_ns.setdefault(ns, []).append((t, b))
        marked = {(ns, h) for ns, typeds in by_ns.items() for h in referenced(typeds)}
        gone = [
            (tid, ns, h)
            for ns, h in conn.execute(
                "SELECT checkpoint_ns, hash FROM items WHERE thread_id = ?", (tid,)
            ).fetchall()
            if (ns, bytes(h)) not in marked
        ]
        conn.executemany(
            "DELETE FROM items WHERE thread_id = ? AND checkpoint_ns = ? AND hash = ?", gone
        )

    # -- time to live and space ------------------------------------------------------

    def sweep(self: _Host) -> int:
        """Delete the threads whose time to live ran out; return how many.

        A thread lives ``ttl["default_ttl"]`` minutes after its last write (or read,
        with ``refresh_on_read``), recorded in the file, so any process sweeping sees
        every process's activity. Without ``ttl`` nothing expires.
        """
        if self.ttl is None:
            return 0
        cutoff = time.time() - self.ttl["default_ttl"] * 60.0
        with self._transaction(write=False) as conn:
            expired = [
                r[0]
                for r in conn.execute(
                    "SELECT thread_id FROM thread_ttl WHERE touched_at < ?", (cutoff,)
                )
            ]
        count = 0
        for tid in expired:
            with self._transaction(write=True) as conn:
                # written again since the scan? then it lives on
                row = conn.execute(
                    "SELECT touched_at FROM thread_ttl WHERE thread_id = ?", (tid,)
                ).fetchone()
                if row is None or row[0] >= cutoff:
                    continue
                for table in _THREAD_TABLES:
                    conn.execute(f"DELETE FROM {table} WHERE thread_id = ?", (tid,))
                conn.execute(BUMP_THREAD, (tid,))
            self.keyframes.forget(tid)
            if self.delta is not None:
                self.delta.forget(tid)
            count += 1
        if count:
            self._reclaim()
        return count

    def _reclaim(self: _Host) -> None:
        """Give the pages freed by deletes back to the file system (files in
        incremental-vacuum mode; a no-op for others)."""
        with self.lock:
            self._check_idle()
            # executescript steps the pragma to the end (execute frees one page only)
            self.conn.executescript("PRAGMA incremental_vacuum;")

    def vacuum(self: _Host) -> None:
        """Rebuild the file to its smallest size (SQLite ``VACUUM``) and switch it to
        incremental vacuum, so later deletes give their space back at once.

        Needs the write lock for the whole rebuild: run it when the database is quiet.
        """
        with self.lock:
            if not self.is_setup:
                self.setup()
            self._check_idle()
            self.conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
            self.conn.execute("VACUUM")
