"""The studio's SQLite thread index follows ``thread_changes`` (format 6), whose order is
the order of the writers' commits, not of checkpoint ids; a file no release with the
feed has opened yet is followed by rowid as before, until a saver migrates it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from stategraph.checkpoint.base import create_checkpoint, empty_checkpoint
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite._schema import NEW_FILE
from stategraph.studio._reading import SqliteThreadIndex


def _put(saver: SqliteSaver, thread: str, step: int, checkpoint_id: str | None = None) -> None:
    checkpoint = create_checkpoint(empty_checkpoint(), None, step)
    if checkpoint_id is not None:
        checkpoint["id"] = checkpoint_id
    metadata: Any = {"source": "loop", "step": step, "parents": {}}
    saver.put(
        {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}, checkpoint, metadata, {}
    )


def _counts(index: SqliteThreadIndex) -> dict[str, int]:
    return {r.thread_id: r.checkpoints for r in index.rows()}


def test_a_checkpoint_committed_late_with_an_old_id_is_seen_incrementally(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "feed.sqlite")
    with SqliteSaver.from_conn_string(path) as one, SqliteSaver.from_conn_string(path) as two:
        _put(one, "a", 0)
        _put(two, "b", 0)
        index = SqliteThreadIndex(path)
        assert _counts(index) == {"a": 1, "b": 1} and index.full_scans == 1
        _put(two, "b", 1)
        # a writer whose id sorts before every id already there (its clock was behind,
        # or it made the id before the other committed): no order of ids finds it
        _put(one, "a", 1, checkpoint_id="00000000-0000-6000-8000-000000000000")
        assert _counts(index) == {"a": 2, "b": 2} and index.full_scans == 1
        feed = "SELECT seq, thread_id FROM thread_changes ORDER BY seq"
        assert one.conn.execute(feed).fetchall() == [(2, "b"), (3, "a")]
        _put(one, "a", 2)  # already on top: the feed stays, the top thread is recounted
        assert one.conn.execute(feed).fetchall() == [(2, "b"), (3, "a")]
        assert _counts(index) == {"a": 3, "b": 2} and index.full_scans == 1
        one.delete_thread("b")  # a delete moves the thread up: recounted, gone
        assert one.conn.execute(feed).fetchall() == [(3, "a"), (4, "b")]
        assert _counts(index) == {"a": 3} and index.full_scans == 1
        _put(two, "b", 0)
        _put(one, "a", 3)
        assert one.conn.execute(feed).fetchall() == [(4, "b"), (5, "a")]
        assert _counts(index) == {"a": 4, "b": 1} and index.full_scans == 1
        one.prune(["a"], strategy="keep_latest", keep_last=1)  # (a prune moves it too)
        assert _counts(index) == {"a": 1, "b": 1} and index.full_scans == 1
        index.close()


def test_a_file_without_the_feed_is_followed_by_rowid_until_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("CREATE TABLE schema_migrations (v INTEGER PRIMARY KEY)")
    for statement in NEW_FILE:  # (the release before: rowid checkpoints, no feed)
        if statement.startswith("CREATE TABLE checkpoints"):
            statement = statement.replace(") WITHOUT ROWID", ")")
        conn.execute(statement)
    conn.executemany("INSERT INTO schema_migrations (v) VALUES (?)", [(v,) for v in range(10)])
    row = "INSERT INTO checkpoints VALUES (?, '', ?, NULL, 'msgpack', x'90', 'msgpack', x'80', '{}', NULL)"
    conn.execute(row, ("a", "2"))
    index = SqliteThreadIndex(str(path))
    assert _counts(index) == {"a": 1} and index.full_scans == 1
    conn.execute(row, ("b", "1"))  # (as a writer of the release before would)
    assert _counts(index) == {"a": 1, "b": 1} and index.full_scans == 1
    conn.close()
    with SqliteSaver.from_conn_string(str(path)) as saver:
        saver.setup()  # migrated: the index moves to the feed, grouping once
        _put(saver, "b", 1)
        assert _counts(index) == {"a": 1, "b": 2} and index.full_scans == 2
        _put(saver, "a", 1)
        assert _counts(index) == {"a": 2, "b": 2} and index.full_scans == 2
        saver.delete_thread("b")  # (a thread written only before the feed: moved up too)
        assert _counts(index) == {"a": 2} and index.full_scans == 2
    index.close()
