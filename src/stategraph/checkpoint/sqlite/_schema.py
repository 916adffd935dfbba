"""SQLite schema of the checkpoint savers: connection pragmas and ordered migrations.

Migrations are numbered by their position in :data:`MIGRATIONS` and recorded in
``schema_migrations(v)``. :func:`migrate` applies the missing ones in order inside one
``BEGIN IMMEDIATE`` transaction, so several processes opening the same new file at
once apply each migration exactly once. Never edit a released migration: append one.
"""

from __future__ import annotations

import sqlite3
import time

__all__ = [
    "MIGRATIONS",
    "BUMP_THREAD",
    "BUSY_TIMEOUT_MS",
    "VALUES_FORMAT",
    "configure",
    "migrate",
    "check_format",
    "has_json",
    "pack_id",
    "unpack_id",
]

BUSY_TIMEOUT_MS = 30_000
"""How long a statement waits for another connection's lock before failing."""

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # v0: checkpoints. ``checkpoint`` holds everything but the channel values;
    # ``metadata_json`` holds the JSON scalars of the metadata for SQL filtering.
    (
        """CREATE TABLE IF NOT EXISTS checkpoints (
            thread_id TEXT NOT NULL,
            checkpoint_ns TEXT NOT NULL DEFAULT '',
            checkpoint_id TEXT NOT NULL,
            parent_checkpoint_id TEXT,
            type TEXT NOT NULL,
            checkpoint BLOB NOT NULL,
            metadata_type TEXT NOT NULL,
            metadata BLOB NOT NULL,
            metadata_json TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
        )""",
    ),
    # v1: pending writes. ``seq`` keeps the order in which writes were first saved.
    (
        """CREATE TABLE IF NOT EXISTS writes (
            thread_id TEXT NOT NULL,
            checkpoint_ns TEXT NOT NULL DEFAULT '',
            checkpoint_id TEXT NOT NULL,
            task_id TEXT NOT NULL,
            idx INTEGER NOT NULL,
            channel TEXT NOT NULL,
            type TEXT NOT NULL,
            value BLOB NOT NULL,
            task_path TEXT NOT NULL DEFAULT '',
            seq INTEGER NOT NULL,
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
        )""",
    ),
    # v2: channel values, once per (channel, version). ``blob`` NULL = empty channel.
    (
        """CREATE TABLE IF NOT EXISTS blobs (
            thread_id TEXT NOT NULL,
            checkpoint_ns TEXT NOT NULL DEFAULT '',
            channel TEXT NOT NULL,
            version TEXT NOT NULL,
            type TEXT NOT NULL,
            blob BLOB,
            PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
        )""",
    ),
    # v3: list one thread across namespaces newest first without a sort.
    ("CREATE INDEX IF NOT EXISTS checkpoints_thread_id ON checkpoints (thread_id, checkpoint_id)",),
    # v4: the storage format of the channel values (see ``check_format``): format 2
    # adds list values stored as deltas (``_list_delta``) to the whole values of 1.
    (
        "CREATE TABLE IF NOT EXISTS storage_format (name TEXT PRIMARY KEY, "
        "version INTEGER NOT NULL)",
        "INSERT OR IGNORE INTO storage_format (name, version) VALUES ('channel_values', 2)",
    ),
    # v5: when each thread was last written (or read), for the savers' ttl setting.
    (
        "CREATE TABLE IF NOT EXISTS thread_ttl (thread_id TEXT PRIMARY KEY, "
        "touched_at REAL NOT NULL)",
    ),
    # v6: format 3 packs checkpoint bodies (``_compact``) and delta headers (delta
    # format 2); this release still reads everything formats 1 and 2 wrote.
    ("UPDATE storage_format SET version = 3 WHERE name = 'channel_values' AND version < 3",),
    # v7: the version a delta is based on, copied out of its header so that one
    # recursive statement reads a whole delta chain. Only a hint: NULL (rows written
    # before, whole values) or a base since deleted just ends the statement's walk,
    # and decoding always follows the headers.
    ("ALTER TABLE blobs ADD COLUMN base TEXT",),
    # v8: format 4 interns the large elements of list values (``_intern``): each is
    # stored once per thread in ``items`` and referred to by its 16-byte hash from the
    # blobs and writes of type ``sg-interned`` (or deltas whose items are).
    (
        """CREATE TABLE IF NOT EXISTS items (
            thread_id TEXT NOT NULL,
            checkpoint_ns TEXT NOT NULL DEFAULT '',
            hash BLOB NOT NULL,
            type TEXT NOT NULL,
            value BLOB NOT NULL,
            PRIMARY KEY (thread_id, checkpoint_ns, hash)
        ) WITHOUT ROWID""",
        "UPDATE storage_format SET version = 4 WHERE name = 'channel_values' AND version < 4",
    ),
    # v9: format 5 stores the bodies of big checkpoints as their change from a keyframe
    # body (``_body_delta``); ``body_base`` names that keyframe (NULL: a whole body), so
    # the saver finds the bodies to rewrite whole before a keyframe is deleted/replaced.
    (
        "ALTER TABLE checkpoints ADD COLUMN body_base TEXT",
        "UPDATE storage_format SET version = 5 WHERE name = 'channel_values' AND version < 5",
    ),
    # v10: format 6. ``thread_changes`` is the change feed the studio's thread index
    # follows: in the transaction of every checkpoint row inserted, whichever
    # connection or process inserts it, a trigger moves the thread to the top (``seq``
    # one above the highest) unless it is there already; the saver's deletes move the
    # thread too (``BUMP_THREAD``), and rows are never deleted, so no ``seq`` is used
    # twice. So a new file's ``checkpoints`` needs no rowid. Format 6
    # also lets a checkpoint's metadata be stored only as its ``metadata_json`` text
    # (``metadata_type`` ``''``, see ``_filters.JSON_METADATA``) and a parent id
    # as the 16 bytes of its UUID (``pack_id``).
    (
        """CREATE TABLE IF NOT EXISTS thread_changes (
            seq INTEGER PRIMARY KEY,
            thread_id TEXT NOT NULL UNIQUE
        )""",
        """CREATE TRIGGER IF NOT EXISTS thread_changes_feed AFTER INSERT ON checkpoints
        WHEN NEW.thread_id IS NOT
            (SELECT thread_id FROM thread_changes ORDER BY seq DESC LIMIT 1)
        BEGIN
            INSERT INTO thread_changes (seq, thread_id) VALUES
                ((SELECT COALESCE(MAX(seq), 0) + 1 FROM thread_changes), NEW.thread_id)
            ON CONFLICT (thread_id) DO UPDATE SET seq = excluded.seq;
        END""",
        # listing a thread across its namespaces newest first merges its root rows
        # (read in primary-key order) with the nested ones (this partial index, small:
        # most checkpoints are root ones) instead of keeping every row in an index
        "CREATE INDEX IF NOT EXISTS checkpoints_nested ON checkpoints "
        "(thread_id, checkpoint_id) WHERE checkpoint_ns != ''",
        "DROP INDEX IF EXISTS checkpoints_thread_id",
        "UPDATE storage_format SET version = 6 WHERE name = 'channel_values' AND version < 6",
    ),
)

NEW_FILE: tuple[str, ...] = (
    # The schema MIGRATIONS build, made at once for a file that has none of it, with
    # ``writes`` and ``blobs`` WITHOUT ROWID: their rows then live in their primary
    # key's b-tree instead of a rowid table plus an index repeating every key. Same
    # columns in the same order, same indexes: every statement of the saver runs on
    # both forms, and a file migrated from an older release keeps its rowid tables
    # (rebuilding them would lock it for long). ``checkpoints`` keeps its rowid: in a
    # WITHOUT ROWID b-tree a row spills to an overflow page past about 1 kB (against
    # about 4 kB in a rowid table), and a big graph's checkpoint rows are a few kB (a
    # 1,000-node chain's file grew by 18%). Nothing uses that rowid: the studio
    # follows ``thread_changes`` (migration 10).
    """CREATE TABLE checkpoints (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL,
        parent_checkpoint_id TEXT,
        type TEXT NOT NULL,
        checkpoint BLOB NOT NULL,
        metadata_type TEXT NOT NULL,
        metadata BLOB NOT NULL,
        metadata_json TEXT NOT NULL DEFAULT '{}',
        body_base TEXT,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
    )""",
    """CREATE TABLE writes (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        channel TEXT NOT NULL,
        type TEXT NOT NULL,
        value BLOB NOT NULL,
        task_path TEXT NOT NULL DEFAULT '',
        seq INTEGER NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
    ) WITHOUT ROWID""",
    """CREATE TABLE blobs (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        channel TEXT NOT NULL,
        version TEXT NOT NULL,
        type TEXT NOT NULL,
        blob BLOB,
        base TEXT,
        PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
    ) WITHOUT ROWID""",
    *MIGRATIONS[3],
    *MIGRATIONS[4],
    *MIGRATIONS[5],
    *MIGRATIONS[8][:1],
    "UPDATE storage_format SET version = 5 WHERE name = 'channel_values'",
)
"""Statements that make a new file's schema as of migration :data:`NEW_FILE_AT` (see
the first comment); the migrations after it run as for any file."""
NEW_FILE_AT = 9
"""The last migration :data:`NEW_FILE` stands for (never change: append migrations)."""
BUMP_THREAD = (
    "INSERT INTO thread_changes (seq, thread_id) VALUES "
    "((SELECT COALESCE(MAX(seq), 0) + 1 FROM thread_changes), ?) "
    "ON CONFLICT (thread_id) DO UPDATE SET seq = excluded.seq"
)
"""Move a thread to the top of ``thread_changes`` (what the saver runs when it deletes
checkpoints of the thread: the studio then recounts it)."""
_TABLES = (
    "checkpoints",
    "writes",
    "blobs",
    "storage_format",
    "thread_ttl",
    "items",
    "thread_changes",
)

VALUES_FORMAT = 6
"""The newest storage format this release reads and writes: 1 = every value stored
whole (releases before delta storage); 2 = list values may be stored as deltas;
3 = checkpoint bodies packed (``_compact``) and delta headers in delta format 2;
4 = large list elements interned in the ``items`` table; 5 = bodies of big
checkpoints stored as their change from a keyframe body (``_body_delta``); 6 =
metadata may be stored as its JSON text alone, and the studio follows ``thread_changes``
instead of the rowid of ``checkpoints``. Each stored body, blob, write and metadata says
which form it has, so a database holds all six."""


def pack_id(checkpoint_id: str | None) -> str | bytes | None:
    """How ``parent_checkpoint_id`` stores a checkpoint id (format 6): the 16 bytes of
    a UUID in canonical form (what the runtime makes: 36 lowercase characters), any
    other id as it is."""
    if checkpoint_id is None or len(checkpoint_id) != 36 or checkpoint_id[8:24:5] != "----":
        return checkpoint_id
    digits = checkpoint_id.replace("-", "")
    try:
        packed = bytes.fromhex(digits)
    except ValueError:
        return checkpoint_id
    # (fromhex also takes capitals and spaces: only 32 lowercase digits round-trip)
    return packed if len(packed) == 16 and packed.hex() == digits else checkpoint_id


def unpack_id(stored: str | bytes) -> str:
    """The checkpoint id :func:`pack_id` stored as ``stored`` (not ``NULL``)."""
    if type(stored) is not bytes:
        return str(stored)
    h = stored.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def configure(conn: sqlite3.Connection) -> None:
    """Set the pragmas every saver connection needs.

    ``busy_timeout`` makes a writer wait for another connection's lock instead of
    failing with "database is locked"; WAL lets readers work while one writer
    writes; ``synchronous=NORMAL`` in WAL mode survives a process crash (a power loss
    may drop the last transactions, never corrupt the file). In-memory databases
    keep their own journal mode.
    """
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    # a new file frees the pages of deleted rows on `PRAGMA incremental_vacuum` (it
    # must be set before the first table; SqliteSaver.vacuum() converts older files)
    if conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0:
        # only an empty file takes the setting (and a read-only connection to an
        # existing file must not try to write it)
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
            break
        except sqlite3.OperationalError as exc:
            # Switching to WAL needs an exclusive lock; another process may hold one.
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
    conn.execute("PRAGMA synchronous = NORMAL")


def _current_version(conn: sqlite3.Connection) -> int:
    """Return the highest applied migration number, ``-1`` when none is recorded."""
    try:
        row = conn.execute("SELECT MAX(v) FROM schema_migrations").fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return -1
        raise
    return -1 if row is None or row[0] is None else int(row[0])


def migrate(conn: sqlite3.Connection) -> None:
    """Apply the migrations this database lacks, in order, in one transaction.

    Idempotent and safe to run from several processes at once: a process that finds
    the schema current does not take the write lock.
    """
    if _current_version(conn) >= len(MIGRATIONS) - 1:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (v INTEGER PRIMARY KEY)")
        current = _current_version(conn)
        if current == -1 and not _has_any_table(conn):
            for statement in NEW_FILE:
                conn.execute(statement)
            current = NEW_FILE_AT
            conn.executemany(
                "INSERT INTO schema_migrations (v) VALUES (?)",
                [(v,) for v in range(NEW_FILE_AT + 1)],
            )
        for v in range(current + 1, len(MIGRATIONS)):
            for statement in MIGRATIONS[v]:
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations (v) VALUES (?)", (v,))
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def _has_any_table(conn: sqlite3.Connection) -> bool:
    """Whether the file has one of the tables the migrations make."""
    marks = ", ".join("?" for _ in _TABLES)
    found = conn.execute(
        f"SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ({marks})",
        _TABLES,
    ).fetchone()
    return bool(found[0])


def check_format(conn: sqlite3.Connection) -> None:
    """Raise if the database was written in a newer storage format than this release
    reads (opened with an older stategraph after a newer one wrote to it)."""
    row = conn.execute(
        "SELECT version FROM storage_format WHERE name = 'channel_values'"
    ).fetchone()
    if row is not None and int(row[0]) > VALUES_FORMAT:
        raise RuntimeError(
            f"This checkpoint database stores channel values in format {row[0]}, written "
            f"by a newer stategraph; this release reads formats 1 to {VALUES_FORMAT}. "
            "Upgrade stategraph to open it."
        )


def has_json(conn: sqlite3.Connection) -> bool:
    """Whether this SQLite build has the JSON functions used for metadata filters."""
    try:
        conn.execute("SELECT json_extract('{\"a\": 1}', '$.a')").fetchone()
    except sqlite3.OperationalError:
        return False
    return True
