"""A SQLite database written by the last release that stored rows for empty channels
(storage format 5, ``data/format5_checkpoints.sqlite``, made by
``make_format5_fixture.py``) keeps working: every checkpoint (keyframe bodies and
their changes included) reads back exactly as it did when it was written, and the
checkpoints written on it now store no row for an empty channel."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from format_fixture_graphs import cfg, snapshot_threads

from stategraph.checkpoint.sqlite import SqliteSaver

DATA = Path(__file__).resolve().parent / "data"
sys.path.insert(0, str(DATA))

from make_format3_fixture import longchat_snapshot, tuple_digests  # noqa: E402
from make_format5_fixture import KEYS, STEPS, chain_graph, chain_snapshot  # noqa: E402

EXPECTED = json.loads((DATA / "format5_expected.json").read_text())


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    """A connection to a private copy of the fixture (the committed file is never
    opened)."""
    target = tmp_path / "old.sqlite"
    shutil.copyfile(DATA / "format5_checkpoints.sqlite", target)
    c = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
    try:
        yield c
    finally:
        c.close()


def empty_rows(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COUNT(*) FROM blobs WHERE type = 'empty'").fetchone()[0]


def test_the_fixture_has_empty_rows_and_keyframe_bodies(conn: sqlite3.Connection) -> None:
    assert conn.execute("SELECT MAX(v) FROM schema_migrations").fetchone() == (9,)
    assert conn.execute("SELECT version FROM storage_format").fetchone() == (5,)
    assert empty_rows(conn) > 100
    with_base = "SELECT COUNT(*) FROM checkpoints WHERE body_base IS NOT NULL"
    assert conn.execute(with_base).fetchone()[0] > 10


def test_read_back_exactly(conn: sqlite3.Connection) -> None:
    saver = SqliteSaver(conn)
    saver.setup()
    # migration 10 only adds the change feed and swaps an index: the old rows of empty
    # channels stay and read as before
    assert conn.execute("SELECT MAX(v) FROM schema_migrations").fetchone() == (10,)
    assert empty_rows(conn) > 100
    # cold savers (nothing cached from the writes) read what was written
    for reader in (saver, SqliteSaver(conn)):
        assert snapshot_threads(reader) == EXPECTED["threads"]
        assert longchat_snapshot(reader) == EXPECTED["longchat"]
        assert chain_snapshot(reader) == EXPECTED["chain"]
        assert tuple_digests(reader) == EXPECTED["tuples_sha256"]


def test_new_checkpoints_write_no_empty_rows(conn: sqlite3.Connection) -> None:
    saver = SqliteSaver(conn)
    g = chain_graph(saver)
    old = empty_rows(conn)
    blobs = conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0]
    g.invoke({}, cfg("chain-2"))
    assert empty_rows(conn) == old
    added = conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] - blobs
    # one row per value written: the input, every key filled, one key per step and the
    # branch channel triggering each node (no row when a channel is emptied)
    assert added == 1 + KEYS + STEPS + (1 + STEPS)
    state = chain_graph(SqliteSaver(conn)).get_state(cfg("chain-2")).values
    assert state == EXPECTED["chain"]["values"]
    assert state["k0"] == 1 and state[f"k{STEPS - 1}"] == STEPS and state[f"k{STEPS}"] == 0
    # the empty channels (the consumed input, the branch channels) still read as empty
    latest = saver.get_tuple(cfg("chain-2"))
    assert latest is not None
    assert "__start__" in latest.checkpoint["channel_versions"]
    assert "__start__" not in latest.checkpoint["channel_values"]
    # history and retention work on the old thread next to the new one
    history = list(g.get_state_history(cfg("chain")))
    assert len(history) == len(EXPECTED["chain"]["bodies_sha256"])
    saver.prune(["chain"], keep_last=3)
    assert chain_graph(SqliteSaver(conn)).get_state(cfg("chain")).values == state
