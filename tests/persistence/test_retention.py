"""Retention on the bundled savers (memory, SQLite, async SQLite; sync and async
calls): prune, keep_last, copy_thread, delete_for_runs, TTL sweeps and SQLite space
reclaim. Every kept checkpoint stays readable with exactly the state it had, and
other threads are never touched."""

from __future__ import annotations

import asyncio
import operator
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.channels import DeltaChannel
from stategraph.checkpoint._list_delta import DELTA_TYPE
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from stategraph.graph import END, START, StateGraph
from stategraph.graph.message import add_messages
from stategraph.messages import AIMessage, HumanMessage

COMBOS = [
    ("memory", "sync"),
    ("memory", "async"),
    ("sqlite", "sync"),
    ("aiosqlite", "async"),
    ("postgres", "sync"),
    ("apostgres", "async"),
]
PG_URL = os.environ.get("STATEGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def extend(value: list[Any], writes: Sequence[list[Any]]) -> list[Any]:
    return [*value, *(x for w in writes for x in w)]


class State(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    log: Annotated[list, operator.add]
    notes: Annotated[list, DeltaChannel(extend, snapshot_frequency=4)]


def build(saver: Any) -> Any:
    def bot(state: State) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(f"r{n}", id=f"r{n}")], "log": [n], "notes": [f"n{n}"]}

    b = StateGraph(State)
    b.add_node("bot", bot)
    b.add_edge(START, "bot")
    b.add_edge("bot", END)
    return b.compile(checkpointer=saver)


class Kit:
    def __init__(self, kind: str, mode: str, path: Path, **kw: Any) -> None:
        self.kind, self.mode, self.path = kind, mode, path
        self.loop = asyncio.new_event_loop()
        if kind == "memory":
            self.saver: Any = InMemorySaver(**kw)
        elif kind == "sqlite":
            self.conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self.saver = SqliteSaver(self.conn, **kw)
        elif kind == "aiosqlite":
            self.conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self.saver = AsyncSqliteSaver(self.conn, **kw)
        else:
            import psycopg

            self.schema = f"sg_ret_{uuid.uuid4().hex[:12]}"
            try:
                self.admin = psycopg.connect(PG_URL, autocommit=True, connect_timeout=5)
            except psycopg.OperationalError as exc:
                if os.environ.get("CI"):
                    raise
                pytest.skip(f"PostgreSQL unreachable: {exc}")
            self.admin.execute(f"CREATE SCHEMA {self.schema}")
            self.url = f"{PG_URL}?options=-csearch_path%3D{self.schema}"
            if kind == "postgres":
                from stategraph.checkpoint.postgres import PostgresSaver

                self.pg = psycopg.connect(self.url, autocommit=True)
                self.saver = PostgresSaver(self.pg, **kw)
            else:
                from stategraph.checkpoint.postgres.aio import AsyncPostgresSaver

                async def connect() -> Any:
                    return await psycopg.AsyncConnection.connect(self.url, autocommit=True)

                self.pg = self.loop.run_until_complete(connect())
                self.saver = AsyncPostgresSaver(self.pg, **kw)
        self.graph = build(self.saver)

    def call(self, name: str, *args: Any, **kw: Any) -> Any:
        if self.mode == "async":
            return self.loop.run_until_complete(getattr(self.saver, "a" + name)(*args, **kw))
        return getattr(self.saver, name)(*args, **kw)

    def turns(self, thread: str, n: int, run_id: str | None = None) -> None:
        for i in range(n):
            cfg: dict[str, Any] = {"configurable": {"thread_id": thread}}
            if run_id is not None:
                # a run is known by its metadata run_id, as LangGraph Server saves it
                cfg["metadata"] = {"run_id": run_id}
            msg = HumanMessage(f"{thread}-{i}", id=f"{thread}-{run_id}-{i}")
            if self.mode == "async":
                self.loop.run_until_complete(self.graph.ainvoke({"messages": [msg]}, cfg))
            else:
                self.graph.invoke({"messages": [msg]}, cfg)

    def state(self, config: dict[str, Any]) -> Any:
        if self.mode == "async":
            return self.loop.run_until_complete(self.graph.aget_state(config))
        return self.graph.get_state(config)

    def history(self, thread: str) -> list[Any]:
        cfg = {"configurable": {"thread_id": thread}}
        if self.mode == "async":

            async def collect() -> list[Any]:
                return [s async for s in self.graph.aget_state_history(cfg)]

            return self.loop.run_until_complete(collect())
        return list(self.graph.get_state_history(cfg))

    def close(self) -> None:
        if self.kind == "aiosqlite":
            self.saver._executor.shutdown(wait=True)
        if self.kind in ("sqlite", "aiosqlite"):
            self.conn.close()
        if self.kind == "postgres":
            self.pg.close()
        if self.kind == "apostgres":
            self.loop.run_until_complete(self.pg.close())
        if self.kind in ("postgres", "apostgres"):
            self.admin.execute(f"DROP SCHEMA {self.schema} CASCADE")
            self.admin.close()
        self.loop.close()


@pytest.fixture(params=COMBOS, ids=["-".join(c) for c in COMBOS])
def kit(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Kit]:
    k = Kit(*request.param, tmp_path / "db.sqlite")
    try:
        yield k
    finally:
        k.close()


def view(snapshots: list[Any]) -> list[Any]:
    return [(s.config, s.values, s.next, s.metadata) for s in snapshots]


def cold_values(kit: Kit, thread: str) -> list[Any]:
    """The stored values as a saver with nothing in memory reads them."""
    if kit.kind == "memory":
        cold: Any = InMemorySaver()
        cold.storage, cold.writes, cold.blobs = kit.saver.storage, kit.saver.writes, kit.saver.blobs
        cold.items = kit.saver.items
    elif kit.kind in ("postgres", "apostgres"):
        import psycopg

        from stategraph.checkpoint.postgres import PostgresSaver

        with psycopg.connect(kit.url, autocommit=True) as conn:
            return [
                t.checkpoint["channel_values"]
                for t in PostgresSaver(conn).list({"configurable": {"thread_id": thread}})
            ]
    else:
        cold = SqliteSaver(kit.conn)
    return [
        t.checkpoint["channel_values"] for t in cold.list({"configurable": {"thread_id": thread}})
    ]


def test_prune_keep_latest_keeps_the_state_and_leaves_other_threads(kit: Kit) -> None:
    kit.turns("a", 12)
    kit.turns("b", 3)
    a_cfg = {"configurable": {"thread_id": "a"}}
    before = kit.state(a_cfg)
    b_before = view(kit.history("b"))
    kit.call("prune", ["a"])
    after = kit.state(a_cfg)
    assert (after.values, after.next, after.config) == (before.values, before.next, before.config)
    remaining = kit.history("a")
    # the head, plus the ancestors its DeltaChannel value is rebuilt from
    assert remaining[0].config == before.config
    assert len(remaining) < 8
    assert view(kit.history("b")) == b_before
    assert cold_values(kit, "a")[0]["messages"] == before.values["messages"]
    # the thread goes on from the pruned head
    kit.turns("a", 2, run_id="more")
    final = kit.state(a_cfg).values
    assert [m.content for m in final["messages"]][-4:] == ["a-0", "r25", "a-1", "r27"]
    assert final["notes"] == [f"n{i}" for i in range(1, 28, 2)]


def test_prune_keep_last_and_delete(kit: Kit) -> None:
    kit.turns("a", 6)
    kit.turns("b", 2)
    full = view(kit.history("a"))
    kit.call("prune", ["a"], keep_last=5)
    kept = view(kit.history("a"))
    assert kept[:5] == full[:5]
    kit.call("prune", ["a", "b"], strategy="delete")
    assert kit.history("a") == [] and kit.history("b") == []


def test_prune_rejects_bad_arguments(kit: Kit) -> None:
    with pytest.raises(TypeError, match=r"pass \['a'\]"):
        kit.saver.prune("a")
    with pytest.raises(ValueError, match="strategy='nope'"):
        kit.saver.prune(["a"], strategy="nope")
    with pytest.raises(ValueError, match="keep_last=0"):
        kit.saver.prune(["a"], keep_last=0)


def test_delete_for_runs(kit: Kit) -> None:
    kit.turns("a", 2, run_id="run-1")
    kit.turns("a", 2, run_id="run-2")
    kit.turns("b", 1, run_id="run-1")
    head = kit.state({"configurable": {"thread_id": "a"}})
    kit.call("delete_for_runs", ["run-1"])
    left = kit.history("a")
    assert {s.metadata.get("run_id") for s in left} <= {"run-2", "run-1"}
    assert sum(s.metadata.get("run_id") == "run-2" for s in left) == 6
    # run-1 checkpoints remain only where run-2's DeltaChannel values need them
    assert sum(s.metadata.get("run_id") == "run-1" for s in left) < 6
    assert kit.state({"configurable": {"thread_id": "a"}}).values == head.values
    assert kit.history("b") == []


def test_copy_thread(kit: Kit) -> None:
    kit.turns("src", 3)
    kit.call("copy_thread", "src", "dst")
    src, dst = kit.history("src"), kit.history("dst")
    assert [s.values for s in dst] == [s.values for s in src]
    assert [s.config["configurable"]["checkpoint_id"] for s in dst] == [
        s.config["configurable"]["checkpoint_id"] for s in src
    ]
    kit.turns("dst", 1)
    assert len(kit.history("src")) == len(src)
    with pytest.raises(ValueError, match="already has checkpoints"):
        kit.call("copy_thread", "src", "dst")
    with pytest.raises(ValueError, match="has no checkpoints"):
        kit.call("copy_thread", "nothing", "other")


def test_ttl_sweep_and_refresh_on_read(tmp_path: Path) -> None:
    for kind in ("memory", "sqlite", "postgres"):
        k = Kit(kind, "sync", tmp_path / f"{kind}.sqlite", ttl={"default_ttl": 0.002})
        try:
            k.turns("old", 1)
            k.turns("read", 1)
            time.sleep(0.3)
            k.state({"configurable": {"thread_id": "read"}})  # refreshed by this read
            assert k.saver.sweep() == 1
            assert k.history("old") == []
            assert len(k.history("read")) == 3
        finally:
            k.close()
    with pytest.raises(ValueError, match="'default_ttl' must be a positive number"):
        InMemorySaver(ttl={"default_ttl": 0})
    with pytest.raises(ValueError, match="unknown setting"):
        InMemorySaver(ttl={"default_ttl": 1, "sweep_every": 2})  # type: ignore[typeddict-unknown-key]
    with pytest.raises(ValueError, match="needs a ttl"):
        InMemorySaver().start_ttl_sweeper()


def test_background_sweeper(tmp_path: Path) -> None:
    saver = InMemorySaver(ttl={"default_ttl": 0.001, "sweep_interval_minutes": 0.001})
    graph = build(saver)
    graph.invoke({"messages": [HumanMessage("x")]}, {"configurable": {"thread_id": "t"}})
    saver.start_ttl_sweeper()
    try:
        deadline = time.time() + 5
        while saver.storage.get("t") and time.time() < deadline:
            time.sleep(0.02)
    finally:
        saver.stop_ttl_sweeper()
    assert "t" not in saver.storage


def test_sqlite_gives_space_back(tmp_path: Path) -> None:
    path = tmp_path / "space.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        graph = build(saver)
        for t in range(4):
            for i in range(15):
                graph.invoke(
                    {"messages": [HumanMessage("z" * 2000, id=f"{t}-{i}")]},
                    {"configurable": {"thread_id": f"t{t}"}},
                )
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages_before = saver.conn.execute("PRAGMA page_count").fetchone()[0]
        assert saver.conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental
        saver.prune(["t0", "t1", "t2"], strategy="delete")
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages_after = saver.conn.execute("PRAGMA page_count").fetchone()[0]
        assert pages_after < pages_before * 0.6
        saver.vacuum()
        assert len(list(saver.list({"configurable": {"thread_id": "t3"}}))) == 45


def test_vacuum_converts_an_old_file(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA auto_vacuum = NONE")
    conn.execute("CREATE TABLE filler (x)")
    conn.close()
    with SqliteSaver.from_conn_string(str(path)) as saver:
        saver.setup()
        assert saver.conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 0
        saver.vacuum()
        assert saver.conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2


WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    from test_retention import build
    from stategraph.checkpoint.sqlite import SqliteSaver
    from stategraph.messages import HumanMessage
    with SqliteSaver.from_conn_string({db!r}) as saver:
        graph = build(saver)
        for i in range({n}):
            graph.invoke({{"messages": [HumanMessage(f"w{{i}}", id=f"w{{i}}")]}},
                         {{"configurable": {{"thread_id": "busy"}}}})
    """
)


def test_prune_while_another_process_writes(tmp_path: Path) -> None:
    db = str(tmp_path / "shared.sqlite")
    n = 40
    with SqliteSaver.from_conn_string(db) as saver:
        saver.setup()
        graph = build(saver)
        for i in range(3):
            graph.invoke(
                {"messages": [HumanMessage(f"o{i}", id=f"o{i}")]},
                {"configurable": {"thread_id": "other"}},
            )
        other_before = [t.checkpoint for t in saver.list({"configurable": {"thread_id": "other"}})]
        code = WRITER.format(tests=str(Path(__file__).parent), db=db, n=n)
        proc = subprocess.Popen([sys.executable, "-c", code])
        prunes = 0
        while proc.poll() is None:
            saver.prune(["busy"])
            prunes += 1
            state = graph.get_state({"configurable": {"thread_id": "busy"}})
            contents = [m.content for m in state.values.get("messages", [])]
            # always a consistent prefix of the writer's conversation
            assert contents == [
                x for i in range(len(contents) // 2) for x in (f"w{i}", f"r{2 * i + 1}")
            ] or (len(contents) % 2 == 1)
            time.sleep(0.01)
        assert proc.returncode == 0
        assert prunes > 1
        final = graph.get_state({"configurable": {"thread_id": "busy"}}).values
        assert [m.content for m in final["messages"]] == [
            x for i in range(n) for x in (f"w{i}", f"r{2 * i + 1}")
        ]
        assert final["notes"] == [f"n{2 * i + 1}" for i in range(n)]
        assert [
            t.checkpoint for t in saver.list({"configurable": {"thread_id": "other"}})
        ] == other_before
        # nothing left that a kept checkpoint cannot read
        kinds = {
            r[0] for r in saver.conn.execute("SELECT type FROM blobs WHERE thread_id = 'busy'")
        }
        assert kinds
        with SqliteSaver.from_conn_string(db) as cold:
            assert [t.checkpoint["channel_values"].get("messages") for t in cold.list(None)] == [
                t.checkpoint["channel_values"].get("messages") for t in saver.list(None)
            ]
        assert DELTA_TYPE  # delta blobs may remain: their bases are kept or rebased


def test_async_postgres_background_sweeper(tmp_path: Path) -> None:
    k = Kit(
        "apostgres",
        "async",
        tmp_path / "unused",
        # reads every 0.1 s below must not keep the thread alive
        ttl={"default_ttl": 0.002, "sweep_interval_minutes": 0.002, "refresh_on_read": False},
    )
    try:
        k.turns("gone", 1)

        async def wait_for_sweep() -> list[Any]:
            k.saver.start_ttl_sweeper()
            try:
                deadline = time.time() + 10
                while time.time() < deadline:
                    await asyncio.sleep(0.1)
                    left = [
                        s
                        async for s in k.graph.aget_state_history(
                            {"configurable": {"thread_id": "gone"}}
                        )
                    ]
                    if not left:
                        return left
                return left
            finally:
                k.saver.stop_ttl_sweeper()

        assert k.loop.run_until_complete(wait_for_sweep()) == []
    finally:
        k.close()
