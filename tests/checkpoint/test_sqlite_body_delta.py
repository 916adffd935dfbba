"""Bodies of big checkpoints stored as their change from a keyframe (``_body_delta``,
storage format 5 of ``SqliteSaver``): what is read back is what was saved, through
retention, re-saves, copies, encryption, lost keyframes and files of format 4."""

from __future__ import annotations

import copy
import shutil
import sqlite3
from collections.abc import Iterator
from operator import add
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import Annotated, TypedDict

from stategraph.checkpoint._body_delta import MARK, Keyframes, apply_delta, stored_hash
from stategraph.checkpoint.serde.base import DeserializationError
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite._schema import MIGRATIONS, VALUES_FORMAT
from stategraph.graph import END, START, StateGraph

FIXTURE = Path(__file__).parent / "data" / "format4_big_graph.sqlite"
_BODY_KEYS = ("v", "id", "ts", "channel_versions", "versions_seen", "updated_channels")


class S(TypedDict):
    n: int


class W(TypedDict):
    hits: Annotated[list[int], add]


def chain(n: int) -> StateGraph[Any]:
    """START -> node_0 -> ... -> node_{n-1} -> END, each adding one to ``n``."""
    builder = StateGraph(S)
    previous = START
    for i in range(n):
        builder.add_node(f"node_{i}", lambda s: {"n": s["n"] + 1})
        builder.add_edge(previous, f"node_{i}")
        previous = f"node_{i}"
    builder.add_edge(previous, END)
    return builder


class Recording(SqliteSaver):
    """Keeps a deep copy of every body handed to ``put`` (the oracle)."""

    def __init__(self, conn: sqlite3.Connection, **kwargs: Any) -> None:
        super().__init__(conn, **kwargs)
        self.bodies: dict[str, dict[str, Any]] = {}

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        self.bodies[checkpoint["id"]] = copy.deepcopy(
            {k: checkpoint[k] for k in _BODY_KEYS if k in checkpoint}
        )
        return super().put(config, checkpoint, metadata, new_versions)


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[Recording]:
    conn = _connect(tmp_path / "delta.sqlite")
    yield Recording(conn)
    conn.close()


def _assert_all_read_back(saver: Recording, thread_id: str) -> int:
    """Every checkpoint of the thread reads back (list and get_tuple) as saved."""
    n = 0
    for t in saver.list({"configurable": {"thread_id": thread_id}}):
        cid = t.checkpoint["id"]
        expected = saver.bodies[cid]
        got = {k: t.checkpoint[k] for k in _BODY_KEYS}
        assert got == expected, cid
        alone = saver.get_tuple(t.config)
        assert alone is not None
        assert {k: alone.checkpoint[k] for k in _BODY_KEYS} == expected
        n += 1
    return n


def _rows(saver: SqliteSaver, thread_id: str) -> list[tuple[str, str | None, int]]:
    return saver.conn.execute(
        "SELECT checkpoint_id, body_base, length(checkpoint) FROM checkpoints "
        "WHERE thread_id = ? ORDER BY checkpoint_id",
        (thread_id,),
    ).fetchall()


def test_big_bodies_are_stored_as_changes_and_read_back(saver: Recording) -> None:
    graph = chain(150).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    assert graph.invoke({"n": 0}, config) == {"n": 150}
    rows = _rows(saver, "t")
    assert len(rows) == 152  # input + __start__ + 150 nodes
    changes = [r for r in rows if r[1] is not None]
    whole = [r for r in rows if r[1] is None]
    # channel versions accumulate: bodies pass PACK_LIMIT entries after ~125 steps
    assert len(changes) > 15 and len(whole) >= 2
    keyframes = {r[1] for r in changes}
    assert max(r[2] for r in changes) * 5 < min(r[2] for r in whole if r[0] in keyframes)
    # every change refers to a whole body of the same thread written before it
    ids = {r[0] for r in whole}
    assert all(r[1] in ids and r[1] < r[0] for r in changes)
    assert _assert_all_read_back(saver, "t") == 152
    assert graph.get_state(config).values == {"n": 150}
    history = list(graph.get_state_history(config))
    assert [h.values.get("n") for h in history[:3]] == [150, 149, 148]


def test_small_bodies_stay_whole(saver: Recording) -> None:
    graph = chain(5).compile(checkpointer=saver)
    graph.invoke({"n": 0}, {"configurable": {"thread_id": "small"}})
    assert all(r[1] is None for r in _rows(saver, "small"))


def test_prune_rewrites_the_bodies_whose_keyframe_goes(saver: Recording) -> None:
    graph = chain(150).compile(checkpointer=saver)
    graph.invoke({"n": 0}, {"configurable": {"thread_id": "t"}})
    # keep the last 3 checkpoints: their keyframe is older, and goes
    saver.prune(["t"], strategy="keep_latest", keep_last=3)
    rows = _rows(saver, "t")
    assert len(rows) == 3
    kept = {r[0] for r in rows}
    assert all(r[1] is None or r[1] in kept for r in rows)
    assert _assert_all_read_back(saver, "t") == 3
    # and the run goes on from the pruned thread
    graph.invoke({"n": 0}, {"configurable": {"thread_id": "t"}})
    assert _assert_all_read_back(saver, "t") == 3 + 152


def test_saving_a_keyframe_again_rewrites_its_dependents(saver: Recording) -> None:
    graph = chain(150).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"n": 0}, config)
    rows = _rows(saver, "t")
    base = next(r[1] for r in rows if r[1] is not None)
    dependents = [r[0] for r in rows if r[1] == base]
    keyframe = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_id": base}})
    assert keyframe is not None and keyframe.parent_config is not None
    changed = copy.deepcopy(keyframe.checkpoint)
    changed["versions_seen"]["node_0"] = {"made": "up"}
    saver.put(keyframe.parent_config, changed, keyframe.metadata, {})
    after = dict((r[0], r[1]) for r in _rows(saver, "t"))
    assert all(after[d] is None for d in dependents)  # stored whole now
    assert _assert_all_read_back(saver, "t") == 152
    again = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_id": base}})
    assert again is not None and again.checkpoint["versions_seen"]["node_0"] == {"made": "up"}


def test_keyframe_deleted_by_another_connection_makes_the_next_body_whole(
    saver: Recording, tmp_path: Path
) -> None:
    graph = chain(150).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"n": 0}, config, interrupt_after=["node_140"])
    rows = _rows(saver, "t")
    base = rows[-1][1]
    assert base is not None
    other = _connect(tmp_path / "delta.sqlite")
    other.execute("DELETE FROM checkpoints WHERE thread_id = 't' AND checkpoint_id = ?", (base,))
    # the rows that referred to it are unreadable now, and say so
    with pytest.raises(DeserializationError, match="keyframe"):
        saver.get_tuple(config)
    other.execute("DELETE FROM checkpoints WHERE thread_id = 't' AND body_base = ?", (base,))
    other.close()
    latest = saver.get_tuple(config)
    assert latest is not None
    saver.put(config, latest.checkpoint, latest.metadata, {})
    assert _rows(saver, "t")[-1][1] is None  # not stored against the lost keyframe


def test_a_keyframe_replaced_behind_the_writers_back_is_refused(
    saver: Recording, tmp_path: Path
) -> None:
    graph = chain(150).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"n": 0}, config)
    base = _rows(saver, "t")[-1][1]
    assert base is not None
    # another process saves the keyframe again, without rewriting its dependents
    other = _connect(tmp_path / "delta.sqlite")
    (mine,) = other.execute(
        "SELECT checkpoint FROM checkpoints WHERE checkpoint_id < ? AND body_base IS NULL "
        "ORDER BY checkpoint_id DESC LIMIT 1",
        (base,),
    ).fetchone()
    other.execute("UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?", (mine, base))
    other.close()
    with pytest.raises(DeserializationError, match="replaced"):
        saver.get_tuple(config)
    with pytest.raises(DeserializationError, match="replaced"):
        list(saver.list(config))


def test_copy_thread_keeps_bodies_readable(saver: Recording) -> None:
    graph = chain(150).compile(checkpointer=saver)
    graph.invoke({"n": 0}, {"configurable": {"thread_id": "src"}})
    saver.copy_thread("src", "dst")
    assert _rows(saver, "dst") == _rows(saver, "src")
    assert _assert_all_read_back(saver, "dst") == 152
    saver.prune(["dst"], strategy="keep_latest", keep_last=2)
    assert _assert_all_read_back(saver, "dst") == 2


def test_encrypted_saver_stores_changes_sealed(tmp_path: Path) -> None:
    from stategraph.checkpoint.serde.encrypted import EncryptedSerializer

    serde = EncryptedSerializer.from_pycryptodome_aes(key=b"k" * 32)
    conn = _connect(tmp_path / "sealed.sqlite")
    saver = Recording(conn, serde=serde)
    graph = chain(150).compile(checkpointer=saver)
    graph.invoke({"n": 0}, {"configurable": {"thread_id": "t"}})
    rows = _rows(saver, "t")
    assert sum(1 for r in rows if r[1] is not None) > 15
    raw = conn.execute("SELECT checkpoint FROM checkpoints WHERE body_base IS NOT NULL").fetchone()
    assert MARK.encode() not in bytes(raw[0])
    assert _assert_all_read_back(saver, "t") == 152
    saver.copy_thread("t", "t2")
    assert _assert_all_read_back(saver, "t2") == 152
    conn.close()


def test_a_format_4_file_is_migrated_and_reads_on(tmp_path: Path) -> None:
    """``format4_big_graph.sqlite`` was written by the release before format 5: a
    150-node chain on thread "old", stopped after node_5."""
    path = tmp_path / "old.sqlite"
    shutil.copy(FIXTURE, path)
    probe = _connect(path)
    assert probe.execute("SELECT version FROM storage_format").fetchone()[0] == 4
    assert "body_base" not in {r[1] for r in probe.execute("PRAGMA table_info(checkpoints)")}
    old_bodies = {
        t.checkpoint["id"]: t
        for t in SqliteSaver(probe).list({"configurable": {"thread_id": "old"}})
    }
    probe.close()  # (list ran setup: the file is migrated now)
    conn = _connect(path)
    saver = Recording(conn)
    saver.setup()
    assert conn.execute("SELECT version FROM storage_format").fetchone()[0] == VALUES_FORMAT
    applied = [r[0] for r in conn.execute("SELECT v FROM schema_migrations ORDER BY v")]
    assert applied == list(range(len(MIGRATIONS)))
    graph = chain(150).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "old"}}
    state = graph.get_state(config)
    assert state.values == {"n": 6} and state.next == ("node_6",)
    assert len(old_bodies) == 8
    assert graph.invoke(None, config) == {"n": 150}
    rows = _rows(saver, "old")
    assert len(rows) == 8 + 144
    assert sum(1 for r in rows if r[1] is not None) > 15
    for t in saver.list(config):
        cid = t.checkpoint["id"]
        if cid in old_bodies:
            assert t.checkpoint == old_bodies[cid].checkpoint
        else:
            assert {k: t.checkpoint[k] for k in _BODY_KEYS} == saver.bodies[cid]
    conn.close()


def test_newer_format_is_refused_by_this_release(tmp_path: Path) -> None:
    conn = _connect(tmp_path / "new.sqlite")
    SqliteSaver(conn).setup()
    conn.execute("UPDATE storage_format SET version = ?", (VALUES_FORMAT + 1,))
    with pytest.raises(RuntimeError, match="newer stategraph"):
        SqliteSaver(conn).setup()
    conn.close()


def _big_body() -> dict[str, Any]:
    """A checkpoint body "a" of 200 channels and 100 nodes (big enough to be keyframed)."""
    cv = {f"c{i}": f"{i:032}.{i:016x}" for i in range(200)}
    vs = {f"n{i}": {f"c{i}": cv[f"c{i}"]} for i in range(100)}
    return {
        "v": 4,
        "id": "a",
        "ts": "t0",
        "channel_versions": cv,
        "versions_seen": vs,
        "updated_channels": None,
    }


def test_keyframes_encode_and_apply_round_trip() -> None:
    frames = Keyframes()
    body = _big_body()
    cv, vs = body["channel_versions"], body["versions_seen"]
    assert frames.encode(("t", ""), None, body) is None  # no keyframe yet
    frames.commit(("t", ""), "a", body, None, b"stored bytes of a")
    vs["n0"]["c0"] = "mutated after put"  # the caller's dicts are not the frame's
    nxt = copy.deepcopy(body)
    nxt.update(id="b", ts="t1", updated_channels=["c1"])
    nxt["channel_versions"]["c1"] = "new"
    nxt["channel_versions"]["extra"] = "x"
    del nxt["channel_versions"]["c2"]
    nxt["versions_seen"]["n1"] = {"c1": "new"}
    del nxt["versions_seen"]["n3"]
    change = frames.encode(("t", ""), "a", nxt)
    assert change is not None and change[0] == MARK and change[2] == "a"
    assert change[10] == stored_hash(b"stored bytes of a")
    keyframe = {**body, "versions_seen": {**vs, "n0": {"c0": cv["c0"]}}}
    assert apply_delta(change, keyframe, "b") == nxt
    # a parent other than the last body written: stored whole
    assert frames.encode(("t", ""), "zzz", nxt) is None
    # too many changes: stored whole
    many = copy.deepcopy(nxt)
    many["channel_versions"] = {k: "v2" for k in cv}
    assert frames.encode(("t", ""), "a", many) is None


def _step_path_spy(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Record, per change encoded, whether the step's own account was used."""
    from stategraph.checkpoint import _body_delta

    used: list[bool] = []
    real = _body_delta._step_change

    def spy(*args: Any) -> Any:
        found = real(*args)
        used.append(found is not None)
        return found

    monkeypatch.setattr(_body_delta, "_step_change", spy)
    return used


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_runs_hand_what_changed_and_bodies_read_back(
    saver: Recording, monkeypatch: pytest.MonkeyPatch, durability: str
) -> None:
    # a run's puts carry the versions and versions_seen entries the step changed: the
    # change is built from them (not by comparing every entry) and reads back exactly
    used = _step_path_spy(monkeypatch)
    graph = chain(300).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    assert graph.invoke({"n": 0}, config, durability=durability) == {"n": 300}  # type: ignore[arg-type]
    assert len(used) > 100 and all(used)
    assert _assert_all_read_back(saver, "t") == 302


def test_fan_out_steps_and_resumed_runs_read_back(
    saver: Recording, monkeypatch: pytest.MonkeyPatch
) -> None:
    # several nodes per step, and a run resumed after an interrupt (its first save
    # compares every entry: what moved before it is not recorded), read back exactly
    from stategraph.types import Command, interrupt

    builder = StateGraph(W)
    width = 140
    for i in range(width):
        builder.add_node(f"w{i}", lambda s, i=i: {"hits": [i]})
        builder.add_edge(START, f"w{i}")
        builder.add_edge(f"w{i}", "gate")

    def gate(state: W) -> dict[str, Any]:
        return {"hits": [interrupt("go on?")]}

    builder.add_node("gate", gate)
    previous = "gate"
    for i in range(20):
        builder.add_node(f"t{i}", lambda s: {"hits": [-1]})
        builder.add_edge(previous, f"t{i}")
        previous = f"t{i}"
    builder.add_edge(previous, END)
    used = _step_path_spy(monkeypatch)
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "f"}}
    graph.invoke({"hits": []}, config, durability="sync")
    out = graph.invoke(Command(resume=7), config, durability="sync")
    assert len(out["hits"]) == width + 1 + 20 and out["hits"][width] == 7
    assert any(used) and _assert_all_read_back(saver, "f") > 20


def test_a_step_account_that_does_not_add_up_is_not_trusted() -> None:
    from stategraph.checkpoint._step import StepVersions

    frames = Keyframes()
    body = _big_body()
    frames.commit(("t", ""), "a", body, None, b"a")
    nxt = copy.deepcopy(body)
    nxt.update(id="b")
    nxt["channel_versions"]["c1"] = "new"
    nxt["versions_seen"]["n1"] = {"c1": "new"}
    honest = frames.encode(("t", ""), "a", nxt, StepVersions({"c1": "new"}, {"n1"}))
    assert honest is not None and apply_delta(honest, body, "b") == nxt
    assert honest[5] == {"c1": "new"} and honest[7] == {"n1": {"c1": "new"}}
    del nxt["channel_versions"]["c2"]  # a removal the account does not mention
    nxt["versions_seen"]["n2"] = {"c2": "other"}  # nor this
    lying = frames.encode(("t", ""), "a", nxt, StepVersions({"c1": "new"}, {"n1"}))
    assert lying is not None and apply_delta(lying, body, "b") == nxt
    # a version the account names that the body does not have: compared in full too
    wrong = frames.encode(("t", ""), "a", nxt, StepVersions({"c1": "newer"}, {"n1"}))
    assert wrong is not None and apply_delta(wrong, body, "b") == nxt
