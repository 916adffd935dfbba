"""A SQLite database written by the release before checkpoint format versioning
(``data/format1_checkpoints.sqlite``) keeps working: opened (and migrated) by
today's savers, every thread reads back exactly as it did when it was written, and
its interrupted or failed threads resume to the results they always gave."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from format_fixture_graphs import Flaky, cfg, describe, graphs, raw_tuples, snapshot_threads

from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from stategraph.types import Command

DATA = Path(__file__).resolve().parent / "data"
EXPECTED = json.loads((DATA / "format1_expected.json").read_text())


@pytest.fixture
def old_db(tmp_path: Path) -> Path:
    """A private copy of the fixture database (the committed file is never opened)."""
    target = tmp_path / "old.sqlite"
    shutil.copyfile(DATA / "format1_checkpoints.sqlite", target)
    return target


@pytest.fixture
def saver(old_db: Path) -> Iterator[SqliteSaver]:
    conn = sqlite3.connect(old_db, check_same_thread=False, isolation_level=None)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


def test_every_thread_reads_back_exactly(saver: SqliteSaver) -> None:
    assert snapshot_threads(saver) == EXPECTED["threads"]


def test_every_checkpoint_tuple_reads_back_exactly(saver: SqliteSaver) -> None:
    assert raw_tuples(saver) == EXPECTED["tuples"]


def test_async_saver_reads_the_same(old_db: Path) -> None:
    async def main() -> list[str]:
        async with AsyncSqliteSaver.from_conn_string(str(old_db)) as saver:
            return [repr(t) async for t in saver.alist(None)]

    assert asyncio.run(main()) == EXPECTED["tuples"]


def test_old_threads_resume(saver: SqliteSaver, monkeypatch: pytest.MonkeyPatch) -> None:
    g = graphs(saver)
    out = g["hitl"].invoke(Command(resume="Ada"), cfg("hitl"))
    assert out == {"log": ["start", "prepare", "ask:Ada", "finish"], "answer": "Ada"}

    monkeypatch.setattr(Flaky, "broken", False)
    assert g["failed"].invoke(None, cfg("failed")) == {"log": ["start", "bad", "good"]}

    out = g["nested"].invoke(Command(resume="deep"), cfg("nested"))
    assert out == {"log": ["start", "outer", "start", "outer", "inner_a", "inner:deep"]}

    out = g["fanout"].invoke(None, cfg("fanout"))
    assert out == {"log": ["forked", "work:x", "work:y", "work:z"]}

    out = g["chat"].invoke(
        {"messages": [{"role": "user", "content": "again", "id": "h-again"}]}, cfg("chat")
    )
    assert [m.content for m in out["messages"]] == [
        "hello",
        "echo: hello",
        "how are you",
        "echo: how are you",
        "bye",
        "echo: bye",
        "edited",
        "again",
        "echo: again",
    ]


def test_resuming_keeps_the_old_history_intact(saver: SqliteSaver) -> None:
    g = graphs(saver)
    g["hitl"].invoke(Command(resume="Ada"), cfg("hitl"))
    history = [s for s in g["hitl"].get_state_history(cfg("hitl"))]
    old = EXPECTED["threads"]["hitl"]["history"]
    # the old checkpoints are the tail of the new history, unchanged
    tail: list[dict[str, Any]] = [describe(s) for s in history[-len(old) :]]
    # the checkpoint the resume started from now has no pending interrupt left to show
    assert tail[1:] == old[1:]
    assert tail[0]["values"] == old[0]["values"]
    assert tail[0]["config"] == old[0]["config"]


def test_opening_records_the_storage_format(old_db: Path, saver: SqliteSaver) -> None:
    saver.setup()
    conn = sqlite3.connect(old_db)
    try:
        row = conn.execute("SELECT version FROM storage_format WHERE name = 'channel_values'")
        assert row.fetchone() == (6,)
    finally:
        conn.close()


def test_a_newer_format_is_refused_with_a_clear_error(old_db: Path) -> None:
    with SqliteSaver.from_conn_string(str(old_db)) as first:
        first.setup()
    conn = sqlite3.connect(old_db, isolation_level=None)
    conn.execute("UPDATE storage_format SET version = 7 WHERE name = 'channel_values'")
    conn.close()
    with SqliteSaver.from_conn_string(str(old_db)) as later:
        with pytest.raises(RuntimeError, match="format 7, written by a newer stategraph"):
            later.get_tuple(cfg("chat"))
