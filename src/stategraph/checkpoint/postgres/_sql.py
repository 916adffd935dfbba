"""PostgreSQL schema and statements shared by ``PostgresSaver`` and ``AsyncPostgresSaver``.

Migrations are numbered by their position in :data:`MIGRATIONS` and recorded in
``sg_checkpoint_migrations(v)``. ``setup()`` applies the missing ones in order inside
one transaction that first takes :data:`SETUP_LOCK_KEY` with ``pg_advisory_xact_lock``,
so processes setting up the same database at once apply each migration exactly once.
Never edit a released migration: append one.

Every saver operation other than ``setup`` is *one* SQL statement (data-modifying
``WITH`` clauses where several tables change). A statement is atomic on its own and
sees one snapshot, so the savers need no explicit transaction, and one connection in
autocommit mode can be shared by threads (or tasks) without their statements ending
up inside each other's transactions. Text columns use the ``"C"`` collation so that
ordering (``list`` newest first, ``before``) is plain code-point order, whatever the
database's default collation.

Tables are unqualified: they live in the first schema of the connection's
``search_path``.
"""

from __future__ import annotations

__all__ = [
    "MIGRATIONS",
    "SETUP_LOCK_KEY",
    "CREATE_MIGRATIONS_TABLE",
    "MIGRATIONS_TABLE_EXISTS",
    "MAX_VERSION",
    "LOCK_SETUP",
    "INSERT_VERSION",
    "REPLACE_ROW",
    "PUT",
    "PUT_WRITES",
    "VALUES_FORMAT",
    "CHECK_FORMAT",
    "FETCH_CHAIN",
    "EXISTING_BLOBS",
    "DELETE_THREAD",
    "select_page",
]

SETUP_LOCK_KEY = 0x5347_4350_0001
"""``pg_advisory_xact_lock`` key serializing concurrent ``setup()`` calls ("SGCP" 1)."""

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # v0: checkpoints, without channel values. ``checkpoint`` is the serialized body;
    # ``channel_versions`` (channel -> version text) lets one statement find the blobs;
    # ``metadata_type``/``metadata_blob`` round-trip the metadata exactly, and
    # ``metadata`` is its JSON view (the JSON-representable keys) for filters and SQL.
    (
        """CREATE TABLE IF NOT EXISTS sg_checkpoints (
            thread_id TEXT COLLATE "C" NOT NULL,
            checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
            checkpoint_id TEXT COLLATE "C" NOT NULL,
            parent_checkpoint_id TEXT COLLATE "C",
            type TEXT NOT NULL,
            checkpoint BYTEA NOT NULL,
            channel_versions JSONB NOT NULL DEFAULT '{}',
            metadata_type TEXT NOT NULL,
            metadata_blob BYTEA NOT NULL,
            metadata JSONB NOT NULL DEFAULT '{}',
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
        )""",
    ),
    # v1: channel values, once per (thread, namespace, channel, version).
    # ``blob`` NULL with type 'empty' marks a channel that has a version but no value.
    (
        """CREATE TABLE IF NOT EXISTS sg_checkpoint_blobs (
            thread_id TEXT COLLATE "C" NOT NULL,
            checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
            channel TEXT COLLATE "C" NOT NULL,
            version TEXT COLLATE "C" NOT NULL,
            type TEXT NOT NULL,
            blob BYTEA,
            PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
        )""",
    ),
    # v2: pending writes. ``(seq, ord)`` orders them: ``seq`` is drawn once per
    # put_writes call from the sequence, ``ord`` is the write's position in the call.
    (
        "CREATE SEQUENCE IF NOT EXISTS sg_checkpoint_writes_seq AS BIGINT",
        """CREATE TABLE IF NOT EXISTS sg_checkpoint_writes (
            thread_id TEXT COLLATE "C" NOT NULL,
            checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
            checkpoint_id TEXT COLLATE "C" NOT NULL,
            task_id TEXT COLLATE "C" NOT NULL,
            idx INTEGER NOT NULL,
            channel TEXT NOT NULL,
            type TEXT NOT NULL,
            blob BYTEA NOT NULL,
            task_path TEXT NOT NULL DEFAULT '',
            seq BIGINT NOT NULL,
            ord INTEGER NOT NULL,
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
        )""",
    ),
    # v3: list one thread across namespaces, or every thread, newest first.
    (
        "CREATE INDEX IF NOT EXISTS sg_checkpoints_thread_id_idx "
        "ON sg_checkpoints (thread_id, checkpoint_id)",
        "CREATE INDEX IF NOT EXISTS sg_checkpoints_checkpoint_id_idx "
        "ON sg_checkpoints (checkpoint_id)",
    ),
    # v4: the storage format of the channel values (see ``CHECK_FORMAT``): format 2
    # adds list values stored as deltas (``_list_delta``) to the whole values of 1.
    (
        "CREATE TABLE IF NOT EXISTS sg_checkpoint_format (name TEXT PRIMARY KEY, "
        "version INTEGER NOT NULL)",
        "INSERT INTO sg_checkpoint_format (name, version) VALUES ('channel_values', 2) "
        "ON CONFLICT (name) DO NOTHING",
    ),
    # v5: when each thread was last written (or read), for the savers' ttl setting.
    (
        """CREATE TABLE IF NOT EXISTS sg_checkpoint_thread_ttl (
            thread_id TEXT COLLATE "C" PRIMARY KEY,
            touched_at DOUBLE PRECISION NOT NULL
        )""",
    ),
    # v6: format 3 packs checkpoint bodies (``_compact``) and delta headers (delta
    # format 2); this release still reads everything formats 1 and 2 wrote.
    ("UPDATE sg_checkpoint_format SET version = 3 WHERE name = 'channel_values' AND version < 3",),
    # v7: the version a delta is based on, copied out of its header so that one
    # recursive statement reads a whole delta chain (FETCH_CHAIN). Only a hint: NULL
    # (rows written before, whole values) or a base since deleted ends the walk, and
    # decoding always follows the headers.
    ('ALTER TABLE sg_checkpoint_blobs ADD COLUMN IF NOT EXISTS base TEXT COLLATE "C"',),
    # v8: format 4 interns the large elements of list values (``_intern``): each is
    # stored once per thread in ``sg_checkpoint_items`` and referred to by its 16-byte
    # hash from the blobs and writes of type ``sg-interned`` (or deltas whose items are).
    (
        """CREATE TABLE IF NOT EXISTS sg_checkpoint_items (
            thread_id TEXT COLLATE "C" NOT NULL,
            checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
            hash BYTEA NOT NULL,
            type TEXT NOT NULL,
            value BYTEA NOT NULL,
            PRIMARY KEY (thread_id, checkpoint_ns, hash)
        )""",
        "UPDATE sg_checkpoint_format SET version = 4 WHERE name = 'channel_values' AND version < 4",
    ),
)

VALUES_FORMAT = 4
"""The newest storage format this release reads and writes (see the SQLite saver's
``VALUES_FORMAT`` for what each adds)."""
CHECK_FORMAT = "SELECT version FROM sg_checkpoint_format WHERE name = 'channel_values'"

FETCH_CHAIN = """
WITH RECURSIVE chain(version, type, blob, base) AS (
    SELECT version, type, blob, base FROM sg_checkpoint_blobs
    WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(ns)s AND channel = %(channel)s
        AND version = %(version)s
    UNION
    SELECT b.version, b.type, b.blob, b.base FROM sg_checkpoint_blobs AS b
    JOIN chain AS c ON b.thread_id = %(thread_id)s AND b.checkpoint_ns = %(ns)s
        AND b.channel = %(channel)s AND b.version = c.base
)
SELECT version, type, blob FROM chain
UNION
SELECT version, type, blob FROM sg_checkpoint_blobs
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(ns)s AND channel = %(channel)s
    AND version >= %(low)s AND version <= %(high)s
"""
"""A stored value and the values it is based on (following the ``base`` column): a
delta chain in one statement. ``low``/``high`` (NULL: none) add the values of a
version range: a chain of delta format 1 (written before the ``base`` column) is the
range between its snapshot and the delta."""

EXISTING_BLOBS = """
SELECT bl.channel, bl.version FROM sg_checkpoint_blobs AS bl
JOIN unnest(%(channels)s::text[], %(versions)s::text[]) AS w(channel, version)
    ON bl.channel = w.channel AND bl.version = w.version
WHERE bl.thread_id = %(thread_id)s AND bl.checkpoint_ns = %(ns)s
"""
"""Which of the given (channel, version) values are stored (the bases of new deltas)."""

_BASES_KEY = "hashtextextended('sg-delta-bases:' || %(thread_id)s, 0)"
LOCK_BASES_SHARED = f"SELECT pg_advisory_xact_lock_shared({_BASES_KEY})"
"""Taken by a writer of deltas, in its transaction, before it checks their bases:
no retention of the thread can delete a base between that check and the commit."""
LOCK_BASES_SHARED_POS = (
    "SELECT pg_advisory_xact_lock_shared(hashtextextended('sg-delta-bases:' || %s, 0))"
)
""":data:`LOCK_BASES_SHARED` with a positional parameter (the thread id): taken by a
writer of pending writes that refer to interned items, in its transaction, so no
retention of the thread can collect an item between its reference and its commit."""
LOCK_BASES = f"SELECT pg_advisory_lock({_BASES_KEY})"
"""Taken by a retention (prune, delete_for_runs) of the thread *before* its
transaction starts (so its snapshot sees every delta committed by writers it waited
for), held until after its commit: a writer checks its bases only once it is done."""
UNLOCK_BASES = f"SELECT pg_advisory_unlock({_BASES_KEY})"
"""Release :data:`LOCK_BASES`."""

CREATE_MIGRATIONS_TABLE = (
    "CREATE TABLE IF NOT EXISTS sg_checkpoint_migrations (v INTEGER PRIMARY KEY NOT NULL)"
)
MIGRATIONS_TABLE_EXISTS = "SELECT to_regclass('sg_checkpoint_migrations') IS NOT NULL"
MAX_VERSION = "SELECT COALESCE(MAX(v), -1) FROM sg_checkpoint_migrations"
"""The highest applied migration (``-1`` when none); run only once the table exists."""
LOCK_SETUP = "SELECT pg_advisory_xact_lock(%s)"

REPEATABLE_READ = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"
"""First statement of a transaction that reads one snapshot throughout."""
INSERT_VERSION = "INSERT INTO sg_checkpoint_migrations (v) VALUES (%s)"

_NEW_ITEMS = """new_items AS (
    INSERT INTO sg_checkpoint_items (thread_id, checkpoint_ns, hash, type, value)
    SELECT %(thread_id)s, %(ns)s, i.hash, i.type, i.value
    FROM unnest(%(item_hashes)s::bytea[], %(item_types)s::text[], %(item_values)s::bytea[])
        AS i(hash, type, value)
    ON CONFLICT (thread_id, checkpoint_ns, hash) DO NOTHING
)"""

REPLACE_ROW = """type = excluded.type, checkpoint = excluded.checkpoint,
    channel_versions = excluded.channel_versions, metadata_type = excluded.metadata_type,
    metadata_blob = excluded.metadata_blob, metadata = excluded.metadata"""
"""The columns a checkpoint row saved again replaces (``ON CONFLICT DO UPDATE SET``): the
same in the full and the shallow savers' tables."""

PUT = f"""
WITH {_NEW_ITEMS}, new_blobs AS (
    INSERT INTO sg_checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob,
        base)
    SELECT %(thread_id)s, %(ns)s, b.channel, b.version, b.type, b.blob, b.base
    FROM unnest(%(channels)s::text[], %(versions)s::text[], %(types)s::text[],
                %(blobs)s::bytea[], %(bases)s::text[]) AS b(channel, version, type, blob, base)
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
)
INSERT INTO sg_checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
    type, checkpoint, channel_versions, metadata_type, metadata_blob, metadata)
VALUES (%(thread_id)s, %(ns)s, %(checkpoint_id)s, %(parent_id)s, %(type)s, %(checkpoint)s,
    %(channel_versions)s::jsonb, %(metadata_type)s, %(metadata_blob)s, %(metadata)s::jsonb)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
    parent_checkpoint_id = excluded.parent_checkpoint_id, {REPLACE_ROW}
"""
"""Save a checkpoint: its interned items and new channel values (insert-if-absent) and
its row (replace)."""

PUT_WRITES = f"""
WITH call AS MATERIALIZED (SELECT nextval('sg_checkpoint_writes_seq') AS seq), {_NEW_ITEMS}
INSERT INTO sg_checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx,
    channel, type, blob, task_path, seq, ord)
SELECT %(thread_id)s, %(ns)s, %(checkpoint_id)s, %(task_id)s, w.idx, w.channel, w.type,
    w.blob, %(task_path)s, call.seq, w.ord
FROM call, unnest(%(idxs)s::int[], %(channels)s::text[], %(types)s::text[],
                  %(blobs)s::bytea[], %(ords)s::int[]) AS w(idx, channel, type, blob, ord)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
    channel = excluded.channel,
    type = excluded.type,
    blob = excluded.blob,
    task_path = excluded.task_path
WHERE sg_checkpoint_writes.idx < 0
"""
"""Save one task's writes. On a key conflict, a special write (``idx < 0``) replaces
the stored one (keeping its place in the order); a regular write (``idx >= 0``)
leaves the stored one alone: the ``WHERE`` makes ``DO UPDATE`` a ``DO NOTHING``."""

DELETE_THREAD = """
WITH gone_writes AS (DELETE FROM sg_checkpoint_writes WHERE thread_id = %(thread_id)s),
     gone_blobs AS (DELETE FROM sg_checkpoint_blobs WHERE thread_id = %(thread_id)s),
     gone_items AS (DELETE FROM sg_checkpoint_items WHERE thread_id = %(thread_id)s)
DELETE FROM sg_checkpoints WHERE thread_id = %(thread_id)s
"""

_LOAD = """
SELECT p.thread_id, p.checkpoint_ns, p.checkpoint_id, p.parent_checkpoint_id, p.type,
    p.checkpoint, p.metadata_type, p.metadata_blob,
    b.channels, b.types, b.blobs, w.task_ids, w.channels, w.types, w.blobs, b.versions
FROM page AS p
CROSS JOIN LATERAL (
    SELECT array_agg(bl.channel) AS channels, array_agg(bl.type) AS types,
        array_agg(bl.blob) AS blobs, array_agg(bl.version) AS versions
    FROM jsonb_each_text(p.channel_versions) AS cv(channel, version)
    -- one primary-key lookup per channel (LIMIT 1 keeps the planner from hashing
    -- every value of the thread when its statistics are stale, e.g. a new table)
    CROSS JOIN LATERAL (
        SELECT bl.channel, bl.type, bl.blob, bl.version FROM sg_checkpoint_blobs AS bl
        WHERE bl.thread_id = p.thread_id AND bl.checkpoint_ns = p.checkpoint_ns
            AND bl.channel = cv.channel AND bl.version = cv.version AND bl.blob IS NOT NULL
        LIMIT 1
    ) AS bl
) AS b
CROSS JOIN LATERAL (
    SELECT array_agg(wr.task_id ORDER BY wr.seq, wr.ord) AS task_ids,
        array_agg(wr.channel ORDER BY wr.seq, wr.ord) AS channels,
        array_agg(wr.type ORDER BY wr.seq, wr.ord) AS types,
        array_agg(wr.blob ORDER BY wr.seq, wr.ord) AS blobs
    FROM sg_checkpoint_writes AS wr
    WHERE wr.thread_id = p.thread_id AND wr.checkpoint_ns = p.checkpoint_ns
        AND wr.checkpoint_id = p.checkpoint_id
) AS w
ORDER BY p.checkpoint_id DESC, p.thread_id DESC, p.checkpoint_ns DESC
"""

_ORDER = "ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC"


def select_page(where: list[str]) -> str:
    """Return the statement reading one page of checkpoints with their values and writes.

    ``where`` holds conditions on ``sg_checkpoints`` (with ``%s`` placeholders; the
    caller passes their parameters followed by the ``LIMIT``). Rows come newest first:
    ``(thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
    metadata_type, metadata_blob, blob_channels, blob_types, blobs, write_task_ids,
    write_channels, write_types, write_blobs, blob_versions)``; the array columns are ``NULL`` when
    empty. Only the conditions' shape is SQL text: every value is a bound parameter.
    """
    conds = f"WHERE {' AND '.join(where)} " if where else ""
    return (
        "WITH page AS MATERIALIZED (SELECT thread_id, checkpoint_ns, checkpoint_id, "
        "parent_checkpoint_id, type, checkpoint, channel_versions, metadata_type, "
        f"metadata_blob FROM sg_checkpoints {conds}{_ORDER} LIMIT %s)" + _LOAD
    )


TOUCH = """
INSERT INTO sg_checkpoint_thread_ttl (thread_id, touched_at) VALUES (%(thread_id)s, %(at)s)
ON CONFLICT (thread_id) DO UPDATE SET touched_at = excluded.touched_at
"""
"""Record activity on a thread (for the ttl setting)."""

EXPIRED = "SELECT thread_id FROM sg_checkpoint_thread_ttl WHERE touched_at < %(cutoff)s"

DELETE_EXPIRED = """
WITH expired AS (
    DELETE FROM sg_checkpoint_thread_ttl
    WHERE thread_id = %(thread_id)s AND touched_at < %(cutoff)s RETURNING thread_id
), gone_writes AS (
    DELETE FROM sg_checkpoint_writes WHERE thread_id IN (SELECT thread_id FROM expired)
), gone_blobs AS (
    DELETE FROM sg_checkpoint_blobs WHERE thread_id IN (SELECT thread_id FROM expired)
), gone_items AS (
    DELETE FROM sg_checkpoint_items WHERE thread_id IN (SELECT thread_id FROM expired)
)
DELETE FROM sg_checkpoints WHERE thread_id IN (SELECT thread_id FROM expired)
"""
"""Delete one thread if it is still expired (not written since the scan): one statement."""

DELETE_TTL = "DELETE FROM sg_checkpoint_thread_ttl WHERE thread_id = %(thread_id)s"

THREADS_OF_RUNS = (
    "SELECT DISTINCT thread_id FROM sg_checkpoints WHERE metadata->>'run_id' = ANY(%(runs)s)"
)

REBASE_BLOB = """
UPDATE sg_checkpoint_blobs SET type = %(type)s, blob = %(blob)s, base = NULL
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(ns)s AND channel = %(channel)s
    AND version = %(version)s
"""
"""Store a value kept by a prune whole (its delta base may go)."""

INSERT_ITEMS = f"""
WITH {_NEW_ITEMS}
SELECT 1
"""
"""Store interned items (insert-if-absent): those of a value a prune stores whole."""

DROP_CHECKPOINTS = """
WITH gone_writes AS (
    DELETE FROM sg_checkpoint_writes AS w
    USING unnest(%(nss)s::text[], %(ids)s::text[]) AS d(ns, id)
    WHERE w.thread_id = %(thread_id)s AND w.checkpoint_ns = d.ns AND w.checkpoint_id = d.id
)
DELETE FROM sg_checkpoints AS c
USING unnest(%(nss)s::text[], %(ids)s::text[]) AS d(ns, id)
WHERE c.thread_id = %(thread_id)s AND c.checkpoint_ns = d.ns AND c.checkpoint_id = d.id
"""

DROP_UNREFERENCED_BLOBS = """
DELETE FROM sg_checkpoint_blobs AS b
WHERE b.thread_id = %(thread_id)s AND NOT EXISTS (
    SELECT 1 FROM unnest(%(nss)s::text[], %(channels)s::text[], %(versions)s::text[])
        AS r(ns, channel, version)
    WHERE r.ns = b.checkpoint_ns AND r.channel = b.channel AND r.version = b.version
)
"""
"""Delete the values of a thread no kept checkpoint refers to."""

COPY_THREAD = """
WITH src AS (SELECT 1 FROM sg_checkpoints WHERE thread_id = %(src)s LIMIT 1),
copied_writes AS (
    INSERT INTO sg_checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx,
        channel, type, blob, task_path, seq, ord)
    SELECT %(dst)s, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob,
        task_path, seq, ord FROM sg_checkpoint_writes WHERE thread_id = %(src)s
), copied_blobs AS (
    INSERT INTO sg_checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob,
        base)
    SELECT %(dst)s, checkpoint_ns, channel, version, type, blob, base FROM sg_checkpoint_blobs
    WHERE thread_id = %(src)s
), copied_items AS (
    INSERT INTO sg_checkpoint_items (thread_id, checkpoint_ns, hash, type, value)
    SELECT %(dst)s, checkpoint_ns, hash, type, value FROM sg_checkpoint_items
    WHERE thread_id = %(src)s
    ON CONFLICT (thread_id, checkpoint_ns, hash) DO NOTHING
)
INSERT INTO sg_checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
    type, checkpoint, channel_versions, metadata_type, metadata_blob, metadata)
SELECT %(dst)s, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
    channel_versions, metadata_type, metadata_blob, metadata
FROM sg_checkpoints WHERE thread_id = %(src)s
"""
"""Copy a thread under a new id: one statement (the caller checked the target is empty)."""

RESEAL_READ = (
    "SELECT 'c', checkpoint_ns, checkpoint_id, '', type, checkpoint, metadata_type, "
    "metadata_blob FROM sg_checkpoints WHERE thread_id = %(dst)s UNION ALL "
    "SELECT 'w', checkpoint_ns, checkpoint_id, task_id || chr(31) || idx::text || chr(31) || "
    "channel, type, blob, NULL, NULL FROM sg_checkpoint_writes WHERE thread_id = %(dst)s "
    "UNION ALL SELECT 'b', checkpoint_ns, channel, version, type, blob, NULL, NULL "
    "FROM sg_checkpoint_blobs WHERE thread_id = %(dst)s AND blob IS NOT NULL UNION ALL "
    "SELECT 'i', checkpoint_ns, encode(hash, 'hex'), '', type, value, NULL, NULL "
    "FROM sg_checkpoint_items WHERE thread_id = %(dst)s"
)
"""Every row of a copied thread, for an encrypting saver to seal again at its new place."""

RESEAL_CHECKPOINT = """
UPDATE sg_checkpoints SET type = %(type)s, checkpoint = %(blob)s, metadata_type = %(mtype)s,
    metadata_blob = %(mblob)s
WHERE thread_id = %(dst)s AND checkpoint_ns = %(ns)s AND checkpoint_id = %(id)s
"""
RESEAL_WRITE = """
UPDATE sg_checkpoint_writes SET type = %(type)s, blob = %(blob)s
WHERE thread_id = %(dst)s AND checkpoint_ns = %(ns)s AND checkpoint_id = %(id)s
    AND task_id = %(task)s AND idx = %(idx)s
"""
RESEAL_BLOB = """
UPDATE sg_checkpoint_blobs SET type = %(type)s, blob = %(blob)s
WHERE thread_id = %(dst)s AND checkpoint_ns = %(ns)s AND channel = %(channel)s
    AND version = %(version)s
"""
RESEAL_ITEM = """
UPDATE sg_checkpoint_items SET type = %(type)s, value = %(blob)s
WHERE thread_id = %(dst)s AND checkpoint_ns = %(ns)s AND hash = %(hash)s
"""

HAS_THREAD = "SELECT EXISTS (SELECT 1 FROM sg_checkpoints WHERE thread_id = %(thread_id)s)"

THREAD_DELTAS = """
SELECT checkpoint_ns, channel, version, type, blob FROM sg_checkpoint_blobs
WHERE thread_id = %(thread_id)s AND type IN ('sg-list-delta', 'sg-sealed')
"""
"""The values of a thread that may be deltas (their headers name their bases; sealed
values say so in their clear header)."""

FETCH_ITEMS = """
SELECT i.thread_id, i.checkpoint_ns, i.hash, i.type, i.value FROM sg_checkpoint_items AS i
JOIN unnest(%(tids)s::text[], %(nss)s::text[], %(hashes)s::bytea[]) AS w(tid, ns, hash)
    ON i.thread_id = w.tid AND i.checkpoint_ns = w.ns AND i.hash = w.hash
"""
"""The interned items a page of rows refers to: one statement per read."""

THREAD_REFERRING = """
SELECT checkpoint_ns, type, blob FROM sg_checkpoint_blobs
WHERE thread_id = %(thread_id)s AND type IN ('sg-interned', 'sg-list-delta', 'sg-sealed')
UNION ALL
SELECT checkpoint_ns, type, blob FROM sg_checkpoint_writes
WHERE thread_id = %(thread_id)s AND type IN ('sg-interned', 'sg-sealed')
"""
"""The values and writes of a thread that may refer to interned items (the mark of a
retention's garbage collection, run after its deletes in the same transaction)."""

DROP_UNREFERENCED_ITEMS = """
DELETE FROM sg_checkpoint_items AS i
WHERE i.thread_id = %(thread_id)s AND NOT EXISTS (
    SELECT 1 FROM unnest(%(nss)s::text[], %(hashes)s::bytea[]) AS r(ns, hash)
    WHERE r.ns = i.checkpoint_ns AND r.hash = i.hash
)
"""
"""Delete the items of a thread no remaining value or write refers to."""

THREAD_PAGE_LIMIT = 1_000_000_000
"""``LIMIT`` used to read a whole thread with ``select_page``."""

TASK_PATHS = """
SELECT DISTINCT task_id, task_path FROM sg_checkpoint_writes
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(ns)s AND checkpoint_id = %(checkpoint_id)s
"""
"""Task id -> saved task path of one checkpoint's pending writes (``DeltaChannel``
histories replay them in the runtime's order)."""
