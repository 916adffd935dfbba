"""Segments of list deltas: a long chat thread stores each message a bounded number
of times, every version is rebuilt from a bounded number of rows read in one
statement, and chains written before (delta format 1, no ``base`` column) still read.

The levels are shrunk (``SPAN`` 4) so that a few hundred steps cross every level and
the whole-copy depth; the real sizes only change the constants."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ormsgpack
import pytest
from test_delta_storage import KINDS, Driver

from stategraph.checkpoint import _list_delta
from stategraph.checkpoint._compact import unpack_version
from stategraph.checkpoint._list_delta import DELTA_TYPE, delta_header
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.graph import END, START, MessagesState, StateGraph
from stategraph.messages import HumanMessage

SPAN, LEVELS = 4, 3
TURNS = 150
CFG = {"configurable": {"thread_id": "chat"}}


@pytest.fixture(autouse=True)
def small_levels(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_list_delta, "SPAN", SPAN)
    monkeypatch.setattr(_list_delta, "LEVELS", LEVELS)
    monkeypatch.setattr(_list_delta, "MAX_DEPTH", SPAN**LEVELS)
    yield


def chat(saver: Any) -> Any:
    b = StateGraph(MessagesState)
    b.add_node("noop", lambda state: {})
    b.add_edge(START, "noop")
    b.add_edge("noop", END)
    return b.compile(checkpointer=saver)


def message(i: int) -> HumanMessage:
    return HumanMessage("x" * 200, id=f"m{i:04}")


def chain_rows(blobs: dict[str, tuple[str, bytes]], version: str) -> int:
    """Rows read to rebuild ``version`` from the stored blobs (itself included)."""
    rows, current = 1, blobs[version]
    while current[0] == DELTA_TYPE:
        current = blobs[str(delta_header(current[1])[1])]
        rows += 1
    return rows


def test_a_long_thread_stores_each_message_a_bounded_number_of_times() -> None:
    saver = InMemorySaver()
    g = chat(saver)
    for i in range(TURNS):
        g.invoke({"messages": [message(i)]}, CFG)
    blobs = {str(k[3]): b for k, b in saver.blobs.items() if k[2] == "messages" and b is not None}
    raw = TURNS * len(saver.serde.dumps_typed([message(0)])[1])
    stored = sum(len(b[1]) for b in blobs.values())
    # one copy per level reached, a whole copy at depth SPAN**LEVELS, headers
    assert stored < raw * (LEVELS + 1.5)
    bound = (SPAN - 1) * LEVELS + 1
    worst = max(chain_rows(blobs, v) for v in blobs)
    assert 2 * (SPAN - 1) < worst <= bound
    whole = [v for v, b in blobs.items() if b[0] != DELTA_TYPE]
    assert 2 <= len(whole) <= 6  # the first ones, then one per SPAN**LEVELS steps
    # every version reads back whole, cold, in order
    cold = InMemorySaver()
    cold.storage, cold.writes, cold.blobs = saver.storage, saver.writes, saver.blobs
    cold.items = saver.items
    seen = 0
    for t in cold.list(CFG):
        msgs = t.checkpoint["channel_values"].get("messages")
        if msgs is not None:
            assert [m.id for m in msgs] == [f"m{i:04}" for i in range(len(msgs))]
            seen += 1
    assert seen == 3 * TURNS - 1  # the first input checkpoint has no messages yet


@pytest.mark.parametrize("kind", KINDS)
def test_histories_with_segments_equal_whole_storage(kind: str, tmp_path: Path) -> None:
    """Every checkpoint of a thread long enough to use every level, read warm and
    cold, equals the same thread stored whole."""
    on = Driver(kind, tmp_path / "on.sqlite", delta=True)
    off = Driver(kind, tmp_path / "off.sqlite", delta=False)
    try:
        graphs = (chat(on.saver), chat(off.saver))
        for d, g in zip((on, off), graphs, strict=True):
            d.graph = g
            for i in range(90):
                d.invoke({"messages": [message(i)]}, CFG)

        def shape(tuples: list[Any]) -> list[Any]:
            # ids, timestamps and versions differ between the two runs
            return [
                (
                    t.checkpoint["channel_values"],
                    t.metadata,
                    [(w[1], w[2]) for w in t.pending_writes],
                )
                for t in tuples
            ]

        expected = shape(off.tuples())
        assert shape(on.tuples()) == expected
        assert shape(on.cold_tuples()) == expected
    finally:
        on.close()
        off.close()


def test_sqlite_reads_a_chain_in_one_statement(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        g = chat(saver)
        for i in range(TURNS):
            g.invoke({"messages": [message(i)]}, CFG)
    with SqliteSaver.from_conn_string(str(path)) as cold:
        statements: list[str] = []
        cold.setup()
        cold.conn.set_trace_callback(statements.append)
        state = chat(cold).get_state(CFG)
        assert [m.id for m in state.values["messages"]] == [f"m{i:04}" for i in range(TURNS)]
    chains = [s for s in statements if "WITH RECURSIVE" in s]
    assert len(chains) == 1
    assert len(statements) < 12


def to_format_1(blob: bytes) -> bytes:
    header = ormsgpack.unpackb(blob)
    header[0], header[1], header[2] = 1, unpack_version(header[1]), unpack_version(header[2])
    return ormsgpack.packb(header)


def test_sqlite_chains_of_delta_format_1_without_base_column_still_read(
    tmp_path: Path,
) -> None:
    """What a database written before segments holds: format-1 headers, whose chains
    run base after base (no segments) down to a whole copy, and no ``base`` column.
    The levels are set to one (each version on the one before), as that release did."""
    import stategraph.checkpoint._list_delta as ld

    path = tmp_path / "old.sqlite"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ld, "LEVELS", 1)
        mp.setattr(ld, "MAX_DEPTH", 40)
        with SqliteSaver.from_conn_string(str(path)) as saver:
            g = chat(saver)
            for i in range(100):
                g.invoke({"messages": [message(i)]}, CFG)
            expected = [(t.checkpoint, t.pending_writes) for t in saver.list(CFG)]
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        rows = conn.execute(
            "SELECT thread_id, checkpoint_ns, channel, version, blob FROM blobs WHERE type = ?",
            (DELTA_TYPE,),
        ).fetchall()
        assert len(rows) > 50
        for *key, blob in rows:  # (by primary key: a new file's blobs have no rowid)
            conn.execute(
                "UPDATE blobs SET blob = ?, base = NULL WHERE thread_id = ? AND "
                "checkpoint_ns = ? AND channel = ? AND version = ?",
                (to_format_1(blob), *key),
            )
    finally:
        conn.close()
    with SqliteSaver.from_conn_string(str(path)) as cold:
        statements: list[str] = []
        cold.setup()
        cold.conn.set_trace_callback(statements.append)
        got = [(t.checkpoint, t.pending_writes) for t in cold.list(CFG)]
        assert got == expected
        # and the thread goes on, in the current format, on top of the old chains
        chat(cold).invoke({"messages": [message(100)]}, CFG)
        state = chat(cold).get_state(CFG)
        assert len(state.values["messages"]) == 101


def test_postgres_chains_of_delta_format_1_without_base_column_still_read(
    tmp_path: Path,
) -> None:
    """The same on the real server: format-1 chains are read as a version range."""
    import stategraph.checkpoint._list_delta as ld

    d = Driver("postgres", tmp_path / "unused", delta=True)
    try:
        d.graph = chat(d.saver)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(ld, "LEVELS", 1)
            mp.setattr(ld, "MAX_DEPTH", 40)
            for i in range(100):
                d.invoke({"messages": [message(i)]}, CFG)
        expected = [(t.checkpoint, t.pending_writes) for t in d.tuples()]
        rows = d.admin.execute(
            f"SELECT channel, version, blob FROM {d.schema}.sg_checkpoint_blobs WHERE type = %s",
            (DELTA_TYPE,),
        ).fetchall()
        assert len(rows) > 50
        for channel, version, blob in rows:
            d.admin.execute(
                f"UPDATE {d.schema}.sg_checkpoint_blobs SET blob = %s, base = NULL "
                "WHERE channel = %s AND version = %s",
                (to_format_1(blob), channel, version),
            )
        cold = d.cold_tuples()
        assert [(t.checkpoint, t.pending_writes) for t in cold] == expected
    finally:
        d.close()


def test_memory_saver_stores_whole_a_delta_whose_base_was_pruned_meanwhile() -> None:
    """A prune between encoding a delta and saving it (another thread's) deletes the
    delta's base: the value is stored whole instead of as a delta nobody can read."""
    saver = InMemorySaver()
    g = chat(saver)
    for i in range(2 * SPAN + 1):
        g.invoke({"messages": [message(i)]}, CFG)
    codec = saver.delta
    assert codec is not None
    original = codec.encode
    armed = [True]

    def encode_then_prune(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        pending = out[1]
        # a segment: its base is SPAN versions back, older than the newest checkpoint
        if (
            armed[0]
            and pending is not None
            and pending.base is not None
            and (pending.entry.depth % SPAN == 0)
        ):
            armed[0] = False
            saver.prune(["chat"], keep_last=1)  # its base is not the newest: it goes
        return out

    codec.encode = encode_then_prune  # type: ignore[method-assign]
    for i in range(2 * SPAN + 1, 6 * SPAN):
        g.invoke({"messages": [message(i)]}, CFG)
    assert not armed[0]
    cold = InMemorySaver()
    cold.storage, cold.writes, cold.blobs = saver.storage, saver.writes, saver.blobs
    cold.items = saver.items
    cold._latest = saver._latest
    tuples = list(cold.list(CFG))
    assert tuples
    latest = chat(cold).get_state(CFG)
    assert [m.id for m in latest.values["messages"]] == [f"m{i:04}" for i in range(6 * SPAN)]
