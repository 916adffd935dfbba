"""A new ``SqliteSaver`` file gets the migrated schema at once, its ``writes`` and
``blobs`` tables WITHOUT ROWID (``checkpoints`` keeps its rowid: its rows can be large);
a file of an older release is migrated step by step and keeps its tables. Both read and
write the same."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite._schema import MIGRATIONS, NEW_FILE_AT, VALUES_FORMAT
from stategraph.graph import MessagesState, StateGraph


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)


def _shape(conn: sqlite3.Connection) -> dict[str, Any]:
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        )
    ]
    return {
        "columns": {t: conn.execute(f'PRAGMA table_info("{t}")').fetchall() for t in tables},
        "indexes": sorted(
            r[0]
            for r in conn.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            )
        ),
        "migrations": [r[0] for r in conn.execute("SELECT v FROM schema_migrations ORDER BY v")],
        "format": conn.execute("SELECT * FROM storage_format").fetchall(),
    }


def _without_rowid(conn: sqlite3.Connection) -> set[str]:
    return {
        name
        for name, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
        if sql and sql.rstrip().upper().endswith("WITHOUT ROWID")
    }


def _migrated_step_by_step(path: Path) -> sqlite3.Connection:
    """A file made the way an older release made it: every migration in order."""
    conn = _connect(path)
    conn.execute("CREATE TABLE schema_migrations (v INTEGER PRIMARY KEY)")
    for v, statements in enumerate(MIGRATIONS):
        for statement in statements:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_migrations (v) VALUES (?)", (v,))
    return conn


def _chat(saver: SqliteSaver) -> list[Any]:
    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda s: {"messages": [("ai", s["messages"][-1].content * 2)]})
    builder.add_edge("__start__", "echo")
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    for text in ("a" * 200, "b" * 200):
        graph.invoke({"messages": [("user", text)]}, config)
    return [  # (message ids are random: compared without them)
        (
            [(m.type, m.content) for m in h.values.get("messages", [])],
            h.next,
            h.metadata["step"] if h.metadata else None,
        )
        for h in graph.get_state_history(config)
    ]


def test_a_new_file_has_the_migrated_schema_without_rowids(tmp_path: Path) -> None:
    assert NEW_FILE_AT == 9 < len(MIGRATIONS) - 1  # (migration 10 runs after NEW_FILE)
    new = _connect(tmp_path / "new.sqlite")
    SqliteSaver(new).setup()
    old = _migrated_step_by_step(tmp_path / "old.sqlite")
    SqliteSaver(old).setup()
    assert _shape(new) == _shape(old)
    assert _shape(new)["format"] == [("channel_values", VALUES_FORMAT)]
    assert _without_rowid(new) == {"writes", "blobs", "items"}
    assert _without_rowid(old) == {"items"}
    # the same runs read back the same from both
    assert _chat(SqliteSaver(new)) == _chat(SqliteSaver(old))
    new.close()
    old.close()


def test_a_file_with_tables_of_its_own_is_migrated_not_rebuilt(tmp_path: Path) -> None:
    # a file that already holds one of the saver's tables (written by hand, or by a
    # release that recorded no migrations) gets the migrations, never the new schema
    conn = _connect(tmp_path / "mixed.sqlite")
    conn.execute("CREATE TABLE thread_ttl (thread_id TEXT PRIMARY KEY, touched_at REAL NOT NULL)")
    SqliteSaver(conn).setup()
    assert _without_rowid(conn) == {"items"}
    assert len(_chat(SqliteSaver(conn))) == 6
    conn.close()
