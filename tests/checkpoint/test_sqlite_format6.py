"""Storage format 6 of ``SqliteSaver``: metadata stored once, parent ids as 16 bytes,
a new file's ``checkpoints`` without rowid, the change feed ``thread_changes`` and the
partial index of nested checkpoints. Files of the release before (format 5, rowid
``checkpoints``, the full thread index) are migrated and keep reading and writing."""

from __future__ import annotations

import enum
import sqlite3
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

from stategraph.checkpoint.base import create_checkpoint, empty_checkpoint
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite._filters import JSON_METADATA, metadata_json
from stategraph.checkpoint.sqlite._schema import NEW_FILE, pack_id, unpack_id
from stategraph.graph import MessagesState, StateGraph


class Level(enum.IntEnum):
    HIGH = 2


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)


def _format5_file(path: Path) -> sqlite3.Connection:
    """A file as the release before format 6 made it: NEW_FILE of that release (the
    same statements with a rowid ``checkpoints``), migrations 0-9, format 5."""
    conn = _connect(path)
    conn.execute("CREATE TABLE schema_migrations (v INTEGER PRIMARY KEY)")
    for statement in NEW_FILE:
        if statement.startswith("CREATE TABLE checkpoints"):
            statement = statement.replace(") WITHOUT ROWID", ")")
        conn.execute(statement)
    conn.executemany("INSERT INTO schema_migrations (v) VALUES (?)", [(v,) for v in range(10)])
    return conn


def _put(saver: SqliteSaver, thread: str, parent: Any, step: int, **kw: Any) -> dict[str, Any]:
    """Save a checkpoint after ``parent`` (``None``: the first) with metadata ``kw``
    (``checkpoint_id`` and ``ns`` set the id and namespace)."""
    checkpoint = create_checkpoint(empty_checkpoint() if parent is None else parent, None, step)
    if "checkpoint_id" in kw:
        checkpoint["id"] = kw.pop("checkpoint_id")
    conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": kw.pop("ns", "")}
    if parent is not None:
        conf["checkpoint_id"] = parent["id"]
    metadata = {"source": "loop", "step": step, "parents": {}, **kw}
    saver.put({"configurable": conf}, checkpoint, metadata, {})
    return checkpoint


def test_metadata_json_says_whether_it_is_all_of_the_metadata() -> None:
    assert metadata_json({"source": "loop", "step": 3, "parents": {"": "abc"}}) == (
        '{"source":"loop","step":3,"parents":{"":"abc"}}',
        True,
    )
    assert metadata_json({"a": 1.5, "b": True, "c": -1}) == ('{"a":1.5,"b":true,"c":-1}', True)
    # kept for filters, but JSON would not give them back
    assert metadata_json({"n": Decimal("2")}) == ('{"n":2}', False)
    assert metadata_json({"level": Level.HIGH}) == ('{"level":2}', False)
    assert metadata_json({1: "x"}) == ('{"1":"x"}', False)
    assert metadata_json({"t": (1, 2)}) == ("{}", False)
    assert metadata_json({"m": {"k": 1}}) == ("{}", False)  # (only maps of strings)
    assert metadata_json({"s": "a\x00b"}) == ("{}", False)


def test_metadata_is_stored_once_when_json_says_it_all(tmp_path: Path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "m.sqlite")) as saver:
        plain = _put(saver, "t", None, 0)
        odd = _put(saver, "t", plain, 1, n=Decimal("1.5"), pair=(1, 2))
        rows = dict(
            saver.conn.execute(
                "SELECT checkpoint_id, metadata_type || ':' || length(metadata) FROM checkpoints"
            ).fetchall()
        )
        assert rows[plain["id"]] == f"{JSON_METADATA}:0"
        kind, size = rows[odd["id"]].split(":")
        assert kind == "msgpack" and int(size) > 0
        got = {
            t.checkpoint["id"]: t.metadata for t in saver.list({"configurable": {"thread_id": "t"}})
        }
        assert got[plain["id"]] == {"source": "loop", "step": 0, "parents": {}}
        assert got[odd["id"]]["n"] == Decimal("1.5") and got[odd["id"]]["pair"] == (1, 2)
        # filters pushed down to SQL still match scalars only: a map's JSON text never
        assert [t.checkpoint["id"] for t in saver.list(None, filter={"step": 0})] == [plain["id"]]
        assert list(saver.list(None, filter={"parents": "{}"})) == []
        assert len(list(saver.list(None, filter={"parents": {}}))) == 2


def test_parent_ids_are_stored_as_16_bytes_when_canonical(tmp_path: Path) -> None:
    canonical = str(uuid.uuid4())
    assert unpack_id(pack_id(canonical)) == canonical and len(pack_id(canonical)) == 16
    for other in (canonical.upper(), "my-own-id", canonical[:-1] + " ", None):
        assert pack_id(other) == other
    with SqliteSaver.from_conn_string(str(tmp_path / "p.sqlite")) as saver:
        first = _put(saver, "t", None, 0)
        second = _put(saver, "t", first, 1)
        third = _put(saver, "t", second, 2, checkpoint_id="zz-custom")
        fourth = _put(saver, "t", third, 3, checkpoint_id="zz-custom-2")
        stored = dict(
            saver.conn.execute(
                "SELECT checkpoint_id, typeof(parent_checkpoint_id) FROM checkpoints"
            ).fetchall()
        )
        assert stored == {
            first["id"]: "null",
            second["id"]: "blob",
            third["id"]: "blob",
            fourth["id"]: "text",
        }
        parents = {
            t.checkpoint["id"]: (t.parent_config or {}).get("configurable", {}).get("checkpoint_id")
            for t in saver.list({"configurable": {"thread_id": "t"}})
        }
        assert parents == {
            first["id"]: None,
            second["id"]: first["id"],
            third["id"]: second["id"],
            fourth["id"]: "zz-custom",
        }


def test_a_thread_is_listed_across_namespaces_newest_first_page_after_page(
    tmp_path: Path,
) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "l.sqlite")) as saver:
        root = None
        for step in range(260):  # (more than two pages of 100)
            if step % 3:
                root = _put(saver, "t", root, step)
            else:
                _put(saver, "t", None, step, ns=f"child:{step % 4}")
        _put(saver, "other", None, 0)
        conn = saver.conn
        expected = [
            (ns, cid)
            for cid, ns in conn.execute(
                "SELECT checkpoint_id, checkpoint_ns FROM checkpoints WHERE thread_id = 't' "
                "ORDER BY checkpoint_id DESC, checkpoint_ns DESC"
            )
        ]
        assert len(expected) == 260
        got = [
            (t.config["configurable"]["checkpoint_ns"], t.checkpoint["id"])
            for t in saver.list({"configurable": {"thread_id": "t"}})
        ]
        assert got == expected
        before = {"configurable": {"thread_id": "t", "checkpoint_id": expected[150][1]}}
        tail = saver.list({"configurable": {"thread_id": "t"}}, before=before, limit=120)
        assert [t.checkpoint["id"] for t in tail] == [cid for _, cid in expected[151:260]]
        # the statement reads the thread in index order: no sort of the whole thread
        plan = " ".join(
            r[3]
            for r in conn.execute(
                "EXPLAIN QUERY PLAN SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? "
                "AND checkpoint_ns = '' UNION ALL SELECT checkpoint_id FROM checkpoints "
                "WHERE thread_id = ? AND checkpoint_ns != '' ORDER BY checkpoint_id DESC LIMIT 5",
                ("t", "t"),
            )
        )
        assert "checkpoints_nested" in plan and "TEMP B-TREE" not in plan


def _chat(saver: SqliteSaver, thread: str) -> list[Any]:
    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda s: {"messages": [("ai", s["messages"][-1].content * 2)]})
    builder.add_edge("__start__", "echo")
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": thread}}
    for text in ("a" * 200, "b" * 200):
        graph.invoke({"messages": [("user", text)]}, config)
    history = list(graph.get_state_history(config))
    ids = [h.config["configurable"]["checkpoint_id"] for h in history]
    return [  # (ids are random: each parent is compared with the next older one)
        (
            [(m.type, m.content) for m in h.values.get("messages", [])],
            h.next,
            h.metadata,
            None if h.parent_config is None else h.parent_config["configurable"]["checkpoint_id"],
            ids[n + 1] if n + 1 < len(ids) else None,
        )
        for n, h in enumerate(history)
    ]


def test_a_format_5_file_is_migrated_and_reads_and_writes_on(tmp_path: Path) -> None:
    conn = _format5_file(tmp_path / "old.sqlite")
    assert conn.execute("SELECT version FROM storage_format").fetchone()[0] == 5
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "checkpoints_thread_id" in indexes
    written = _chat(SqliteSaver(conn), "old")  # (migrated on first use)
    assert conn.execute("SELECT version FROM storage_format").fetchone()[0] == 6
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "checkpoints_thread_id" not in indexes and "checkpoints_nested" in indexes
    assert conn.execute("SELECT COUNT(*) FROM thread_changes").fetchone()[0] == 1
    assert conn.execute("SELECT MAX(rowid) FROM checkpoints").fetchone()[0] == 6  # kept
    new = SqliteSaver(_connect(tmp_path / "new.sqlite"))
    again = _chat(new, "old")
    assert [w[:3] for w in written] == [a[:3] for a in again] and len(written) == 6
    assert all(w[3] == w[4] for w in written) and all(a[3] == a[4] for a in again)
    assert written[0][2] == {"source": "loop", "step": 4, "parents": {}}


def test_rows_of_the_release_before_read_in_format_6(tmp_path: Path) -> None:
    """Rows written in format 5 (metadata serialized, parent id as text) read back
    the same after the file moved to format 6."""
    path = tmp_path / "rows.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        first = _put(saver, "t", None, 0)
        second = _put(saver, "t", first, 1, note="x")
        expected = [
            (t.metadata, t.parent_config) for t in saver.list({"configurable": {"thread_id": "t"}})
        ]
        metadata = {"source": "loop", "step": 1, "parents": {}, "note": "x"}
        saver.conn.execute(
            "UPDATE checkpoints SET metadata_type = 'msgpack', metadata = ?, "
            "parent_checkpoint_id = ? WHERE checkpoint_id = ?",
            (saver.serde.dumps_typed(metadata)[1], first["id"], second["id"]),
        )
        assert saver.conn.execute(
            "SELECT typeof(parent_checkpoint_id) FROM checkpoints WHERE checkpoint_id = ?",
            (second["id"],),
        ).fetchone() == ("text",)
        got = [
            (t.metadata, t.parent_config) for t in saver.list({"configurable": {"thread_id": "t"}})
        ]
        assert got == expected
