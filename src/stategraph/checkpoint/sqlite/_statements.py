"""The SQL statements of :class:`~stategraph.checkpoint.sqlite.SqliteSaver` (shared by
its reading, writing and upkeep code)."""

from __future__ import annotations

from stategraph.checkpoint.sqlite._filters import JSON_METADATA

_PAGE = 100
_COLUMNS = (
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, "
    f"metadata_type, CASE metadata_type WHEN '{JSON_METADATA}' THEN metadata_json "
    "ELSE metadata END"
)
"""A checkpoint row as ``_load`` reads it; the last column is the metadata as stored
(``_filters.load_metadata``: its JSON text when that is its only copy)."""


def list_query(conds: list[str], whole_thread: bool) -> str:
    """``list``'s statement for the conditions ``conds`` (their parameters bound in
    order, then ``LIMIT``'s; twice over when ``whole_thread``), newest first.

    ``whole_thread`` (a thread named, no namespace): the thread's root checkpoints
    (in primary-key order) merged with its nested ones (index ``checkpoints_nested``),
    so no sort of the whole thread is needed for one page.
    """
    where = " AND ".join(conds)
    order = " ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC LIMIT ?"
    if whole_thread:
        return (
            f"SELECT {_COLUMNS} FROM checkpoints WHERE {where} AND checkpoint_ns = '' "
            f"UNION ALL SELECT {_COLUMNS} FROM checkpoints WHERE {where} "
            f"AND checkpoint_ns != ''{order}"
        )
    return f"SELECT {_COLUMNS} FROM checkpoints" + (f" WHERE {where}" if where else "") + order


_INSERT_BLOB = (
    "INSERT OR IGNORE INTO blobs (thread_id, checkpoint_ns, channel, version, type, blob, "
    "base) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_CHECKPOINT = (
    "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
    "parent_checkpoint_id, type, checkpoint, metadata_type, metadata, metadata_json, "
    "body_base) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_NEW_CHECKPOINT = (
    "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
    "parent_checkpoint_id, type, checkpoint, metadata_type, metadata, metadata_json, "
    "body_base) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
"""``put``'s insert: fails (``IntegrityError``) for an id saved before, which the saver
then handles as a checkpoint saved again (see ``SqliteSaver.put``)."""
_INSERT_DELTA = (
    "INSERT OR IGNORE INTO blobs (thread_id, checkpoint_ns, channel, version, type, blob, "
    "base) SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM blobs WHERE "
    "thread_id = ? AND checkpoint_ns = ? AND channel = ? AND version = ?)"
)
"""A delta's row, inserted only if the version it is based on (``base``) is stored:
no row changed means the base is gone or the version was stored already. Parameters:
the row's seven values, then its thread, namespace, channel and base again (plain
``?`` placeholders: Python 3.14's sqlite3 refuses numbered ones with a sequence)."""
_EXISTS_CHECKPOINT = (
    "SELECT body_base IS NULL FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
    "AND checkpoint_id = ?"
)
_SELECT_BODY = (
    "SELECT type, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
    "AND checkpoint_id = ?"
)
_WRITE_COLUMNS = (
    "thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path, seq"
)
_INSERT_WRITE = (
    f"INSERT INTO writes ({_WRITE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
    "(SELECT COALESCE(MAX(seq), 0) + 1 FROM writes WHERE thread_id = ? AND "
    "checkpoint_ns = ? AND checkpoint_id = ?)) "
    "ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET "
    "channel = excluded.channel, type = excluded.type, value = excluded.value, "
    "task_path = excluded.task_path WHERE excluded.idx < 0"
)
"""A pending write, numbered after the checkpoint's last one (``seq``: the order in
which writes were first saved). A write to a special channel (``idx`` < 0) replaces
the one saved before; a regular write is kept only if absent (and then takes no
number). Parameters: the nine columns before ``seq``, then the thread, namespace and
checkpoint id again."""
_EMPTY = "empty"
_INSERT_ITEM = (
    "INSERT OR IGNORE INTO items (thread_id, checkpoint_ns, hash, type, value) "
    "VALUES (?, ?, ?, ?, ?)"
)
_ITEM_CHUNK = 500
_TOUCH = (
    "INSERT INTO thread_ttl (thread_id, touched_at) VALUES (?, ?) "
    "ON CONFLICT (thread_id) DO UPDATE SET touched_at = excluded.touched_at"
)
_SELECT_BLOB = (
    "SELECT type, blob FROM blobs WHERE thread_id = ? AND checkpoint_ns = ? "
    "AND channel = ? AND version = ?"
)
_SELECT_CHAIN = """
WITH RECURSIVE chain(version, type, blob, base) AS (
    SELECT version, type, blob, base FROM blobs
    WHERE thread_id = :thread AND checkpoint_ns = :ns AND channel = :channel AND version = :version
    UNION
    SELECT b.version, b.type, b.blob, b.base FROM blobs AS b JOIN chain AS c
    ON b.thread_id = :thread AND b.checkpoint_ns = :ns AND b.channel = :channel AND b.version = c.base
)
SELECT version, type, blob FROM chain
UNION
SELECT version, type, blob FROM blobs
WHERE thread_id = :thread AND checkpoint_ns = :ns AND channel = :channel AND version >= :low AND version <= :high
"""
"""A stored value and the values it is based on, following the ``base`` column;
``:low``/``:high`` (NULL: none) add a version range: a chain of delta format 1 (written
before that column) is the range between its snapshot and the delta."""
