"""SQLite-specific behaviour: schema and migrations, atomicity under injected
crashes, concurrency across threads, connections the user owns, list paging."""

from __future__ import annotations

import itertools
import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tests.checkpoint.checkpoint_steps import put_step
from tests.checkpoint.sqlite_faults import executemany_failing_after_first_row

from stategraph.checkpoint.base import empty_checkpoint
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite._schema import MIGRATIONS


def connect(path: Path | str, **kwargs: Any) -> sqlite3.Connection:
    return sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, **kwargs)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "checkpoints.sqlite"


@pytest.fixture
def saver(db: Path) -> Iterator[SqliteSaver]:
    with SqliteSaver.from_conn_string(str(db)) as s:
        yield s


# -- schema ------------------------------------------------------------------------


def test_setup_creates_schema_and_pragmas(saver: SqliteSaver, db: Path) -> None:
    saver.setup()
    conn = saver.conn
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"checkpoints", "writes", "blobs", "schema_migrations"} <= tables
    applied = [r[0] for r in conn.execute("SELECT v FROM schema_migrations ORDER BY v")]
    assert applied == list(range(len(MIGRATIONS)))
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    columns = {r[1] for r in conn.execute("PRAGMA table_info(checkpoints)")}
    assert {
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "parent_checkpoint_id",
        "type",
    } <= columns
    assert {"checkpoint", "metadata", "metadata_json"} <= columns

    # Idempotent, and a second saver on the same file applies nothing again.
    saver.setup()
    with SqliteSaver.from_conn_string(str(db)) as other:
        other.setup()
        assert other.get_tuple({"configurable": {"thread_id": "x"}}) is None
    count = conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0]
    assert count == len(MIGRATIONS)


def test_setup_runs_automatically_and_applies_missing_migrations_in_order(db: Path) -> None:
    conn = connect(db)
    conn.execute("CREATE TABLE schema_migrations (v INTEGER PRIMARY KEY)")
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("INSERT INTO schema_migrations (v) VALUES (0)")
    saver = SqliteSaver(conn)
    config, _ = put_step(saver, {"configurable": {"thread_id": "t"}}, empty_checkpoint(), 0, 1)
    applied = [r[0] for r in conn.execute("SELECT v FROM schema_migrations ORDER BY v")]
    assert applied == list(range(len(MIGRATIONS)))
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "checkpoints_nested" in indexes and "checkpoints_thread_id" not in indexes
    got = saver.get(config)
    assert got is not None and got["channel_values"] == {"x": 1}
    conn.close()


def test_data_survives_reopening(db: Path) -> None:
    with SqliteSaver.from_conn_string(str(db)) as saver:
        config, _ = put_step(
            saver, {"configurable": {"thread_id": "t"}}, empty_checkpoint(), 0, "v"
        )
        saver.put_writes(config, [("x", "w")], "task")
    with SqliteSaver.from_conn_string(str(db)) as saver:
        saved = saver.get_tuple({"configurable": {"thread_id": "t"}})
        assert saved is not None
        assert saved.config == config
        assert saved.checkpoint["channel_values"] == {"x": "v"}
        assert saved.pending_writes == [("task", "x", "w")]


# -- atomicity -------------------------------------------------------------------


class PatchableConnection(sqlite3.Connection):
    """A connection whose ``execute`` can be monkeypatched on the instance."""


def test_crash_inside_put_rolls_back(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = connect(db, factory=PatchableConnection)
    saver = SqliteSaver(conn)
    first, parent = put_step(
        saver, {"configurable": {"thread_id": "t"}}, empty_checkpoint(), 0, "v0"
    )
    blobs_before = conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0]

    real_execute = conn.execute
    seen: list[str] = []

    def crashing_execute(sql: str, *args: Any) -> sqlite3.Cursor:
        seen.append(sql.split("(")[0].strip())
        if " INTO checkpoints " in sql:
            raise sqlite3.OperationalError("injected crash after the blobs insert")
        return real_execute(sql, *args)

    monkeypatch.setattr(conn, "execute", crashing_execute)
    with pytest.raises(sqlite3.OperationalError, match="injected crash"):
        put_step(saver, first, parent, 1, "v1")
    monkeypatch.undo()
    assert "BEGIN IMMEDIATE" in seen  # the put ran inside its own transaction

    assert not conn.in_transaction
    assert conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 1
    assert conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == blobs_before
    latest = saver.get_tuple({"configurable": {"thread_id": "t"}})
    assert latest is not None
    assert latest.config == first
    assert latest.checkpoint["channel_values"] == {"x": "v0"}
    # Another connection sees the same: nothing of the failed put is visible.
    with SqliteSaver.from_conn_string(str(db)) as other:
        assert [t.config for t in other.list(None)] == [first]
    # The saver keeps working.
    second, _ = put_step(saver, first, parent, 1, "v1")
    assert saver.get_tuple({"configurable": {"thread_id": "t"}}).config == second  # type: ignore[union-attr]
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_crash_inside_put_writes_rolls_back(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = connect(db, factory=PatchableConnection)
    saver = SqliteSaver(conn)
    config, _ = put_step(saver, {"configurable": {"thread_id": "t"}}, empty_checkpoint(), 0, 1)
    saver.put_writes(config, [("a", 1)], "task-0")

    inserted: list[Any] = []
    fails_after_first_row = executemany_failing_after_first_row(
        conn.executemany, " INTO writes ", inserted
    )

    monkeypatch.setattr(conn, "executemany", fails_after_first_row)
    with pytest.raises(sqlite3.OperationalError, match="injected"):
        saver.put_writes(config, [("a", 2), ("__interrupt__", "i")], "task-1")
    monkeypatch.undo()
    assert len(inserted) == 1  # the first row was inserted before the failure
    saved = saver.get_tuple(config)
    assert saved is not None and saved.pending_writes == [("task-0", "a", 1)]
    conn.close()


# -- concurrency -------------------------------------------------------------------


@pytest.mark.parametrize("target", ["file", ":memory:"])
def test_threads_lose_nothing(tmp_path: Path, target: str) -> None:
    path = str(tmp_path / "threads.sqlite") if target == "file" else ":memory:"
    with SqliteSaver.from_conn_string(path) as saver:

        def work(i: int) -> None:
            config: dict[str, Any] = {"configurable": {"thread_id": f"thread-{i}"}}
            parent = empty_checkpoint()
            for step in range(30):
                config, parent = put_step(saver, config, parent, step, (i, step))
                saver.put_writes(config, [("x", step), ("__resume__", i)], f"task-{i}")

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(work, range(8)))

        for i in range(8):
            listed = list(saver.list({"configurable": {"thread_id": f"thread-{i}"}}))
            assert [t.metadata["step"] for t in listed] == list(range(29, -1, -1))
            assert [t.checkpoint["channel_values"]["x"] for t in listed] == [
                (i, s) for s in range(29, -1, -1)
            ]
            for newer, older in itertools.pairwise(listed):
                assert newer.parent_config == older.config
            assert all(
                t.pending_writes
                == [(f"task-{i}", "x", t.metadata["step"]), (f"task-{i}", "__resume__", i)]
                for t in listed
            )
        assert saver.conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 240
        assert saver.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_parallel_put_writes_on_one_checkpoint(saver: SqliteSaver) -> None:
    config, _ = put_step(saver, {"configurable": {"thread_id": "t"}}, empty_checkpoint(), 0, 0)
    barrier = threading.Barrier(8)

    def task(i: int) -> None:
        barrier.wait()
        for round_ in range(5):
            saver.put_writes(config, [(f"c{i}", round_), ("out", i)], f"task-{i}")

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(task, range(8)))
    saved = saver.get_tuple(config)
    assert saved is not None and saved.pending_writes is not None
    # First write wins per (task, idx); each task's writes stay together and in order.
    assert sorted(saved.pending_writes) == sorted(
        w for i in range(8) for w in [(f"task-{i}", f"c{i}", 0), (f"task-{i}", "out", i)]
    )
    tasks = [w[0] for w in saved.pending_writes]
    for i in range(8):
        at = tasks.index(f"task-{i}")
        assert saved.pending_writes[at : at + 2] == [
            (f"task-{i}", f"c{i}", 0),
            (f"task-{i}", "out", i),
        ]


# -- user-owned connections ---------------------------------------------------------


def test_default_isolation_connection_works(db: Path) -> None:
    conn = sqlite3.connect(str(db))  # Python's default (legacy) transaction handling
    saver = SqliteSaver(conn)
    config, _ = put_step(saver, {"configurable": {"thread_id": "t"}}, empty_checkpoint(), 0, 5)
    saver.put_writes(config, [("x", 6)], "task")
    assert not conn.in_transaction
    saved = saver.get_tuple(config)
    assert saved is not None and saved.pending_writes == [("task", "x", 6)]
    # The user's own implicit transaction must be finished before the saver is used.
    conn.execute("CREATE TABLE mine (a)")
    conn.execute("INSERT INTO mine VALUES (1)")
    assert conn.in_transaction
    with pytest.raises(RuntimeError, match="open transaction"):
        saver.get_tuple(config)
    conn.commit()
    assert saver.get_tuple(config) is not None
    conn.close()


def test_filters_fall_back_to_python_without_json(saver: SqliteSaver) -> None:
    put_step(saver, {"configurable": {"thread_id": "a"}}, empty_checkpoint(), 0, 1)
    put_step(saver, {"configurable": {"thread_id": "b"}}, empty_checkpoint(), 1, 1)
    saver._json = False
    assert [
        t.config["configurable"]["thread_id"] for t in saver.list(None, filter={"step": 1})
    ] == ["b"]
    assert list(saver.list(None, filter={"step": 1, "x') OR 1=1 --": 1})) == []


def test_list_pages_through_equal_ids_of_many_threads(saver: SqliteSaver) -> None:
    checkpoint = empty_checkpoint()
    checkpoint["id"] = "same-id"
    for i in range(150):
        meta = {"i": i, "a b": "z"}
        saver.put({"configurable": {"thread_id": f"t{i:03}"}}, checkpoint, meta, {})  # type: ignore[arg-type]
    listed = [t.config["configurable"]["thread_id"] for t in saver.list(None)]
    assert listed == [f"t{i:03}" for i in range(149, -1, -1)]
    assert len(list(saver.list(None, filter={"x y": None}))) == 0
    # "a b" cannot go to SQL: the filter runs in Python across pages.
    found = [t.metadata["i"] for t in saver.list(None, filter={"a b": "z", "i": 20})]  # type: ignore[typeddict-item]
    assert found == [20]
    assert len(list(saver.list(None, filter={"a b": "z"}, limit=120))) == 120
