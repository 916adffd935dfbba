"""``SqliteSaver``: the embedded, durable checkpoint saver (one SQLite file).

Tables (see ``_schema.py``): ``checkpoints`` (one row per checkpoint, without channel
values), ``blobs`` (channel values, once per ``(channel, version)``: an unchanged
channel is never stored again, an empty one not at all), ``writes`` (pending writes),
``items`` (interned list elements) and ``schema_migrations``.

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
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from stategraph.checkpoint._body_delta import Keyframes
from stategraph.checkpoint._compact import pack_checkpoint
from stategraph.checkpoint._ids import next_string_version
from stategraph.checkpoint._intern import Resolver
from stategraph.checkpoint._list_delta import (
    DELTA_TYPE,
    ListDeltaCodec,
    Pending,
    delta_header,
)
from stategraph.checkpoint._retention import (
    Sweeper,
    TTLConfig,
    check_ttl,
)
from stategraph.checkpoint._seal import Sealer, sealer_of
from stategraph.checkpoint._util import (
    checkpoint_config,
    list_args,
    list_where,
    metadata_matches,
    thread_ns_id,
    writes_target,
)
from stategraph.checkpoint._values import StoredValues, delta_base
from stategraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    Config,
    Filter,
    PendingWrite,
    SerializerProtocol,
    get_checkpoint_metadata,
)
from stategraph.checkpoint.langgraph_import._guard import refuse_langgraph_sqlite
from stategraph.checkpoint.lease import lease_token
from stategraph.checkpoint.lease_savers import SqlLeases
from stategraph.checkpoint.lease_sql import SQLITE, Op, fence, run_sqlite
from stategraph.checkpoint.sqlite._bodies import SqliteBodies
from stategraph.checkpoint.sqlite._filters import (
    JSON_METADATA,
    filter_clauses,
    load_metadata,
    metadata_json,
)
from stategraph.checkpoint.sqlite._schema import (
    check_format,
    configure,
    has_json,
    migrate,
    pack_id,
    unpack_id,
)
from stategraph.checkpoint.sqlite._statements import (
    _COLUMNS,
    _EMPTY,
    _EXISTS_CHECKPOINT,
    _INSERT_BLOB,
    _INSERT_CHECKPOINT,
    _INSERT_DELTA,
    _INSERT_ITEM,
    _INSERT_NEW_CHECKPOINT,
    _INSERT_WRITE,
    _ITEM_CHUNK,
    _PAGE,
    _SELECT_BLOB,
    _SELECT_CHAIN,
    _TOUCH,
    list_query,
)
from stategraph.checkpoint.sqlite._upkeep import SqliteUpkeep
from stategraph.constants import CONF

__all__ = ["SqliteSaver"]

BlobRow = tuple[str, str, str, str, str, bytes | None, str | None]
"""A row of ``blobs``: thread, namespace, channel, version, type, value, base."""


def _seal_blob(row: BlobRow, sealer: Sealer | None) -> BlobRow:
    """``row`` with its value sealed (when encrypting; an empty value stays NULL)."""
    if sealer is None or row[5] is None:
        return row
    return (*row[:4], *sealer.seal(("b", *row[:4]), (row[4], row[5])), row[6])


class SqliteSaver(SqliteUpkeep, SqliteBodies, SqlLeases, StoredValues, BaseCheckpointSaver[str]):
    """Checkpoint saver backed by SQLite (a file, or ``":memory:"``).

    ``SqliteSaver(conn)`` uses a connection you opened; to use it from several threads
    open it with ``check_same_thread=False`` (``from_conn_string`` does). The saver sets
    WAL mode, ``busy_timeout`` and ``synchronous=NORMAL`` on it and applies its schema
    migrations on first use (or when you call :meth:`setup`). Do not leave your own
    transaction open on the connection while the saver uses it.

    The async methods run the sync ones on a worker thread; for a saver whose calls
    all go through one dedicated thread, use ``AsyncSqliteSaver``. Per-thread leases
    live in the same file (:mod:`stategraph.checkpoint.lease_sql`); a leased run's
    writes are fenced in the transaction that saves them.
    """

    _lease_dialect = SQLITE

    conn: sqlite3.Connection
    """The connection every call goes through (guarded by :attr:`lock`)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        serde: SerializerProtocol | None = None,
        delta_storage: bool = True,
        ttl: TTLConfig | None = None,
        intern_items: bool = True,
    ) -> None:
        """Wrap ``conn``; ``serde`` defaults to ``JsonPlusSerializer()``.

        ``delta_storage`` (default on) stores a new version of a list value as the
        change from the version stored before it (see the persistence guide);
        ``False`` stores every version whole. Either way every stored format is read.
        ``intern_items`` (default on) stores each large element of a list value once
        per thread (table ``items``) and refers to it by hash elsewhere; ``False``
        stores values whole (interned rows already written still read).
        ``ttl`` (``{"default_ttl": minutes, ...}``) lets :meth:`sweep` delete threads
        not written (or read) for that long.
        """
        super().__init__(serde=serde)
        self.ttl = check_ttl(ttl, type(self).__name__)
        self._sweeper: Sweeper | None = None
        self._init_values(delta_storage, intern_items)
        self.conn = conn
        self.lock = threading.RLock()
        self.is_setup = False
        self._json = False
        self._batching = False
        self._batch_open = False
        self._fenced: tuple[str, int] | None = None
        self.keyframes = Keyframes()

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
            refuse_langgraph_sqlite(self.conn, type(self).__name__)  # before any change
            configure(self.conn)
            migrate(self.conn)
            check_format(self.conn)
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
    def batch(self) -> Iterator[None]:
        """Make the calls of the block (on this thread) one write transaction: one
        commit (one sync to disk) for all of them instead of one each.

        Each call still succeeds or fails on its own: a call that raises leaves nothing
        behind while the calls before it stay in the transaction, committed when the
        block ends. Other threads using this saver wait for the block to end. If the
        final commit fails, no call of the block is saved and the error is raised.
        """
        with self.lock:
            if self._batching:
                yield
                return
            if not self.is_setup:
                self.setup()
            self._check_idle()
            conn = self.conn
            self._batching = True
            try:
                yield
            except BaseException:
                self._end_batch()
                if conn.in_transaction:
                    conn.rollback()
                raise
            begun = self._end_batch()
            if not begun:
                return  # no call left anything to commit
            if not conn.in_transaction:
                raise sqlite3.OperationalError(
                    f"{type(self).__name__}.batch: SQLite ended the batch's transaction "
                    "(after an I/O error): none of its calls was saved."
                )
            try:
                conn.commit()
            except BaseException:
                if conn.in_transaction:
                    conn.rollback()
                raise

    def _end_batch(self) -> bool:
        """Leave batch mode; returns whether the batch's transaction was begun (and
        not rolled back since)."""
        begun = self._batch_open
        self._batching = self._batch_open = False
        self._fenced = None
        return begun

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[sqlite3.Connection]:
        """Hold the lock and run the block in one transaction (``IMMEDIATE`` for
        writes, so it waits for the file's write lock up front); roll back on error.
        Inside :meth:`batch` the block is a call of the batch's transaction."""
        with self.lock:
            if self._batching:
                yield from self._batch_call()
                return
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

    def _batch_call(self) -> Iterator[sqlite3.Connection]:
        """The body of :meth:`_transaction` inside a batch. The batch's first call
        begins its transaction (``IMMEDIATE``) and, if it raises, rolls it back: there
        is nothing else in it to keep, and the next call begins it again. A later call
        runs in a savepoint, rolled back alone if it raises."""
        conn = self.conn
        if not self._batch_open:
            conn.execute("BEGIN IMMEDIATE")
            self._batch_open = True
            try:
                yield conn
            except BaseException:
                self._batch_open = False
                self._fenced = None
                if conn.in_transaction:
                    conn.rollback()
                raise
            return
        conn.execute("SAVEPOINT sg_call")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:  # (an I/O error may have ended the whole batch)
                conn.execute("ROLLBACK TO sg_call")
                conn.execute("RELEASE sg_call")
            raise
        conn.execute("RELEASE sg_call")

    def _fence(
        self,
        conn: sqlite3.Connection,
        thread_id: str,
        token: int,
        ns: str,
        checkpoint_id: str | None,
    ) -> None:
        """Stop a write of a run that lost its lease (see :func:`fence`); inside a
        batch the lease is read once per transaction, which holds the write lock from
        its first call to its commit, so no other connection can take the lease over
        in between."""
        held = (thread_id, token)
        run_sqlite(
            conn, fence(SQLITE, thread_id, token, ns, checkpoint_id, checked=self._fenced == held)
        )
        if self._batching:
            self._fenced = held

    def _lease_run(self, op: Op, single: bool = False) -> Any:
        """Run a lease operation in one write transaction (tables made on first use;
        ``single`` changes nothing here: the transaction is local and cheap)."""
        with self._transaction(write=True) as conn:
            self._fenced = None  # (the operation may change the lease a batch checked)
            if not getattr(self, "_lease_tables", False):
                for statement in SQLITE.ddl:
                    conn.execute(statement)
            result = run_sqlite(conn, op)
        self._lease_tables = True  # committed
        return result

    def _load(
        self,
        conn: sqlite3.Connection,
        row: Sequence[Any],
        memo: dict[tuple[str, Any], dict[str, Any]] | None = None,
    ) -> CheckpointTuple:
        """Build a tuple from a ``checkpoints`` row, reading its values and writes
        (``memo``: keyframe bodies already read, see :meth:`_read_body`)."""
        thread_id, ns, checkpoint_id, parent_id, ctype, cbytes, mtype, mbytes = row
        loads = self.serde.loads_typed
        sealer = sealer_of(self.serde)
        if sealer is not None:
            mtype, mbytes = sealer.unseal(("m", thread_id, ns, checkpoint_id), (mtype, mbytes))
        checkpoint: Checkpoint = self._read_body(  # type: ignore[assignment]
            conn, thread_id, ns, checkpoint_id, (ctype, cbytes), memo
        )
        values: dict[str, Any] = {}
        codec = self.delta
        if codec is not None:
            codec.serde = self.serde
        resolver = self._resolver(conn, thread_id, ns, sealer)
        found: list[tuple[str, Any, tuple[str, bytes], dict[str, tuple[str, bytes]]]] = []
        for channel, version in checkpoint["channel_versions"].items():
            blob = conn.execute(_SELECT_BLOB, (thread_id, ns, channel, str(version))).fetchone()
            if blob is None or blob[1] is None:
                continue
            if sealer is not None:
                blob = sealer.unseal(("b", thread_id, ns, channel, version), (blob[0], blob[1]))
            chain = self._prefetch_chain(conn, thread_id, ns, channel, str(version), blob)
            if sealer is not None:
                chain = {
                    v: sealer.unseal(("b", thread_id, ns, channel, v), t) for v, t in chain.items()
                }
            resolver.add((blob[0], blob[1]))
            for typed in chain.values():
                resolver.add(typed)
            found.append((channel, version, (blob[0], blob[1]), chain))
        write_rows = [
            (task_id, channel, wtype, wvalue)
            if sealer is None
            else (
                task_id,
                channel,
                *sealer.unseal(
                    ("w", thread_id, ns, checkpoint_id, task_id, channel), (wtype, wvalue)
                ),
            )
            for task_id, channel, wtype, wvalue in conn.execute(
                "SELECT task_id, channel, type, value FROM writes WHERE thread_id = ? "
                "AND checkpoint_ns = ? AND checkpoint_id = ? ORDER BY seq",
                (thread_id, ns, checkpoint_id),
            ).fetchall()
        ]
        for _, _, wtype, wvalue in write_rows:
            resolver.add((wtype, wvalue))
        for channel, version, blob, chain in found:
            if codec is None or blob[0] == _EMPTY:
                values[channel] = resolver.loads(blob, channel)
                continue

            def fetch(
                v: Any, _c: str = channel, _chain: dict[str, tuple[str, bytes]] = chain
            ) -> tuple[str, bytes] | None:
                known = _chain.get(str(v))
                if known is not None:
                    return known
                row = conn.execute(_SELECT_BLOB, (thread_id, ns, _c, str(v))).fetchone()
                if row is None or row[1] is None:
                    return None
                if sealer is not None:
                    return sealer.unseal(("b", thread_id, ns, _c, v), (row[0], row[1]))
                return row[0], row[1]

            values[channel] = codec.decode(
                (thread_id, ns, channel), str(version), blob, fetch, resolver.loader(channel)
            )
        checkpoint["channel_values"] = values
        pending: list[PendingWrite] = [
            (task_id, channel, resolver.loads((wtype, value), channel))
            for task_id, channel, wtype, value in write_rows
        ]
        return CheckpointTuple(
            config=checkpoint_config(thread_id, ns, checkpoint_id),
            checkpoint=checkpoint,
            metadata=load_metadata(loads, mtype, mbytes),
            parent_config=(
                None
                if parent_id is None
                else checkpoint_config(thread_id, ns, unpack_id(parent_id))
            ),
            pending_writes=pending,
        )

    def _resolver(
        self, conn: sqlite3.Connection, thread_id: str, ns: str, sealer: Sealer | None = None
    ) -> Resolver:
        """A resolver reading the interned items of ``(thread_id, ns)`` through
        ``conn`` (in the caller's transaction)."""

        def fetch(hashes: list[bytes]) -> dict[bytes, tuple[str, bytes]]:
            found: dict[bytes, tuple[str, bytes]] = {}
            for i in range(0, len(hashes), _ITEM_CHUNK):
                chunk = hashes[i : i + _ITEM_CHUNK]
                marks = ", ".join("?" * len(chunk))
                for h, t, v in conn.execute(
                    "SELECT hash, type, value FROM items WHERE thread_id = ? AND "
                    f"checkpoint_ns = ? AND hash IN ({marks})",
                    (thread_id, ns, *chunk),
                ):
                    key = bytes(h)
                    found[key] = (
                        (t, v)
                        if sealer is None
                        else sealer.unseal(("i", thread_id, ns, key.hex()), (t, v))
                    )
            return found

        return Resolver(self.serde, thread_id, fetch)

    def _prefetch_chain(
        self,
        conn: sqlite3.Connection,
        thread_id: str,
        ns: str,
        channel: str,
        version: str,
        blob: Sequence[Any],
    ) -> dict[str, tuple[str, bytes]]:
        """The stored values a delta's chain needs, read in one statement that follows
        the ``base`` column from the delta's base down to a whole value (a version it
        does not reach, e.g. one written before that column, is read on its own).
        Empty when the value or its base is in memory already, or the blob is not a
        delta."""
        codec = self.delta
        if (
            codec is None
            or blob[0] != DELTA_TYPE
            or codec.is_cached((thread_id, ns, channel), version)
        ):
            return {}
        header = delta_header(blob[1], channel, version)
        if codec.is_cached((thread_id, ns, channel), header[1]):
            return {}
        base, root = str(header[1]), str(header[2])
        low, high = (min(base, root), max(base, root)) if header[0] == 1 else (None, None)
        return {
            v: (t, b)
            for v, t, b in conn.execute(
                _SELECT_CHAIN,
                {
                    "thread": thread_id,
                    "ns": ns,
                    "channel": channel,
                    "version": base,
                    "low": low,
                    "high": high,
                },
            )
            if b is not None
        }

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
            found = None if row is None else self._load(conn, row)
        if found is not None and self.ttl is not None and self.ttl.get("refresh_on_read", True):
            with self._transaction(write=True) as conn:
                conn.execute(_TOUCH, (thread_id, time.time()))
        return found

    def _list(
        self, config: Config | None, filter: Filter, before: Config | None, limit: int | None
    ) -> Iterator[CheckpointTuple]:
        """``list``: read in pages, each in its own short read transaction; no lock is
        held while the caller consumes them."""
        config, filter, before, limit = list_args(config, filter, before, limit)
        if limit is not None and limit <= 0:
            return
        where, params = list_where(config, before, "?")
        if not self.is_setup:
            self.setup()
        fwhere, fparams, exact = filter_clauses(filter, self._json)
        where += fwhere
        params += fparams
        conf = (config or {}).get(CONF) or {}
        whole_thread = conf.get("thread_id") is not None and "checkpoint_ns" not in conf
        remaining = limit
        last: tuple[str, str, str] | None = None
        while True:
            page = _PAGE if remaining is None or not exact else min(_PAGE, remaining)
            conds = (
                [*where, "(checkpoint_id, thread_id, checkpoint_ns) < (?, ?, ?)"] if last else where
            )
            sql = list_query(conds, whole_thread)
            args = [*params, *(last or ())] * (2 if whole_thread else 1) + [page]
            items: list[CheckpointTuple] = []
            memo: dict[tuple[str, Any], dict[str, Any]] = {}
            with self._transaction(write=False) as conn:
                rows = conn.execute(sql, args).fetchall()
                sealer = sealer_of(self.serde)
                for row in rows:
                    if not exact:
                        md = (row[6], row[7])
                        if sealer is not None:
                            md = sealer.unseal(("m", row[0], row[1], row[2]), md)
                        if not metadata_matches(load_metadata(self.serde.loads_typed, *md), filter):
                            continue
                    items.append(self._load(conn, row, memo))
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
        blob_rows: list[BlobRow] = []
        items: dict[bytes, tuple[str, bytes]] = {}
        codec = self.delta
        pending: list[tuple[int, Pending]] = []  # (row index, entry to commit)
        for channel, version in new_versions.items():
            if channel not in values:
                continue  # an empty channel: no row (a missing row reads as empty)
            typed, entry = self._encode(
                (thread_id, ns, channel), str(version), values[channel], items
            )
            if entry is not None:
                pending.append((len(blob_rows), entry))
            base = delta_base(typed, entry)
            blob_rows.append((thread_id, ns, channel, str(version), typed[0], typed[1], base))
        key = (thread_id, ns)
        change = self.keyframes.encode(key, parent_id, body, new_versions)
        body_base = None if change is None else str(change[2])  # (its keyframe's id)
        ctype, cbytes = self.serde.dumps_typed(
            pack_checkpoint(body, ts_from_id=True) if change is None else change
        )
        plain = cbytes  # (what a keyframe's hash covers: its bytes before sealing)
        stored_metadata = get_checkpoint_metadata(config, metadata)
        mjson, json_only = metadata_json(stored_metadata)
        sealer = sealer_of(self.serde)
        if json_only and sealer is None:
            mtype, mbytes = JSON_METADATA, b""  # (metadata_json is all of it)
        else:
            mtype, mbytes = self.serde.dumps_typed(stored_metadata)
        if sealer is not None:
            ctype, cbytes = sealer.seal(("c", thread_id, ns, checkpoint["id"]), (ctype, cbytes))
            mtype, mbytes = sealer.seal(("m", thread_id, ns, checkpoint["id"]), (mtype, mbytes))
        row = (
            thread_id,
            ns,
            checkpoint["id"],
            pack_id(parent_id),
            ctype,
            cbytes,
            mtype,
            mbytes,
            mjson,
            body_base,
        )
        token = lease_token(config)
        with self._transaction(write=True) as conn:
            if token is not None:
                self._fence(conn, thread_id, token, ns, checkpoint["id"])
            if body_base is not None:
                found = conn.execute(_EXISTS_CHECKPOINT, (thread_id, ns, body_base)).fetchone()
                if found is None or not found[0]:
                    # the keyframe is gone (deleted by another connection): store whole
                    change = body_base = None
                    typed = self.serde.dumps_typed(pack_checkpoint(body, ts_from_id=True))
                    plain = typed[1]
                    if sealer is not None:
                        typed = sealer.seal(("c", thread_id, ns, checkpoint["id"]), typed)
                    row = (*row[:4], typed[0], typed[1], *row[6:9], None)
            whole = self._insert_deltas(conn, values, items, blob_rows, pending, sealer)
            if items:
                conn.executemany(_INSERT_ITEM, self._item_rows(thread_id, ns, items, sealer))
            if whole:
                conn.executemany(_INSERT_BLOB, [_seal_blob(r, sealer) for r in whole])
            try:
                conn.execute(_INSERT_NEW_CHECKPOINT, row)
            except sqlite3.IntegrityError:
                if not conn.execute(_EXISTS_CHECKPOINT, (thread_id, ns, row[2])).fetchone():
                    raise
                # saved again under its id: the bodies stored against it go whole first
                self.keyframes.drop(key, checkpoint["id"])
                for ns_, cid, ctype_, cbytes_ in conn.execute(
                    "SELECT checkpoint_ns, checkpoint_id, type, checkpoint FROM checkpoints "
                    "WHERE thread_id = ? AND checkpoint_ns = ? AND body_base = ?",
                    (thread_id, ns, checkpoint["id"]),
                ).fetchall():
                    self._store_whole(conn, thread_id, ns_, cid, (ctype_, cbytes_))
                conn.execute(_INSERT_CHECKPOINT, row)
            if self.ttl is not None:
                conn.execute(_TOUCH, (thread_id, time.time()))
        if codec is not None:
            for _, entry in pending:
                codec.commit(entry)
        self.keyframes.commit(key, checkpoint["id"], body, change, plain)
        return checkpoint_config(thread_id, ns, checkpoint["id"])

    def _insert_deltas(
        self,
        conn: sqlite3.Connection,
        values: dict[str, Any],
        items: dict[bytes, tuple[str, bytes]],
        blob_rows: list[BlobRow],
        pending: list[tuple[int, Pending]],
        sealer: Sealer | None,
    ) -> list[BlobRow]:
        """Insert the rows of ``blob_rows`` that are deltas, each only if its base is
        stored; returns the rows left to insert (the values stored whole).

        A delta whose base is gone (deleted or pruned by another connection) is
        encoded whole instead: its row is replaced in the returned list and its entry
        in ``pending`` becomes a snapshot's."""
        deltas = {at for at, entry in pending if entry.base is not None}
        if not deltas:
            return blob_rows
        for i, (at, entry) in enumerate(pending):
            if at not in deltas:
                continue
            r = blob_rows[at]
            sealed = _seal_blob(r, sealer)
            if conn.execute(_INSERT_DELTA, (*sealed, r[0], r[1], r[2], r[6])).rowcount:
                continue  # stored on its base
            if conn.execute(_SELECT_BLOB, (r[0], r[1], r[2], entry.base)).fetchone() is not None:
                continue  # this version was stored before (kept as it is)
            channel = r[2]
            vtype, vbytes = self._dump(channel, values[channel], items)
            blob_rows[at] = (*r[:4], vtype, vbytes, None)
            pending[i] = (at, ListDeltaCodec.as_snapshot(entry, (vtype, vbytes)))
            deltas.discard(at)
        return [r for at, r in enumerate(blob_rows) if at not in deltas]

    def put_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save task ``task_id``'s writes against ``config``'s checkpoint in one
        transaction: special channels replace, regular writes are kept only if absent."""
        thread_id, ns, checkpoint_id = writes_target(config, f"{type(self).__name__}.put_writes")
        items: dict[bytes, tuple[str, bytes]] = {}
        prepared = [
            (
                WRITES_IDX_MAP.get(channel, i),
                channel,
                *self._dump(channel, value, items),
            )
            for i, (channel, value) in enumerate(writes)
        ]
        if not prepared:
            return
        token = lease_token(config)
        sealer = sealer_of(self.serde)
        rows: list[tuple[Any, ...]] = []
        for idx, channel, wtype, wbytes in prepared:
            if sealer is not None:
                wtype, wbytes = sealer.seal(
                    ("w", thread_id, ns, checkpoint_id, task_id, channel), (wtype, wbytes)
                )
            # (the statement's last three parameters repeat the first three)
            head = (thread_id, ns, checkpoint_id)
            rows.append((*head, task_id, idx, channel, wtype, wbytes, task_path, *head))
        with self._transaction(write=True) as conn:
            if token is not None:
                self._fence(conn, thread_id, token, ns, None)
            if items:
                conn.executemany(_INSERT_ITEM, self._item_rows(thread_id, ns, items, sealer))
            conn.executemany(_INSERT_WRITE, rows)
            if self.ttl is not None:
                conn.execute(_TOUCH, (thread_id, time.time()))

    @staticmethod
    def _item_rows(
        thread_id: str, ns: str, items: dict[bytes, tuple[str, bytes]], sealer: Sealer | None
    ) -> Sequence[tuple[Any, ...]]:
        """Rows of the ``items`` table for interned ``items``, sealed if encrypting."""
        if sealer is None:
            return [(thread_id, ns, h, t, v) for h, (t, v) in items.items()]
        return [
            (thread_id, ns, h, *sealer.seal(("i", thread_id, ns, h.hex()), typed))
            for h, typed in items.items()
        ]

    def _task_paths(self, saved: CheckpointTuple) -> dict[str, str]:
        """Task id -> saved task path of the pending writes of ``saved``."""
        conf = saved.config[CONF]
        with self._transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT task_id, task_path FROM writes WHERE thread_id = ? AND "
                "checkpoint_ns = ? AND checkpoint_id = ?",
                (conf["thread_id"], conf.get("checkpoint_ns", ""), conf["checkpoint_id"]),
            ).fetchall()
        return {task_id: path for task_id, path in rows}

    def get_next_version(self, current: str | int | float | None, channel: None) -> str:
        """Same string scheme as ``InMemorySaver``: ``f"{step:032}.{16 hex digits}"``,
        so forks of one parent never collide on ``(channel, version)``."""
        return next_string_version(current)
