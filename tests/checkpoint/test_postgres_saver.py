"""``PostgresSaver`` / ``AsyncPostgresSaver`` specifics: setup and migrations, graphs,
concurrency, connections, atomicity and the JSONB metadata view.

The shared saver contract (including type fidelity) runs for both savers in
``test_saver_suite.py``. Each test here gets a fresh schema (``pg_schema`` fixture).
"""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

import psycopg
import pytest
from psycopg.rows import dict_row
from saver_harness import PgSchema
from typing_extensions import TypedDict

from stategraph.checkpoint.base import Checkpoint, create_checkpoint, empty_checkpoint
from stategraph.checkpoint.postgres import PostgresSaver
from stategraph.checkpoint.postgres._sql import MIGRATIONS
from stategraph.checkpoint.postgres.aio import AsyncPostgresSaver
from stategraph.graph import START, StateGraph
from stategraph.types import Command, interrupt

TABLES = {
    "sg_checkpoints",
    "sg_checkpoint_blobs",
    "sg_checkpoint_writes",
    "sg_checkpoint_format",
    "sg_checkpoint_thread_ttl",
    "sg_checkpoint_items",
}


def put_step(
    saver: PostgresSaver, config: dict[str, Any], parent: Checkpoint, step: int, value: Any
) -> tuple[dict[str, Any], Checkpoint]:
    """Put the child of ``parent`` with channel ``x`` = ``value``; return its config."""
    child = create_checkpoint(parent, None, step)
    version = saver.get_next_version(child["channel_versions"].get("x"), None)
    child["channel_values"]["x"] = value
    child["channel_versions"]["x"] = version
    return saver.put(config, child, {"step": step}, {"x": version}), child


def tables(conn: psycopg.Connection[Any], schema: str) -> set[str]:
    rows = conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
    ).fetchall()
    return {r[0] for r in rows}


def versions(conn: psycopg.Connection[Any]) -> list[int]:
    return [r[0] for r in conn.execute("SELECT v FROM sg_checkpoint_migrations ORDER BY v")]


@pytest.fixture
def saver(pg_schema: PgSchema) -> Iterator[PostgresSaver]:
    conn = pg_schema.connect()
    try:
        yield PostgresSaver(conn)
    finally:
        conn.close()


# -- import ------------------------------------------------------------------------------


def test_import_without_psycopg_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "import stategraph.checkpoint.sqlite, stategraph.checkpoint.memory, stategraph.graph\n"
        "try:\n"
        "    import stategraph.checkpoint.postgres.aio\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert 'pip install "stategraph[postgres]"' in out


def test_other_modules_do_not_import_psycopg() -> None:
    code = (
        "import sys, stategraph, stategraph.graph, stategraph.checkpoint.base\n"
        "import stategraph.checkpoint.sqlite, stategraph.checkpoint.memory\n"
        "print(sorted(m for m in sys.modules if m.startswith('psycopg')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == "[]"


# -- setup and migrations -------------------------------------------------------------


def test_setup_is_idempotent_and_records_migrations(pg_schema: PgSchema) -> None:
    with pg_schema.connect() as conn:
        assert tables(conn, pg_schema.name) == set()
        saver = PostgresSaver(conn)
        saver.setup()
        saver.setup()
        PostgresSaver(conn).setup()  # a second instance finds the schema current
        assert tables(conn, pg_schema.name) == TABLES | {"sg_checkpoint_migrations"}
        assert versions(conn) == list(range(len(MIGRATIONS)))
        indexes = {
            r[0]
            for r in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = %s", (pg_schema.name,)
            )
        }
        assert {"sg_checkpoints_thread_id_idx", "sg_checkpoints_checkpoint_id_idx"} <= indexes


def test_setup_runs_on_first_use_and_applies_missing_migrations(pg_schema: PgSchema) -> None:
    with pg_schema.connect() as conn:
        saver = PostgresSaver(conn)
        config, _ = put_step(saver, {"configurable": {"thread_id": "t"}}, empty_checkpoint(), 0, 1)
        assert versions(conn) == list(range(len(MIGRATIONS)))
        # Pretend the index migration (v3) and the ones after it are new: a fresh saver
        # applies them (and only them).
        conn.execute("DROP INDEX sg_checkpoints_thread_id_idx, sg_checkpoints_checkpoint_id_idx")
        conn.execute("DELETE FROM sg_checkpoint_migrations WHERE v >= 3")
        again = PostgresSaver(conn)
        saved = again.get_tuple(config)
        assert saved is not None and saved.checkpoint["channel_values"] == {"x": 1}
        assert versions(conn) == list(range(len(MIGRATIONS)))
        count = conn.execute(
            "SELECT COUNT(*) FROM pg_indexes WHERE indexname = 'sg_checkpoints_thread_id_idx' "
            "AND schemaname = %s",
            (pg_schema.name,),
        ).fetchone()
        assert count == (1,)


def test_concurrent_setup_from_two_threads() -> None:
    for _ in range(3):  # each round races on a brand-new schema
        schema = PgSchema()
        closers: list[Any] = []
        try:
            conns = [schema.connect() for _ in range(2)]
            closers.extend(conn.close for conn in conns)
            barrier = threading.Barrier(2)

            def run(conn: psycopg.Connection[Any], barrier: threading.Barrier = barrier) -> None:
                saver = PostgresSaver(conn)
                barrier.wait()
                saver.setup()

            with ThreadPoolExecutor(2) as pool:
                list(pool.map(run, conns))
            assert versions(conns[0]) == list(range(len(MIGRATIONS)))
            assert tables(conns[0], schema.name) == TABLES | {"sg_checkpoint_migrations"}
        finally:
            for close in closers:
                close()
            schema.drop()


async def test_async_concurrent_setup(pg_schema: PgSchema) -> None:
    conns = [await pg_schema.aconnect() for _ in range(2)]
    try:
        savers = [AsyncPostgresSaver(conn) for conn in conns]
        await asyncio.gather(*(s.setup() for s in savers))
        await asyncio.gather(*(s.setup() for s in savers))
        with pg_schema.connect() as check:
            assert versions(check) == list(range(len(MIGRATIONS)))
    finally:
        for conn in conns:
            await conn.close()


# -- connections ----------------------------------------------------------------------


def test_from_conn_string_roundtrip_and_close(pg_schema: PgSchema) -> None:
    with PostgresSaver.from_conn_string(pg_schema.conninfo) as saver:
        saver.setup()
        config, _ = put_step(saver, {"configurable": {"thread_id": "t"}}, empty_checkpoint(), 0, 7)
        conn = saver.conn
    assert conn is not None and conn.closed
    with PostgresSaver.from_conn_string(pg_schema.conninfo) as again:
        saved = again.get_tuple(config)
        assert saved is not None and saved.checkpoint["channel_values"] == {"x": 7}


async def test_async_from_conn_string_shares_tables_with_sync(pg_schema: PgSchema) -> None:
    async with AsyncPostgresSaver.from_conn_string(pg_schema.conninfo) as saver:
        await saver.setup()
        checkpoint = empty_checkpoint()
        version = saver.get_next_version(None, None)
        checkpoint["channel_values"] = {"x": {"a": (1, 2)}}
        checkpoint["channel_versions"] = {"x": version}
        config = await saver.aput(
            {"configurable": {"thread_id": "t"}}, checkpoint, {"step": 0}, {"x": version}
        )
        await saver.aput_writes(config, [("x", 2)], "task")
        conn = saver.conn
    assert conn is not None and conn.closed

    def read() -> Any:
        with PostgresSaver.from_conn_string(pg_schema.conninfo) as sync_saver:
            return sync_saver.get_tuple(config)

    saved = await asyncio.to_thread(read)
    assert saved is not None
    assert saved.checkpoint["channel_values"] == {"x": {"a": (1, 2)}}
    assert saved.pending_writes == [("task", "x", 2)]


def test_connection_must_be_autocommit(pg_schema: PgSchema) -> None:
    with pg_schema.connect(autocommit=False) as conn:
        with pytest.raises(ValueError, match=r"autocommit=True"):
            PostgresSaver(conn)
    with pg_schema.connect() as conn:
        saver = PostgresSaver(conn)
        conn.autocommit = False
        with pytest.raises(ValueError, match="autocommit"):
            saver.get_tuple({"configurable": {"thread_id": "t"}})
    with pytest.raises(TypeError, match="AsyncPostgresSaver"):
        PostgresSaver(cast(Any, object()))


async def test_async_saver_checks_its_connection(pg_schema: PgSchema) -> None:
    conn = await pg_schema.aconnect(autocommit=False)
    try:
        with pytest.raises(ValueError, match="autocommit"):
            AsyncPostgresSaver(conn)
    finally:
        await conn.close()
    with pg_schema.connect() as sync_conn, pytest.raises(TypeError, match="PostgresSaver"):
        AsyncPostgresSaver(cast(Any, sync_conn))


def test_any_row_factory_works(pg_schema: PgSchema) -> None:
    # LangGraph's docs open connections with row_factory=dict_row: that must not matter.
    with pg_schema.connect(row_factory=dict_row) as conn:
        saver = PostgresSaver(conn)
        config, _ = put_step(saver, {"configurable": {"thread_id": "t"}}, empty_checkpoint(), 0, 3)
        saver.put_writes(config, [("x", 4)], "task")
        saved = saver.get_tuple(config)
        assert saved is not None and saved.checkpoint["channel_values"] == {"x": 3}
        assert saved.pending_writes == [("task", "x", 4)]
        assert [t.config for t in saver.list(None, filter={"step": 0})] == [config]


@pytest.mark.parametrize("autocommit", [True, False])
def test_connection_pool(pg_schema: PgSchema, autocommit: bool) -> None:
    # Optional dependency: runs only where psycopg_pool is installed.
    pool_mod = pytest.importorskip("psycopg_pool")
    with pool_mod.ConnectionPool(
        pg_schema.conninfo, min_size=2, max_size=4, kwargs={"autocommit": autocommit}, open=False
    ) as pool:
        saver = PostgresSaver(pool)
        with ThreadPoolExecutor(8) as threads:
            list(threads.map(lambda i: _work(saver, i), range(8)))
        _check_threads(saver, 8, 15)
    # Without autocommit the pool commits each call when it takes the connection back.
    with pg_schema.connect() as conn:
        assert conn.execute("SELECT COUNT(*) FROM sg_checkpoints").fetchone() == (120,)


async def test_async_connection_pool(pg_schema: PgSchema) -> None:
    pool_mod = pytest.importorskip("psycopg_pool")
    async with pool_mod.AsyncConnectionPool(
        pg_schema.conninfo, min_size=2, max_size=4, kwargs={"autocommit": True}, open=False
    ) as pool:
        saver = AsyncPostgresSaver(pool)
        checkpoint = empty_checkpoint()
        version = saver.get_next_version(None, None)
        checkpoint["channel_values"] = {"x": 5}
        checkpoint["channel_versions"] = {"x": version}
        configs = await asyncio.gather(
            *(
                saver.aput({"configurable": {"thread_id": f"t{i}"}}, checkpoint, {}, {"x": version})
                for i in range(6)
            )
        )
        for config in configs:
            saved = await saver.aget_tuple(config)
            assert saved is not None and saved.checkpoint["channel_values"] == {"x": 5}


async def test_async_sync_methods(pg_schema: PgSchema) -> None:
    async with AsyncPostgresSaver.from_conn_string(pg_schema.conninfo) as saver:
        with pytest.raises(RuntimeError, match=r"await saver\.aget_tuple"):
            saver.get_tuple({"configurable": {"thread_id": "t"}})

        def sync_program() -> list[Any]:
            config, _ = put_step(
                saver,  # type: ignore[arg-type]
                {"configurable": {"thread_id": "t"}},
                empty_checkpoint(),
                0,
                9,
            )
            saver.put_writes(config, [("x", 10)], "task")
            return list(saver.list(None))

        listed = await asyncio.to_thread(sync_program)
        assert [t.checkpoint["channel_values"] for t in listed] == [{"x": 9}]
        assert listed[0].pending_writes == [("task", "x", 10)]


# -- atomicity and storage -------------------------------------------------------------


def test_failed_put_and_put_writes_leave_nothing(saver: PostgresSaver) -> None:
    saver.setup()
    conn = saver.conn
    assert conn is not None
    conn.execute("ALTER TABLE sg_checkpoints ADD CONSTRAINT t_bad CHECK (checkpoint_id <> 'bad')")
    conn.execute("ALTER TABLE sg_checkpoint_writes ADD CONSTRAINT w_bad CHECK (channel <> 'bad')")
    checkpoint = empty_checkpoint()
    checkpoint["id"] = "bad"
    version = saver.get_next_version(None, None)
    checkpoint["channel_values"] = {"x": 1, "y": 2}
    checkpoint["channel_versions"] = {"x": version, "y": version}
    with pytest.raises(psycopg.errors.CheckViolation):
        saver.put(
            {"configurable": {"thread_id": "t"}}, checkpoint, {}, {"x": version, "y": version}
        )
    assert conn.execute("SELECT COUNT(*) FROM sg_checkpoint_blobs").fetchone() == (0,)
    config, _ = put_step(saver, {"configurable": {"thread_id": "t"}}, empty_checkpoint(), 0, 1)
    with pytest.raises(psycopg.errors.CheckViolation):
        saver.put_writes(config, [("a", 1), ("__error__", "e"), ("bad", 2)], "task")
    assert conn.execute("SELECT COUNT(*) FROM sg_checkpoint_writes").fetchone() == (0,)
    # The connection is still usable (autocommit: no aborted transaction lingers).
    saver.put_writes(config, [("a", 1)], "task")
    saved = saver.get_tuple(config)
    assert saved is not None and saved.pending_writes == [("task", "a", 1)]


def test_same_special_channel_twice_in_one_call(saver: PostgresSaver) -> None:
    config, _ = put_step(saver, {"configurable": {"thread_id": "t"}}, empty_checkpoint(), 0, 1)
    saver.put_writes(config, [("__interrupt__", 1), ("a", 2), ("__interrupt__", 3)], "task")
    saved = saver.get_tuple(config)
    assert saved is not None
    assert saved.pending_writes == [("task", "__interrupt__", 3), ("task", "a", 2)]


def test_metadata_jsonb_view_and_filters(saver: PostgresSaver) -> None:
    big = 2**60
    metas: list[dict[str, Any]] = [
        {"user": "u1", "step": 1, "parents": {"": "p"}, "tags": ("a", "b")},
        {"user": "nul\x00byte", "n": float(big)},
        {"n": big, "x": float("nan"), "obj": {1: "int key"}},
    ]
    configs = []
    for i, meta in enumerate(metas):
        config = {"configurable": {"thread_id": f"t{i}"}}
        configs.append(saver.put(config, empty_checkpoint(), cast(Any, meta), {}))
    conn = saver.conn
    assert conn is not None
    views = {
        r[0]: r[1]
        for r in conn.execute("SELECT thread_id, metadata FROM sg_checkpoints ORDER BY thread_id")
    }
    # The JSONB view keeps every JSON-representable key and leaves the rest out.
    assert views == {
        "t0": {"user": "u1", "step": 1, "parents": {"": "p"}, "tags": ["a", "b"]},
        "t1": {"n": 1152921504606847000},  # JSON numbers are decimal: repr(float(2**60))
        "t2": {"n": big},
    }
    # The exact metadata still round-trips.
    saved = saver.get_tuple(configs[0])
    assert saved is not None and saved.metadata["tags"] == ("a", "b")  # type: ignore[typeddict-item]

    def found(flt: dict[str, Any]) -> list[str]:
        return [t.config["configurable"]["thread_id"] for t in saver.list(None, filter=flt)]

    assert found({"user": "nul\x00byte"}) == ["t1"]  # decided in Python
    assert found({"n": big}) == ["t2", "t1"]  # 2**60 == float(2**60), as in Python
    assert found({"n": float(big)}) == ["t2", "t1"]
    assert found({"tags": ("a", "b")}) == ["t0"]
    assert found({"tags": "a"}) == []  # containment never reaches into arrays
    assert found({"parents": {"": "p"}, "user": "u1"}) == ["t0"]
    assert found({"x": float("nan")}) == []


def test_ordering_is_code_point_order(saver: PostgresSaver) -> None:
    checkpoint = empty_checkpoint()
    threads = ["B", "a", "é", "Z", "a-b", "ab", "A"]
    for thread in threads:
        saver.put({"configurable": {"thread_id": thread}}, checkpoint, {}, {})
    listed = [t.config["configurable"]["thread_id"] for t in saver.list(None)]
    assert listed == sorted(threads, reverse=True)


# -- concurrency ----------------------------------------------------------------------------


def _work(saver: PostgresSaver, i: int) -> None:
    config: dict[str, Any] = {"configurable": {"thread_id": f"thread-{i}"}}
    parent = empty_checkpoint()
    for step in range(15):
        config, parent = put_step(saver, config, parent, step, (i, step))
        saver.put_writes(config, [("x", step), ("__resume__", i)], f"task-{i}")


def _check_threads(saver: PostgresSaver, n: int, steps: int) -> None:
    for i in range(n):
        listed = list(saver.list({"configurable": {"thread_id": f"thread-{i}"}}))
        assert [t.metadata["step"] for t in listed] == list(range(steps - 1, -1, -1))
        assert [t.checkpoint["channel_values"]["x"] for t in listed] == [
            (i, s) for s in range(steps - 1, -1, -1)
        ]
        for newer, older in itertools.pairwise(listed):
            assert newer.parent_config == older.config
        assert all(
            t.pending_writes
            == [(f"task-{i}", "x", t.metadata["step"]), (f"task-{i}", "__resume__", i)]
            for t in listed
        )


def test_eight_threads_share_one_connection(saver: PostgresSaver) -> None:
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: _work(saver, i), range(8)))
    _check_threads(saver, 8, 15)
    assert saver.conn is not None
    assert saver.conn.execute("SELECT COUNT(*) FROM sg_checkpoints").fetchone() == (120,)


def test_eight_threads_one_connection_each(pg_schema: PgSchema) -> None:
    with pg_schema.connect() as conn:
        PostgresSaver(conn).setup()

    def run(i: int) -> None:
        with pg_schema.connect() as conn:
            _work(PostgresSaver(conn), i)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(run, range(8)))
    with pg_schema.connect() as conn:
        _check_threads(PostgresSaver(conn), 8, 15)


def test_parallel_put_writes_on_one_checkpoint(saver: PostgresSaver) -> None:
    config, _ = put_step(saver, {"configurable": {"thread_id": "t"}}, empty_checkpoint(), 0, 0)
    barrier = threading.Barrier(8)

    def task(i: int) -> None:
        barrier.wait()
        for round_ in range(4):
            saver.put_writes(config, [(f"c{i}", round_), ("out", i)], f"task-{i}")

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(task, range(8)))
    saved = saver.get_tuple(config)
    assert saved is not None and saved.pending_writes is not None
    # First write wins per (task, idx); each task's writes stay together and in order.
    assert sorted(saved.pending_writes) == sorted(
        w for i in range(8) for w in [(f"task-{i}", f"c{i}", 0), (f"task-{i}", "out", i)]
    )
    tasks = [w[0] for w in saved.pending_writes]
    for i in range(8):
        at = tasks.index(f"task-{i}")
        assert saved.pending_writes[at : at + 2] == [
            (f"task-{i}", f"c{i}", 0),
            (f"task-{i}", "out", i),
        ]


async def test_async_tasks_share_one_connection(pg_schema: PgSchema) -> None:
    async with AsyncPostgresSaver.from_conn_string(pg_schema.conninfo) as saver:

        async def run(i: int) -> None:
            config: dict[str, Any] = {"configurable": {"thread_id": f"t{i}"}}
            parent = empty_checkpoint()
            for step in range(10):
                child = create_checkpoint(parent, None, step)
                version = saver.get_next_version(child["channel_versions"].get("x"), None)
                child["channel_values"]["x"] = step
                child["channel_versions"]["x"] = version
                config = await saver.aput(config, child, {"step": step}, {"x": version})
                await saver.aput_writes(config, [("x", step)], "task")
                parent = child

        await asyncio.gather(*(run(i) for i in range(8)))
        for i in range(8):
            listed = [t async for t in saver.alist({"configurable": {"thread_id": f"t{i}"}})]
            assert [t.checkpoint["channel_values"]["x"] for t in listed] == list(range(9, -1, -1))
            assert [t.pending_writes for t in listed] == [
                [("task", "x", s)] for s in range(9, -1, -1)
            ]


# -- graphs end to end --------------------------------------------------------------------


class State(TypedDict, total=False):
    question: str
    answer: str
    log: str


def approval_graph(checkpointer: Any) -> Any:
    """START -> ask (interrupts with the question) -> finish."""

    def ask(state: State) -> dict[str, str]:
        return {"answer": interrupt({"q": state["question"]})}

    def finish(state: State) -> dict[str, str]:
        return {"log": f"{state['question']}={state['answer']}"}

    builder: Any = StateGraph(State)
    builder.add_node("ask", ask)
    builder.add_node("finish", finish)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "finish")
    return builder.compile(checkpointer=checkpointer)


def test_graph_interrupt_and_resume(pg_schema: PgSchema) -> None:
    config = {"configurable": {"thread_id": "approval-1"}}
    with PostgresSaver.from_conn_string(pg_schema.conninfo) as saver:
        graph = approval_graph(saver)
        first = graph.invoke({"question": "deploy?"}, config)
        assert first["question"] == "deploy?"
        assert [i.value for i in first["__interrupt__"]] == [{"q": "deploy?"}]
        assert graph.get_state(config).next == ("ask",)
    # A new process (a new connection and graph) resumes the run from PostgreSQL.
    with PostgresSaver.from_conn_string(pg_schema.conninfo) as saver:
        graph = approval_graph(saver)
        result = graph.invoke(Command(resume="yes"), config)
        assert result == {"question": "deploy?", "answer": "yes", "log": "deploy?=yes"}
        snapshot = graph.get_state(config)
        assert snapshot.next == ()
        assert snapshot.values == result
        history = list(graph.get_state_history(config))
        assert [s.metadata["step"] for s in history] == [2, 1, 0, -1]
        assert history[-1].metadata["source"] == "input"


async def test_async_graph_interrupt_and_resume(pg_schema: PgSchema) -> None:
    config = {"configurable": {"thread_id": "approval-async"}}
    async with AsyncPostgresSaver.from_conn_string(pg_schema.conninfo) as saver:
        graph = approval_graph(saver)
        first = await graph.ainvoke({"question": "ship?"}, config)
        assert [i.value for i in first["__interrupt__"]] == [{"q": "ship?"}]
        assert (await graph.aget_state(config)).next == ("ask",)
    async with AsyncPostgresSaver.from_conn_string(pg_schema.conninfo) as saver:
        graph = approval_graph(saver)
        result = await graph.ainvoke(Command(resume="no"), config)
        assert result == {"question": "ship?", "answer": "no", "log": "ship?=no"}
        history = [s async for s in graph.aget_state_history(config)]
        assert history[0].values == result
        assert history[0].next == ()
        await saver.adelete_thread("approval-async")
        assert (await graph.aget_state(config)).values == {}


def test_list_pages_through_equal_ids_of_many_threads(saver: PostgresSaver) -> None:
    checkpoint = empty_checkpoint()
    checkpoint["id"] = "same-id"
    for i in range(150):
        meta: Any = {"i": i, "tags": ["z"]}
        saver.put({"configurable": {"thread_id": f"t{i:03}"}}, checkpoint, meta, {})
    listed = [t.config["configurable"]["thread_id"] for t in saver.list(None)]
    assert listed == [f"t{i:03}" for i in range(149, -1, -1)]
    # A list value cannot go to SQL: that entry runs in Python across pages.
    found = [t.metadata["i"] for t in saver.list(None, filter={"tags": ["z"], "i": 20})]  # type: ignore[typeddict-item]
    assert found == [20]
    assert len(list(saver.list(None, filter={"tags": ["z"]}, limit=120))) == 120
    assert list(saver.list(None, filter={"tags": ["y"]})) == []
