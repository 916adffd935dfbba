"""The studio's reading layer: thread indexes over SQLite, PostgreSQL and any saver."""

from __future__ import annotations

import sqlite3

from tests.checkpoint.saver_harness import PgSchema

from stategraph.checkpoint.postgres import PostgresSaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.studio._reading import (
    PostgresThreadIndex,
    SaverThreadIndex,
    SqliteThreadIndex,
    checkpoint_view,
    timeline,
)


def _ids(rows) -> list[str]:
    return [r.thread_id for r in rows]


def test_sqlite_index_matches_the_saver_and_follows_changes(demo_db, demo):
    fast = SqliteThreadIndex(demo_db)
    with SqliteSaver.from_conn_string(demo_db) as saver:
        slow = SaverThreadIndex(saver)
        assert (
            _ids(fast.rows()) == _ids(slow.rows()) == ["waiting", "failed", "rejected", "published"]
        )
        assert [r.checkpoints for r in fast.rows()] == [r.checkpoints for r in slow.rows()]
        assert fast.metadata_matches({"user": "ada"}) == slow.metadata_matches({"user": "ada"})
        assert fast.metadata_matches({"user": "ada"}) == {"waiting", "published"}
        assert fast.metadata_matches({"source": "update"}) == {"rejected"}
        assert fast.metadata_matches({"source": "update"}) == slow.metadata_matches(
            {"source": "update"}
        )
        page, total = fast.page(search="ED", offset=0, limit=1)
        assert total == 3 and _ids(page) == ["failed"]  # failed, rejected, published
        assert fast.namespaces("published")[0] == ""
        assert fast.namespaces("published")[1].startswith("research:")
        entries = timeline(saver, fast, "published").entries
        assert [e.step for e in entries] == [4, 3, 2, 1, 0, -1]
        first = timeline(saver, fast, "published", limit=4)
        assert [e.step for e in first.entries] == [4, 3, 2, 1]
        assert first.entries[3].writes == {"research": ["topic", "sources"]}
        rest = timeline(saver, fast, "published", limit=4, before=first.older)
        assert [e.step for e in rest.entries] == [0, -1] and rest.older is None
        assert entries[0].writes == {"publish": ["status"]}
        assert entries[3].writes == {"research": ["topic", "sources"]}
        view = checkpoint_view(saver, fast, "waiting", None)
        assert view.interrupts[0]["node"] == "review" and view.next == ["review"]
        assert [(k, key) for k, key, _o, _n in view.diff] == [("+", "draft")]
        # another connection writes: the index sees it on the next read, by recounting
        # only the threads with new rows
        assert fast.full_scans == 1
        app = demo.builder.compile(checkpointer=saver)
        app.invoke({"topic": "new"}, {"configurable": {"thread_id": "newest"}})
        app.invoke({"topic": "more"}, {"configurable": {"thread_id": "published"}})
        rows = fast.rows()
        assert _ids(rows)[:2] == ["published", "newest"] and fast.full_scans == 1
        assert rows[0].checkpoints == 6 + 4 and rows[1].checkpoints == 4
        assert _ids(rows) == _ids(slow.rows())
        assert [r.checkpoints for r in rows] == [r.checkpoints for r in slow.rows()]
        # a delete moves the thread up the change feed: recounted, gone
        saver.delete_thread("failed")
        assert "failed" not in _ids(fast.rows()) and fast.full_scans == 1
        # deleted while another thread grew: both recounted
        saver.delete_thread("rejected")
        app.invoke({"topic": "x"}, {"configurable": {"thread_id": "newest"}})
        assert "rejected" not in _ids(fast.rows()) and fast.full_scans == 1
        fast.forget("published")
        assert "published" not in _ids(fast.rows())  # (kept rows: forgotten until it moves)
        app.invoke({"topic": "y"}, {"configurable": {"thread_id": "published"}})
        assert _ids(fast.rows()) == _ids(slow.rows()) and fast.full_scans == 1
    fast.close()


def test_sqlite_index_never_writes(demo_db):
    before = open(demo_db, "rb").read()
    index = SqliteThreadIndex(demo_db)
    index.rows()
    index.metadata_matches({"user": "bob"})
    index.close()
    assert open(demo_db, "rb").read() == before
    conn = sqlite3.connect(f"file:{demo_db}?mode=ro", uri=True)
    assert conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] > 0


def test_postgres_index(demo):
    schema = PgSchema()
    try:
        with PostgresSaver.from_conn_string(schema.conninfo) as saver:
            saver.setup()
            app = demo.builder.compile(checkpointer=saver)
            for thread, user in (("p1", "ada"), ("p2", "bob"), ("p3", "ada")):
                app.invoke(
                    {"topic": thread},
                    {"configurable": {"thread_id": thread}, "metadata": {"user": user}},
                )
            index = PostgresThreadIndex(schema.conninfo)
            assert _ids(index.rows()) == ["p3", "p2", "p1"]
            assert _ids(index.rows()) == _ids(SaverThreadIndex(saver).rows())
            assert index.rows()[0].checkpoints == 4
            assert index.metadata_matches({"user": "ada"}) == {"p1", "p3"}
            app.invoke({"topic": "p4"}, {"configurable": {"thread_id": "p4"}})
            assert _ids(index.rows())[0] == "p4"
            assert index.namespaces("p1")[1].startswith("research:")
            entries = timeline(saver, index, "p1").entries
            assert entries[0].writes == {"write": ["draft"]}
            index.close()
    finally:
        schema.drop()


def test_timeline_after_a_fork_shows_no_routing_only_task(demo_db, demo):
    with SqliteSaver.from_conn_string(demo_db) as saver:
        index = SqliteThreadIndex(demo_db)
        before = {e.step: e.writes for e in timeline(saver, index, "published").entries}
        app = demo.builder.compile(checkpointer=saver)
        step2 = next(s for s in app.get_state_history(tid("published")) if s.metadata["step"] == 2)
        # the studio's fork: update_state(None) on an older checkpoint
        app.update_state(step2.config, None)
        after = timeline(saver, index, "published").entries
        newest = after[0]
        assert (
            newest.step == 3 and newest.parent_id == step2.config["configurable"]["checkpoint_id"]
        )
        # the fork's routing write is not shown as a nameless task, on the fork nor on
        # the original step 3 that shares its parent
        assert newest.writes == {}
        original3 = [e for e in after if e.step == 3 and e is not newest]
        assert [e.writes for e in original3] == [before[3]]
        assert before[3] == {"review": ["__interrupt__", "approved", "comment"]}
        index.close()


def tid(thread_id: str) -> dict[str, dict[str, str]]:
    return {"configurable": {"thread_id": thread_id}}
