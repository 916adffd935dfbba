"""The statements one step costs ``SqliteSaver``, and what the fewer statements keep.

A step under durability ``"sync"`` is a batch of the last task's ``put_writes`` and the
checkpoint's ``put`` (one transaction). Inside it the lease is read once, the first
call runs without a savepoint, writes are numbered by their insert, a new checkpoint
is inserted without a look-up first, and a delta is inserted only if its base is
stored. Each of these keeps its guarantee: a stale run cannot write, a failing call
leaves nothing of itself, a checkpoint saved again under its id replaces the old one,
and a delta whose base is gone is stored whole.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.checkpoint.checkpoint_steps import put_step
from tests.checkpoint.sqlite_faults import executemany_failing_after_first_row

from stategraph.checkpoint._list_delta import DELTA_TYPE
from stategraph.checkpoint.base import create_checkpoint, empty_checkpoint
from stategraph.checkpoint.lease import LEASE_TOKEN_KEY
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.errors import LeaseLostError

ROOT = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}


class PatchableConnection(sqlite3.Connection):
    """A connection whose ``executemany`` can be replaced on the instance."""


@pytest.fixture
def path(tmp_path: Path) -> str:
    return str(tmp_path / "step.sqlite")


@pytest.fixture
def saver(path: str) -> Iterator[SqliteSaver]:
    conn = sqlite3.connect(
        path, check_same_thread=False, isolation_level=None, factory=PatchableConnection
    )
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


def _with_token(config: dict[str, Any], token: int | None) -> dict[str, Any]:
    if token is None:
        return config
    return {"configurable": {**config["configurable"], LEASE_TOKEN_KEY: token}}


def _put(
    saver: SqliteSaver,
    config: dict[str, Any],
    parent: Any,
    step: int,
    value: Any,
    token: int | None = None,
) -> tuple[dict[str, Any], Any]:
    return put_step(saver, _with_token(config, token), parent, step, value)


def _trace(saver: SqliteSaver) -> list[str]:
    statements: list[str] = []
    saver.conn.set_trace_callback(lambda sql: statements.append(" ".join(sql.split())))
    return statements


def test_a_leased_step_runs_nine_statements(saver: SqliteSaver) -> None:
    lease = saver.lease_acquire("t", "run", 30.0).lease
    assert lease is not None
    config, parent = _put(saver, ROOT, empty_checkpoint(), 0, "v0", lease.token)
    statements = _trace(saver)
    with saver.batch():
        saver.put_writes(_with_token(config, lease.token), [("x", "w")], "task")
        _put(saver, config, parent, 1, "v1", lease.token)
    saver.conn.set_trace_callback(None)
    kinds = [s.split(" (")[0].split(" WHERE")[0][:40] for s in statements]
    assert kinds == [
        "BEGIN IMMEDIATE",
        "SELECT token, expires_at,",  # the fence, once
        "INSERT INTO writes",
        "SAVEPOINT sg_call",  # the second call keeps the first if it fails
        "INSERT INTO sg_lease_log",
        "INSERT OR IGNORE INTO blobs",
        "INSERT INTO checkpoints",
        # (not a second insert: the trace shows the statement's text again when it
        # runs the thread_changes trigger, which is part of that one statement)
        "INSERT INTO checkpoints",
        "RELEASE sg_call",
        "COMMIT",
    ]
    latest = saver.get_tuple(ROOT)
    assert latest is not None
    assert latest.checkpoint["channel_values"] == {"x": "v1"}
    assert latest.metadata["step"] == 1


def test_a_stale_writer_is_stopped_inside_a_batch(saver: SqliteSaver) -> None:
    first = saver.lease_acquire("t", "run-1", 30.0).lease
    assert first is not None
    config, parent = _put(saver, ROOT, empty_checkpoint(), 0, "v0", first.token)
    saver.lease_release(first)
    second = saver.lease_acquire("t", "run-2", 30.0).lease
    assert second is not None and second.token == first.token + 1
    with saver.batch():
        with pytest.raises(LeaseLostError, match="took the thread over"):
            saver.put_writes(_with_token(config, first.token), [("x", "stale")], "task")
        with pytest.raises(LeaseLostError, match="took the thread over"):
            _put(saver, config, parent, 1, "stale", first.token)
    saved = list(saver.list(ROOT))
    assert [t.checkpoint["channel_values"] for t in saved] == [{"x": "v0"}]
    assert saved[0].pending_writes == []


def test_a_lease_change_inside_a_batch_is_seen_by_the_next_write(saver: SqliteSaver) -> None:
    lease = saver.lease_acquire("t", "run", 30.0).lease
    assert lease is not None
    config, parent = _put(saver, ROOT, empty_checkpoint(), 0, "v0", lease.token)
    with saver.batch():
        saver.put_writes(_with_token(config, lease.token), [("x", "kept")], "task")
        saver.lease_release(lease)  # the fence read before must not be trusted after
        with pytest.raises(LeaseLostError, match="expired"):
            _put(saver, config, parent, 1, "refused", lease.token)
    saved = list(saver.list(ROOT))
    assert [t.metadata["step"] for t in saved] == [0]
    assert saved[0].pending_writes == [("task", "x", "kept")]


def test_a_failing_first_call_leaves_nothing_and_the_batch_goes_on(
    saver: SqliteSaver, path: str
) -> None:
    config, parent = _put(saver, ROOT, empty_checkpoint(), 0, "v0")
    conn = saver.conn
    inserted: list[Any] = []
    fails_after_first_row = executemany_failing_after_first_row(
        conn.executemany, " INTO writes ", inserted
    )

    with saver.batch():
        conn.executemany = fails_after_first_row  # type: ignore[method-assign]
        try:
            with pytest.raises(sqlite3.OperationalError, match="injected"):
                saver.put_writes(config, [("x", "lost"), ("y", "lost")], "task")
        finally:
            del conn.executemany
        assert len(inserted) == 1  # a row was inserted before the failure
        assert not conn.in_transaction  # rolled back: nothing else was in it
        _put(saver, config, parent, 1, "v1")
    assert not conn.in_transaction
    other = sqlite3.connect(path)
    try:
        assert other.execute("SELECT COUNT(*) FROM writes").fetchone()[0] == 0
        assert other.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 2
    finally:
        other.close()


def test_a_batch_whose_only_call_fails_commits_nothing(saver: SqliteSaver, path: str) -> None:
    config, _ = _put(saver, ROOT, empty_checkpoint(), 0, "v0")
    with saver.batch():
        with pytest.raises(ValueError, match="checkpoint_id"):
            saver.put_writes(ROOT, [("x", "no checkpoint id")], "task")
    assert not saver.conn.in_transaction
    saved = saver.get_tuple(config)
    assert saved is not None and saved.pending_writes == []


def test_writes_keep_their_first_order_and_special_ones_replace(saver: SqliteSaver) -> None:
    config, _ = _put(saver, ROOT, empty_checkpoint(), 0, "v0")
    saver.put_writes(config, [("x", 1), ("y", 2)], "a")
    saver.put_writes(config, [("x", 3)], "b")
    saver.put_writes(config, [("x", 99)], "a")  # saved already: kept as it was
    saver.put_writes(config, [("__error__", "first")], "a")
    saver.put_writes(config, [("z", 4)], "c")
    saver.put_writes(config, [("__error__", "second")], "a")  # replaces, keeps its place
    saved = saver.get_tuple(config)
    assert saved is not None
    assert saved.pending_writes == [
        ("a", "x", 1),
        ("a", "y", 2),
        ("b", "x", 3),
        ("a", "__error__", "second"),
        ("c", "z", 4),
    ]
    seqs = saver.conn.execute("SELECT seq FROM writes ORDER BY seq").fetchall()
    assert [s for (s,) in seqs] == [1, 2, 3, 4, 5]


def test_saving_a_checkpoint_again_under_its_id_replaces_it(saver: SqliteSaver) -> None:
    config, parent = _put(saver, ROOT, empty_checkpoint(), 0, "v0")
    checkpoint = create_checkpoint(parent, None, 1)
    for value in ("first", "second"):
        version = saver.get_next_version(checkpoint["channel_versions"].get("x"), None)
        checkpoint["channel_values"]["x"] = value
        checkpoint["channel_versions"]["x"] = version
        saver.put(config, checkpoint, {"source": "loop", "step": 1}, {"x": version})
    assert saver.conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 2
    latest = saver.get_tuple(ROOT)
    assert latest is not None and latest.checkpoint["channel_values"] == {"x": "second"}
    assert not saver.conn.in_transaction


def test_a_delta_whose_base_was_deleted_meanwhile_is_stored_whole(
    saver: SqliteSaver, path: str
) -> None:
    items = [f"message {i}" * 3 for i in range(20)]
    config, parent = _put(saver, ROOT, empty_checkpoint(), 0, list(items))
    # a delta on a stored base is stored as one
    config, parent = _put(saver, config, parent, 1, [*items, "one more"])
    types = saver.conn.execute("SELECT type FROM blobs ORDER BY version").fetchall()
    assert types[-1][0] == DELTA_TYPE
    base_version = parent["channel_versions"]["x"]
    # another connection deletes the version the next delta will be based on
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("DELETE FROM blobs WHERE version = ?", (str(base_version),))
    other.close()
    value = [*items, "one more", "and another"]
    config, parent = _put(saver, config, parent, 2, value)
    (stored_type,) = saver.conn.execute(
        "SELECT type FROM blobs WHERE version = ?", (str(parent["channel_versions"]["x"]),)
    ).fetchone()
    assert stored_type != DELTA_TYPE
    with SqliteSaver.from_conn_string(path) as cold:
        latest = cold.get_tuple(ROOT)
        assert latest is not None and latest.checkpoint["channel_values"] == {"x": value}


def test_statements_use_plain_placeholders() -> None:
    # Python 3.12 warns, and 3.14 refuses, numbered placeholders (?1) bound from a
    # sequence: every statement the saver sends takes its parameters in order
    from stategraph.checkpoint.sqlite import _statements

    texts = {k: v for k, v in vars(_statements).items() if isinstance(v, str) and "?" in v}
    assert "_INSERT_WRITE" in texts and "_INSERT_DELTA" in texts
    numbered = {k for k, v in texts.items() if re.search(r"\?\d", v)}
    assert numbered == set()
