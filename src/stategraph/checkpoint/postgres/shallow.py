"""Shallow PostgreSQL savers: only the latest checkpoint of each thread and namespace.

:class:`ShallowPostgresSaver` and :class:`AsyncShallowPostgresSaver` (LangGraph's
names and semantics) keep one checkpoint row per ``(thread_id, checkpoint_ns)``: each
``put`` replaces it, channel values are kept once per channel (a channel whose version
did not change is not written again), and pending writes of replaced checkpoints are
deleted. Storage stays constant however long a thread runs, at the price of history:
``get_state_history`` returns one snapshot, ``get_tuple`` always returns the latest
checkpoint (a ``checkpoint_id`` in the config is ignored, as in LangGraph), there is no
parent, and replaying or forking an older checkpoint is impossible. Interrupts and
resuming work as with the full savers.

Tables: ``sg_shallow_checkpoints``, ``sg_shallow_blobs``, ``sg_shallow_writes``,
versioned in ``sg_shallow_migrations``; they do not touch the full savers' tables.
Every operation is one SQL statement, so one autocommit connection can be shared.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar

import psycopg

from stategraph._migrations import pending_migrations
from stategraph.checkpoint._seal import sealer_of
from stategraph.checkpoint._twins import on_loop
from stategraph.checkpoint._util import (
    check_ids,
    checkpoint_config,
    list_args,
    list_where,
    metadata_matches,
    thread_ns_id,
)
from stategraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    Config,
    Filter,
    PendingWrite,
    SerializerProtocol,
    Writes,
    dump_channel_value,
)
from stategraph.checkpoint.postgres._base import Plan, PostgresCore, accept_conn
from stategraph.checkpoint.postgres._drivers import adrive_on, drive_on
from stategraph.checkpoint.postgres._filters import filter_clauses
from stategraph.checkpoint.postgres._sql import REPLACE_ROW

__all__ = ["ShallowPostgresSaver", "AsyncShallowPostgresSaver", "MIGRATIONS"]

T = TypeVar("T")

_LOCK_KEY = 0x5347_5348_0001  # "SGSH" 1

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE IF NOT EXISTS sg_shallow_checkpoints (
            thread_id TEXT COLLATE "C" NOT NULL,
            checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
            checkpoint_id TEXT COLLATE "C" NOT NULL,
            type TEXT NOT NULL,
            checkpoint BYTEA NOT NULL,
            channel_versions JSONB NOT NULL DEFAULT '{}',
            metadata_type TEXT NOT NULL,
            metadata_blob BYTEA NOT NULL,
            metadata JSONB NOT NULL DEFAULT '{}',
            PRIMARY KEY (thread_id, checkpoint_ns)
        )""",
        """CREATE TABLE IF NOT EXISTS sg_shallow_blobs (
            thread_id TEXT COLLATE "C" NOT NULL,
            checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
            channel TEXT COLLATE "C" NOT NULL,
            version TEXT COLLATE "C" NOT NULL,
            type TEXT NOT NULL,
            blob BYTEA,
            PRIMARY KEY (thread_id, checkpoint_ns, channel)
        )""",
        """CREATE TABLE IF NOT EXISTS sg_shallow_writes (
            thread_id TEXT COLLATE "C" NOT NULL,
            checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
            checkpoint_id TEXT COLLATE "C" NOT NULL,
            task_id TEXT COLLATE "C" NOT NULL,
            idx INTEGER NOT NULL,
            channel TEXT NOT NULL,
            type TEXT NOT NULL,
            blob BYTEA NOT NULL,
            task_path TEXT COLLATE "C" NOT NULL DEFAULT '',
            ord INTEGER NOT NULL,
            seq BIGINT NOT NULL,
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
        )""",
        "CREATE SEQUENCE IF NOT EXISTS sg_shallow_writes_seq",
    ),
)
"""Schema migrations; migration ``i`` brings the schema to version ``i + 1``."""

_MIGRATIONS_TABLE = "CREATE TABLE IF NOT EXISTS sg_shallow_migrations (v INTEGER PRIMARY KEY)"

_PUT = f"""
WITH cp AS (
    INSERT INTO sg_shallow_checkpoints (thread_id, checkpoint_ns, checkpoint_id, type,
        checkpoint, channel_versions, metadata_type, metadata_blob, metadata)
    VALUES (%(thread_id)s, %(ns)s, %(checkpoint_id)s, %(type)s, %(checkpoint)s,
        %(channel_versions)s::jsonb, %(metadata_type)s, %(metadata_blob)s, %(metadata)s::jsonb)
    ON CONFLICT (thread_id, checkpoint_ns) DO UPDATE SET
        checkpoint_id = excluded.checkpoint_id, {REPLACE_ROW}
),
new_blobs AS (
    INSERT INTO sg_shallow_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT %(thread_id)s, %(ns)s, b.channel, b.version, b.type, b.blob
    FROM unnest(%(channels)s::text[], %(versions)s::text[], %(types)s::text[],
                %(blobs)s::bytea[]) AS b(channel, version, type, blob)
    ON CONFLICT (thread_id, checkpoint_ns, channel) DO UPDATE SET
        version = excluded.version, type = excluded.type, blob = excluded.blob
),
old_writes AS (
    DELETE FROM sg_shallow_writes
    WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(ns)s
      AND checkpoint_id <> %(checkpoint_id)s
)
DELETE FROM sg_shallow_blobs
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(ns)s
  AND NOT (channel = ANY(%(kept)s::text[]))
"""
"""Replace the thread's checkpoint, upsert the changed channels, drop the pending
writes of the replaced checkpoint and the values of channels it no longer has."""

_PUT_WRITES = """
WITH call AS MATERIALIZED (SELECT nextval('sg_shallow_writes_seq') AS seq)
INSERT INTO sg_shallow_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx,
    channel, type, blob, task_path, seq, ord)
SELECT %(thread_id)s, %(ns)s, %(checkpoint_id)s, %(task_id)s, w.idx, w.channel, w.type,
    w.blob, %(task_path)s, call.seq, w.ord
FROM call, unnest(%(idxs)s::int[], %(channels)s::text[], %(types)s::text[],
                  %(blobs)s::bytea[], %(ords)s::int[]) AS w(idx, channel, type, blob, ord)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
    channel = excluded.channel, type = excluded.type, blob = excluded.blob,
    task_path = excluded.task_path
WHERE sg_shallow_writes.idx < 0
"""

_SELECT = """
SELECT p.thread_id, p.checkpoint_ns, p.checkpoint_id, p.type, p.checkpoint,
    p.metadata_type, p.metadata_blob,
    b.channels, b.types, b.blobs, w.task_ids, w.channels, w.types, w.blobs, b.versions
FROM sg_shallow_checkpoints AS p
CROSS JOIN LATERAL (
    SELECT array_agg(bl.channel ORDER BY bl.channel) AS channels,
           array_agg(bl.type ORDER BY bl.channel) AS types,
           array_agg(bl.blob ORDER BY bl.channel) AS blobs,
           array_agg(bl.version ORDER BY bl.channel) AS versions
    FROM sg_shallow_blobs AS bl
    WHERE bl.thread_id = p.thread_id AND bl.checkpoint_ns = p.checkpoint_ns
      AND bl.version = p.channel_versions ->> bl.channel AND bl.type <> 'empty'
) AS b
CROSS JOIN LATERAL (
    SELECT array_agg(wr.task_id ORDER BY wr.task_path, wr.task_id, wr.seq, wr.ord) AS task_ids,
           array_agg(wr.channel ORDER BY wr.task_path, wr.task_id, wr.seq, wr.ord) AS channels,
           array_agg(wr.type ORDER BY wr.task_path, wr.task_id, wr.seq, wr.ord) AS types,
           array_agg(wr.blob ORDER BY wr.task_path, wr.task_id, wr.seq, wr.ord) AS blobs
    FROM sg_shallow_writes AS wr
    WHERE wr.thread_id = p.thread_id AND wr.checkpoint_ns = p.checkpoint_ns
      AND wr.checkpoint_id = p.checkpoint_id
) AS w
"""

_DELETE_THREAD = """
WITH w AS (DELETE FROM sg_shallow_writes WHERE thread_id = %(thread_id)s),
     b AS (DELETE FROM sg_shallow_blobs WHERE thread_id = %(thread_id)s)
DELETE FROM sg_shallow_checkpoints WHERE thread_id = %(thread_id)s
"""


def _write(sql: str, params: Any, result: T) -> Plan[T]:
    """A plan of one statement without rows, returning ``result``."""
    yield (sql, params)
    return result


class _ShallowCore(PostgresCore):
    """Statements and row decoding shared by the sync and async shallow savers."""

    @staticmethod
    def stored_body(body: dict[str, Any]) -> Any:
        """What is serialized of a checkpoint without its values (as it is)."""
        return body

    def values_params(
        self, thread_id: str, ns: str, values: dict[str, Any], new_versions: ChannelVersions
    ) -> dict[str, Any]:
        """The value parameters of the put statement: one value per channel in
        ``new_versions`` (``"empty"`` when ``values`` lacks it), kept whole."""
        channels: list[str] = []
        versions: list[str] = []
        types: list[str] = []
        blobs: list[bytes | None] = []
        sealer = sealer_of(self.serde)
        for channel, version in new_versions.items():
            channels.append(channel)
            versions.append(str(version))
            if channel not in values:
                types.append("empty")
                blobs.append(None)
                continue
            typed = dump_channel_value(self.serde, channel, values[channel])
            if sealer is not None:
                typed = sealer.seal(("b", thread_id, ns, channel, str(version)), typed)
            types.append(typed[0])
            blobs.append(typed[1])
        return {"channels": channels, "versions": versions, "types": types, "blobs": blobs}

    def shallow_row(self, row: Sequence[Any]) -> CheckpointTuple:
        """A tuple from a row of the select statement (no parent: history is not kept)."""
        thread_id, ns, checkpoint_id, ctype, cbytes, mtype, mbytes = row[:7]
        bchannels, btypes, bblobs, wtasks, wchannels, wtypes, wblobs = row[7:14]
        loads = self.serde.loads_typed
        sealer = sealer_of(self.serde)
        if sealer is not None:
            ctype, cbytes = sealer.unseal(("c", thread_id, ns, checkpoint_id), (ctype, cbytes))
            mtype, mbytes = sealer.unseal(("m", thread_id, ns, checkpoint_id), (mtype, mbytes))
            # the shallow row has no parent column: shift to the full saver's layout
            full = (thread_id, ns, checkpoint_id, None, *row[3:])
            btypes, bblobs = self._unseal_values(sealer, full, btypes, bblobs, row[14])
            wtypes, wblobs = self._unseal_writes(sealer, full, wtasks, wchannels, wtypes, wblobs)
        checkpoint: Checkpoint = loads((ctype, cbytes))
        checkpoint["channel_values"] = {
            channel: loads((vtype, blob))
            for channel, vtype, blob in zip(
                bchannels or (), btypes or (), bblobs or (), strict=True
            )
        }
        pending: list[PendingWrite] = [
            (task_id, channel, loads((wtype, blob)))
            for task_id, channel, wtype, blob in zip(
                wtasks or (), wchannels or (), wtypes or (), wblobs or (), strict=True
            )
        ]
        return CheckpointTuple(
            config=checkpoint_config(thread_id, ns, checkpoint_id),
            checkpoint=checkpoint,
            metadata=loads((mtype, mbytes)),
            parent_config=None,
            pending_writes=pending,
        )

    def get_plan(self, config: Mapping[str, Any]) -> Plan[CheckpointTuple | None]:
        """``get_tuple`` (``config`` checked here, before the plan runs)."""
        return self._get_plan(self.get_statement(config, type(self).__name__))

    def _get_plan(self, statement: tuple[str, list[Any]]) -> Plan[CheckpointTuple | None]:
        rows = yield statement
        return self.shallow_row(rows[0]) if rows else None

    def list_plan(
        self, config: Mapping[str, Any] | None, filter: Any, before: Any, limit: Any
    ) -> Plan[list[CheckpointTuple]]:
        """``list``: one statement, decoded and filtered (arguments checked here)."""
        sql, params, filter, exact, limit = self.list_statement(config, filter, before, limit)
        return self._list_plan((sql, params), filter, exact, limit)

    def _list_plan(
        self, statement: tuple[str, list[Any]], filter: Any, exact: bool, limit: int | None
    ) -> Plan[list[CheckpointTuple]]:
        rows = yield statement
        return self.take(rows, filter, exact, limit)

    def put_plan(
        self, config: Config, checkpoint: Checkpoint, meta: CheckpointMetadata, new: ChannelVersions
    ) -> Plan[dict[str, Any]]:
        """``put`` (values serialized here, before the plan runs)."""
        params = self.put_params(config, checkpoint, meta, new)
        params["kept"] = list(checkpoint["channel_versions"])
        done = checkpoint_config(params["thread_id"], params["ns"], checkpoint["id"])
        return _write(_PUT, params, done)

    @staticmethod
    def put_writes_plan(params: dict[str, Any] | None) -> Plan[None] | None:
        """``put_writes``, given :meth:`put_writes_params` (``None``: nothing to save,
        no I/O)."""
        return None if params is None else _write(_PUT_WRITES, params, None)

    @staticmethod
    def delete_plan(thread_id: str, name: str) -> Plan[None]:
        """``delete_thread`` (``name``: the method called, for the error)."""
        check_ids(name, thread_id=thread_id)
        return _write(_DELETE_THREAD, {"thread_id": str(thread_id)}, None)

    @staticmethod
    def get_statement(config: Mapping[str, Any], owner: str) -> tuple[str, list[Any]]:
        """The latest checkpoint of the config's thread and namespace."""
        thread_id, ns, _ = thread_ns_id(config, f"{owner}.get_tuple")
        return _SELECT + " WHERE p.thread_id = %s AND p.checkpoint_ns = %s", [thread_id, ns]

    @staticmethod
    def list_statement(
        config: Mapping[str, Any] | None, filter: Any, before: Any, limit: Any
    ) -> tuple[str, list[Any], dict[str, Any] | None, bool, int | None]:
        """``(sql, params, filter, exact, limit)`` for ``list``."""
        config, filter, before, limit = list_args(config, filter, before, limit)
        where, params = list_where(config, before, "%s", "p.")
        clauses, fparams, exact = filter_clauses(filter)
        where += [c.replace("metadata @>", "p.metadata @>") for c in clauses]
        params += fparams
        sql = _SELECT + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY p.checkpoint_id DESC, p.thread_id DESC, p.checkpoint_ns DESC"
        if limit is not None and exact:
            sql += f" LIMIT {max(int(limit), 0)}"
        return sql, params, filter, exact, limit

    def take(
        self, rows: Sequence[Sequence[Any]], filter: Any, exact: bool, limit: int | None
    ) -> list[CheckpointTuple]:
        """Decode listed rows, checking in Python what SQL could not decide."""
        out: list[CheckpointTuple] = []
        if limit is not None and limit <= 0:
            return out
        for row in rows:
            item = self.shallow_row(row)
            if not exact and not metadata_matches(item.metadata, filter):
                continue
            out.append(item)
            if limit is not None and len(out) >= limit:
                break
        return out


def _setup_plan() -> Plan[None]:
    """Create or migrate the shallow tables (run in one transaction holding the
    shallow setup lock)."""
    yield (f"SELECT pg_advisory_xact_lock({_LOCK_KEY})", None)
    yield (_MIGRATIONS_TABLE, None)
    rows = yield ("SELECT COALESCE(MAX(v), 0) FROM sg_shallow_migrations", None)
    version = int(rows[0][0]) if rows else 0
    for v in pending_migrations("The shallow saver schema", version, MIGRATIONS):
        for statement in MIGRATIONS[v]:
            yield (statement, None)
        yield ("INSERT INTO sg_shallow_migrations (v) VALUES (%s)", (v + 1,))


class ShallowPostgresSaver(_ShallowCore):
    """Keeps only the latest checkpoint per thread and namespace (see the module doc).

    Takes a ``psycopg.Connection`` in autocommit mode or a ``psycopg_pool.ConnectionPool``.
    """

    def __init__(self, conn: Any, *, serde: SerializerProtocol | None = None) -> None:
        """Wrap ``conn`` (connection or pool); ``serde`` defaults to ``JsonPlusSerializer()``."""
        super().__init__(serde=serde)
        self.conn: Any
        self.pool: Any
        self.conn, self.pool = accept_conn(type(self).__name__, conn, psycopg.Connection)
        self.lock = threading.Lock()
        self.is_setup = False

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str) -> Iterator[ShallowPostgresSaver]:
        """Connect to ``conn_string`` (autocommit), yield a saver, then close."""
        with psycopg.connect(conn_string, autocommit=True) as conn:
            yield cls(conn)

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        if self.pool is not None:
            with self.pool.connection() as conn:
                yield conn
        else:
            yield self.conn

    def setup(self) -> None:
        """Create or migrate the tables (idempotent; runs on first use)."""
        with self.lock:
            if self.is_setup:
                return
            with self._connection() as conn:
                drive_on(conn, _setup_plan(), transaction=True)
            self.is_setup = True

    def _run_plan(self, plan: Plan[T]) -> T:
        if not self.is_setup:
            self.setup()
        with self._connection() as conn:
            return drive_on(conn, plan)

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """The latest checkpoint of the thread and namespace (``checkpoint_id`` ignored)."""
        return self._run_plan(self.get_plan(config))

    def _list(
        self, config: Config | None, filter: Filter, before: Config | None, limit: int | None
    ) -> Iterator[CheckpointTuple]:
        """``list``: the latest checkpoint of each matching thread/namespace, newest first."""
        yield from self._run_plan(self.list_plan(config, filter, before, limit))

    def _put(
        self, config: Config, checkpoint: Checkpoint, meta: CheckpointMetadata, new: ChannelVersions
    ) -> dict[str, Any]:
        """``put``: replace the thread's checkpoint with ``checkpoint``."""
        return self._run_plan(self.put_plan(config, checkpoint, meta, new))

    def _put_writes(self, config: Config, writes: Writes, task_id: str, task_path: str) -> None:
        """``put_writes``: a task's pending writes, against the current checkpoint."""
        plan = self.put_writes_plan(self.put_writes_params(config, writes, task_id, task_path))
        if plan is not None:
            self._run_plan(plan)

    def delete_thread(self, thread_id: str) -> None:
        """Delete the thread's checkpoints, values and writes (every namespace)."""
        self._run_plan(self.delete_plan(thread_id, "delete_thread"))


class AsyncShallowPostgresSaver(_ShallowCore):
    """The asyncio twin of :class:`ShallowPostgresSaver` (``psycopg.AsyncConnection`` or
    ``psycopg_pool.AsyncConnectionPool``); its sync methods work from other threads."""

    def __init__(self, conn: Any, *, serde: SerializerProtocol | None = None) -> None:
        """Wrap ``conn`` (async connection or pool)."""
        import asyncio

        super().__init__(serde=serde)
        self.conn: Any
        self.pool: Any
        self.conn, self.pool = accept_conn(type(self).__name__, conn, psycopg.AsyncConnection)
        self.is_setup = False
        try:
            self.loop: Any = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, conn_string: str) -> AsyncIterator[AsyncShallowPostgresSaver]:
        """Connect to ``conn_string`` (autocommit), yield a saver, then close."""
        async with await psycopg.AsyncConnection.connect(conn_string, autocommit=True) as conn:
            yield cls(conn)

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        if self.pool is not None:
            async with self.pool.connection() as conn:
                yield conn
        else:
            yield self.conn

    async def setup(self) -> None:
        """Create or migrate the tables (idempotent; runs on first use)."""
        if self.is_setup:
            return
        async with self._connection() as conn:
            await adrive_on(conn, _setup_plan(), transaction=True)
        self.is_setup = True

    async def _run_plan(self, plan: Plan[T]) -> T:
        import asyncio

        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        if not self.is_setup:
            await self.setup()
        async with self._connection() as conn:
            return await adrive_on(conn, plan)

    async def aget_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """The latest checkpoint of the thread and namespace (``checkpoint_id`` ignored)."""
        return await self._run_plan(self.get_plan(config))

    async def _alist(
        self, config: Config | None, filter: Filter, before: Config | None, limit: int | None
    ) -> AsyncIterator[CheckpointTuple]:
        """``alist``: the latest checkpoint of each matching thread/namespace, newest first."""
        for item in await self._run_plan(self.list_plan(config, filter, before, limit)):
            yield item

    async def _aput(
        self, config: Config, checkpoint: Checkpoint, meta: CheckpointMetadata, new: ChannelVersions
    ) -> dict[str, Any]:
        """``aput``: replace the thread's checkpoint with ``checkpoint``."""
        return await self._run_plan(self.put_plan(config, checkpoint, meta, new))

    async def _aput_writes(
        self, config: Config, writes: Writes, task_id: str, task_path: str
    ) -> None:
        """``aput_writes``: a task's pending writes, against the current checkpoint."""
        plan = self.put_writes_plan(self.put_writes_params(config, writes, task_id, task_path))
        if plan is not None:
            await self._run_plan(plan)

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete the thread's checkpoints, values and writes (every namespace)."""
        await self._run_plan(self.delete_plan(thread_id, "adelete_thread"))

    # -- sync API: from other threads while the event loop runs -------------------

    def _sync(self, name: str, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run the coroutine ``make()`` on the saver's event loop (from another thread)
        and wait for it."""
        import asyncio

        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if self.loop is None or running is self.loop:
            raise asyncio.InvalidStateError(
                f"Synchronous {name}() of {type(self).__name__} cannot run on the event "
                f"loop's thread: use 'await saver.a{name}(...)', or call {name}() from "
                f"another thread while the loop runs."
            )
        return asyncio.run_coroutine_threadsafe(make(), self.loop).result()

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """Sync :meth:`aget_tuple` (from another thread)."""
        return self._sync("get_tuple", lambda: self.aget_tuple(config))

    def _list(
        self, config: Config | None, filter: Filter, before: Config | None, limit: int | None
    ) -> Iterator[CheckpointTuple]:
        """``list``: :meth:`alist`'s items, read on the saver's event loop (from another
        thread)."""

        async def collect() -> list[CheckpointTuple]:
            return [
                item async for item in self.alist(config, filter=filter, before=before, limit=limit)
            ]

        return iter(self._sync("list", collect))

    _put = on_loop(_aput, "put")
    _put_writes = on_loop(_aput_writes, "put_writes")

    def delete_thread(self, thread_id: str) -> None:
        """Sync :meth:`adelete_thread` (from another thread)."""
        check_ids("delete_thread", thread_id=thread_id)
        self._sync("delete_thread", lambda: self.adelete_thread(thread_id))
