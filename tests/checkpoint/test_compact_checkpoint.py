"""The packed form of checkpoint bodies (``_compact``): exact round trips, plain
fallbacks, old plain bodies still read, and what a saver stores."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from stategraph.checkpoint._compact import (
    MARK,
    pack_checkpoint,
    pack_version,
    unpack_checkpoint,
    unpack_version,
)
from stategraph.checkpoint._ids import next_string_version
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.graph import END, START, MessagesState, StateGraph
from stategraph.messages import HumanMessage


def body(**changes: Any) -> dict[str, Any]:
    v1 = next_string_version(None)
    v2 = next_string_version(v1)
    out: dict[str, Any] = {
        "v": 4,
        "id": "1f1edefe-27cb-6650-8128-e33c6d3adcd9",
        "ts": "2026-12-02T01:29:57.798674+00:00",
        "channel_versions": {"__start__": v2, "messages": v1, "branch:to:a": v2},
        "versions_seen": {"__input__": {}, "a": {"branch:to:a": v1, "messages": v1}},
        "updated_channels": ["messages", "branch:to:a"],
    }
    out.update(changes)
    return out


def roundtrip(b: dict[str, Any]) -> dict[str, Any]:
    serde = JsonPlusSerializer()
    stored = serde.loads_typed(serde.dumps_typed(pack_checkpoint(b)))
    return unpack_checkpoint(stored, b["id"])


def test_standard_body_packs_small_and_comes_back_equal_in_key_order() -> None:
    b = body()
    packed = pack_checkpoint(b)
    assert isinstance(packed, list) and packed[0] == MARK
    serde = JsonPlusSerializer()
    assert len(serde.dumps_typed(packed)[1]) * 2 < len(serde.dumps_typed(b)[1])
    back = roundtrip(b)
    assert back == b
    assert list(back) == list(b)
    for node, seen in b["versions_seen"].items():
        assert list(back["versions_seen"][node]) == list(seen)
    assert list(back["channel_versions"]) == list(b["channel_versions"])


@pytest.mark.parametrize(
    "changes",
    [
        {"channel_versions": {"a": 1, "b": 2.5, "c": "7"}},
        {"channel_versions": {"a": "00000000000000000000000000000001.ABCDEF0123456789"}},
        {"channel_versions": {"a": "0000000000000000000000000000001.0abcdef01234567890"}},
        {"ts": "2026-12-02T01:29:57+00:00"},
        {"ts": "2026-12-02T01:29:57.000000+00:00"},
        {"ts": "2026-12-02T03:29:57.798674+02:00"},
        {"updated_channels": None},
        {"updated_channels": []},
        {"versions_seen": {}},
    ],
)
def test_unusual_fields_come_back_exactly(changes: dict[str, Any]) -> None:
    b = body(**changes)
    back = roundtrip(b)
    assert back == b
    assert {k: type(v) for k, v in back["channel_versions"].items()} == {
        k: type(v) for k, v in b["channel_versions"].items()
    }
    assert type(back["ts"]) is str


def test_other_shapes_are_stored_as_the_plain_dict() -> None:
    extra = {**body(), "pending_sends": []}
    assert pack_checkpoint(extra) is extra
    reordered = dict(reversed(list(body().items())))
    assert pack_checkpoint(reordered) is reordered
    odd = body(channel_versions={"a": True})
    assert pack_checkpoint(odd) is odd
    # a plain body read back (what every release before this one stored) is unchanged
    plain = body()
    assert unpack_checkpoint(plain, "other-id") is plain


def test_versions_of_the_savers_form_pack_to_integers() -> None:
    v = next_string_version(next_string_version(None))
    packed = pack_version(v)
    assert isinstance(packed, list) and packed[0] == 2
    assert unpack_version(packed) == v
    for other in (3, 1.5, "7", "x" * 49):
        assert pack_version(other) == other


def test_an_unknown_packed_format_is_refused() -> None:
    packed = pack_checkpoint(body())
    packed[1] = 99
    with pytest.raises(ValueError, match="packed format 99"):
        unpack_checkpoint(packed, "cp-1")


def chat(saver: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("a", lambda state: {})
    builder.add_edge(START, "a")
    builder.add_edge("a", END)
    return builder.compile(checkpointer=saver)


def test_savers_store_packed_bodies_and_read_them_back(tmp_path: Path) -> None:
    cfg = {"configurable": {"thread_id": "t"}}
    mem = InMemorySaver()
    with SqliteSaver.from_conn_string(str(tmp_path / "c.sqlite")) as sq:
        for saver in (mem, sq):
            g = chat(saver)
            for i in range(3):
                g.invoke({"messages": [HumanMessage(f"m{i}", id=f"m{i}")]}, cfg)
        mem_hist = [(s.checkpoint, s.metadata) for s in mem.list(cfg)]
        sq_hist = [(s.checkpoint, s.metadata) for s in sq.list(cfg)]
    assert len(mem_hist) == len(sq_hist) == 9
    for (mc, _), (sc, _) in zip(mem_hist, sq_hist, strict=True):
        assert list(mc) == list(sc)
        assert mc["v"] == sc["v"]
        assert mc["channel_values"].get("messages") == sc["channel_values"].get("messages")
    serde = JsonPlusSerializer()
    stored = [serde.loads_typed(saved[0]) for saved in mem.storage["t"][""].values()]
    assert all(isinstance(s, list) and s[0] == MARK for s in stored)
    conn = sqlite3.connect(tmp_path / "c.sqlite")
    try:
        rows = conn.execute("SELECT checkpoint_id, type, checkpoint FROM checkpoints").fetchall()
    finally:
        conn.close()
    for cid, ctype, cbytes in rows:
        packed = serde.loads_typed((ctype, cbytes))
        assert packed[0] == MARK
        assert unpack_checkpoint(packed, cid)["id"] == cid


def test_deltas_in_format_1_and_plain_bodies_still_read() -> None:
    """A thread as the previous release stored it (delta format 1, plain bodies)
    reads back exactly as the packed one does."""
    import ormsgpack

    from stategraph.checkpoint._list_delta import DELTA_TYPE

    cfg = {"configurable": {"thread_id": "t"}}
    saver = InMemorySaver()
    g = chat(saver)
    for i in range(40):
        g.invoke({"messages": [HumanMessage(f"m{i}", id=f"m{i}")]}, cfg)
    expected = [(s.checkpoint, s.metadata, s.pending_writes) for s in saver.list(cfg)]
    serde = saver.serde
    old = InMemorySaver()
    converted = 0
    for key, blob in saver.blobs.items():
        if blob is not None and blob[0] == DELTA_TYPE:
            header = ormsgpack.unpackb(blob[1])
            assert header[0] == 2
            header[0], header[1], header[2] = (
                1,
                unpack_version(header[1]),
                unpack_version(header[2]),
            )
            blob = (DELTA_TYPE, ormsgpack.packb(header))
            converted += 1
        old.blobs[key] = blob
    assert converted > 20
    for tid, by_ns in saver.storage.items():
        for ns, by_id in by_ns.items():
            for cid, (cp, md, parent) in by_id.items():
                plain = unpack_checkpoint(serde.loads_typed(cp), cid)
                old.storage[tid][ns][cid] = (serde.dumps_typed(plain), md, parent)
    old.writes.update(saver.writes)
    old._latest.update(saver._latest)
    got = [(s.checkpoint, s.metadata, s.pending_writes) for s in old.list(cfg)]
    assert got == expected
    # and writing on top of the old form continues the thread correctly
    chat(old).invoke({"messages": [HumanMessage("late", id="late")]}, cfg)
    state = chat(old).get_state(cfg)
    assert [m.id for m in state.values["messages"]] == [f"m{i}" for i in range(40)] + ["late"]


def test_a_checkpoint_with_many_versions_is_stored_plain_and_reads_back() -> None:
    from stategraph.checkpoint._compact import PACK_LIMIT, pack_checkpoint

    seen = {f"node{i}": {f"branch:to:node{i}": f"{i + 1:032}.{i:016x}"} for i in range(PACK_LIMIT)}
    body = {
        "v": 4,
        "id": "1f0-big",
        "ts": "2026-12-02T04:00:00.000000+00:00",
        "channel_versions": {"messages": f"{1:032}.{0:016x}"},
        "versions_seen": seen,
        "updated_channels": ["messages"],
    }
    assert pack_checkpoint(body) is body  # over the limit: the plain body is stored
    small = {**body, "versions_seen": dict(list(seen.items())[:10])}
    assert type(pack_checkpoint(small)) is list
    # exactly at the limit (one channel version + PACK_LIMIT - 1 seen entries): packed
    at_limit = {**body, "versions_seen": dict(list(seen.items())[: PACK_LIMIT - 1])}
    assert type(pack_checkpoint(at_limit)) is list


def test_versions_parsed_once_still_pack_exactly_and_apart() -> None:
    # versions are parsed once and remembered: packing again gives the same (but not
    # shared) lists; 1 and 1.0, equal as keys, stay two versions; near misses of the
    # string form stay strings
    v = next_string_version(None)
    near = [v.upper(), v.replace("0", "_", 1), " " + v[1:], "-" + v[1:]]
    b = body(
        channel_versions={"a": v, "b": 1, "c": 1.0, **{f"n{i}": s for i, s in enumerate(near)}},
        versions_seen={"x": {"a": v, "b": 1.0}},
    )
    first, second = pack_checkpoint(b), pack_checkpoint(b)
    assert first == second and first[5][0] is not second[5][0]
    assert first[5] == [pack_version(v), 1, 1.0, *near]
    assert [type(p) for p in first[5][1:3]] == [int, float]
    assert unpack_checkpoint(second, b["id"]) == b


def test_ts_counted_from_the_id_time_round_trips_in_one_byte() -> None:
    from stategraph.checkpoint._compact import FORMAT_TS_FROM_ID, id_micros
    from stategraph.checkpoint._ids import uuid6_str

    before = time.time_ns() // 1000
    fresh = id_micros(uuid6_str())
    assert fresh is not None and before <= fresh <= time.time_ns() // 1000 + 1000
    b = body()
    # the fixture's id was made 10 microseconds before its ts
    assert id_micros(b["id"]) == 1796174997798664
    packed = pack_checkpoint(b, ts_from_id=True)
    assert packed[1] == FORMAT_TS_FROM_ID and packed[3] == 10
    assert unpack_checkpoint(packed, b["id"]) == b
    # default (PostgreSQL, readers of format 1): the absolute time
    plain = pack_checkpoint(b)
    assert plain[1] == 1 and plain[3] == 1796174997798674
    assert unpack_checkpoint(plain, b["id"]) == b
    # an id that is no version-6 UUID keeps format 1
    for other in (
        "my-id",
        "1f1edefe-27cb-4650-8128-e33c6d3adcd9",
        "1f1edefe-27cb-6g50-8128-e33c6d3a",
    ):
        odd = body(id=other)
        assert pack_checkpoint(odd, ts_from_id=True)[1] == 1
        assert unpack_checkpoint(pack_checkpoint(odd, ts_from_id=True), other) == odd
    # a ts that is no UTC isoformat string stays a string in either format
    text = body(ts="yesterday")
    assert unpack_checkpoint(pack_checkpoint(text, ts_from_id=True), text["id"]) == text
    with pytest.raises(ValueError, match="format 2"):
        unpack_checkpoint(packed, "moved-by-hand")
