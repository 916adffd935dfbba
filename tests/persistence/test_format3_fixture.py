"""A SQLite database written by the release before interned list items (storage
format 3, ``data/format3_checkpoints.sqlite``, made by ``make_format3_fixture.py``)
keeps working: opened by today's savers it reads back exactly as it did when it was
written, new turns on its threads intern their messages next to the old inline ones,
and retention on the mixed thread keeps every checkpoint readable."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from format_fixture_graphs import cfg, chat_graph, snapshot_threads

from stategraph.checkpoint._intern import INTERNED_TYPE, referenced
from stategraph.checkpoint.sqlite import SqliteSaver

DATA = Path(__file__).resolve().parent / "data"
sys.path.insert(0, str(DATA))

from make_format3_fixture import (  # noqa: E402
    TURNS,
    long_text,
    longchat_snapshot,
    tuple_digests,
)

EXPECTED = json.loads((DATA / "format3_expected.json").read_text())


@pytest.fixture
def old_db(tmp_path: Path) -> Path:
    """A private copy of the fixture database (the committed file is never opened)."""
    target = tmp_path / "old.sqlite"
    shutil.copyfile(DATA / "format3_checkpoints.sqlite", target)
    return target


@pytest.fixture
def conn(old_db: Path) -> Iterator[sqlite3.Connection]:
    c = sqlite3.connect(old_db, check_same_thread=False, isolation_level=None)
    try:
        yield c
    finally:
        c.close()


def test_the_fixture_is_format_3_without_items(old_db: Path) -> None:
    c = sqlite3.connect(old_db)
    try:
        assert c.execute("SELECT version FROM storage_format").fetchone() == (3,)
        tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "items" not in tables
        types = {r[0] for r in c.execute("SELECT DISTINCT type FROM blobs")}
        assert "sg-list-delta" in types and INTERNED_TYPE not in types
    finally:
        c.close()


def test_reads_back_exactly(conn: sqlite3.Connection) -> None:
    saver = SqliteSaver(conn)
    assert snapshot_threads(saver) == EXPECTED["threads"]
    assert longchat_snapshot(saver) == EXPECTED["longchat"]
    assert tuple_digests(saver) == EXPECTED["tuples_sha256"]
    assert conn.execute("SELECT version FROM storage_format").fetchone() == (6,)


def items_consistent(conn: sqlite3.Connection) -> None:
    rows = conn.execute(
        "SELECT checkpoint_ns, type, blob FROM blobs WHERE thread_id = 'longchat' AND blob "
        "IS NOT NULL UNION ALL SELECT checkpoint_ns, type, value FROM writes WHERE "
        "thread_id = 'longchat'"
    ).fetchall()
    refs = referenced([(t, bytes(b)) for _, t, b in rows])
    items = {bytes(h) for (h,) in conn.execute("SELECT hash FROM items")}
    assert items == refs


def test_new_turns_intern_and_old_ones_still_read(conn: sqlite3.Connection) -> None:
    saver = SqliteSaver(conn)
    g = chat_graph(saver)
    for i in range(TURNS, TURNS + 6):
        g.invoke(
            {"messages": [{"role": "user", "content": long_text(i), "id": f"h-{i:03}"}]},
            cfg("longchat"),
        )
    assert conn.execute("SELECT COUNT(*) FROM items").fetchone()[0] >= 6
    items_consistent(conn)
    # the old checkpoints read exactly as before, cold
    cold = SqliteSaver(conn)
    old = EXPECTED["longchat"]["history_sha256"]
    now = longchat_snapshot(cold)["history_sha256"]
    assert now[-len(old) :] == old
    state = chat_graph(cold).get_state(cfg("longchat")).values["messages"]
    assert len(state) == 2 * (TURNS + 6)
    assert state[-2].content == long_text(TURNS + 5)
    assert [m.id for m in state[: 2 * TURNS : 2]] == [f"h-{i:03}" for i in range(TURNS)]
    # the other threads are untouched
    assert snapshot_threads(cold) == EXPECTED["threads"]


def test_retention_on_a_mixed_thread(conn: sqlite3.Connection) -> None:
    saver = SqliteSaver(conn)
    g = chat_graph(saver)
    for i in range(TURNS, TURNS + 3):
        g.invoke(
            {"messages": [{"role": "user", "content": long_text(i), "id": f"h-{i:03}"}]},
            cfg("longchat"),
        )
    before: Any = g.get_state(cfg("longchat")).values["messages"]
    saver.prune(["longchat"], keep_last=2)
    items_consistent(conn)
    cold = SqliteSaver(conn)
    assert chat_graph(cold).get_state(cfg("longchat")).values["messages"] == before
    assert len(list(cold.list(cfg("longchat")))) >= 2
