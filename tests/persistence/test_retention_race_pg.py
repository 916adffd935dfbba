"""PostgreSQL retention against a concurrent writer of deltas (real server): a
``delete_for_runs`` that deletes the version a writer's new delta is based on must not
leave that delta without its base. The retention is held between its read and its
deletes while the writer saves; the writer must wait for it (then store its value
whole), and every checkpoint must read back afterwards."""

from __future__ import annotations

import asyncio
import os
import threading
import time
import uuid
from collections.abc import Generator, Iterator
from typing import Any

import pytest

from stategraph.graph import END, START, MessagesState, StateGraph
from stategraph.messages import HumanMessage

psycopg = pytest.importorskip("psycopg")

PG_URL = os.environ.get("STATEGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
WAIT = 60.0


@pytest.fixture
def url() -> Iterator[str]:
    schema = f"sg_race_{uuid.uuid4().hex[:12]}"
    try:
        admin = psycopg.connect(PG_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"PostgreSQL unreachable: {exc}")
    admin.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{PG_URL}?options=-csearch_path%3D{schema}"
    finally:
        admin.execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()


def chat(saver: Any) -> Any:
    b = StateGraph(MessagesState)
    b.add_node("noop", lambda state: {})
    b.add_edge(START, "noop")
    b.add_edge("noop", END)
    return b.compile(checkpointer=saver)


def turn(i: int) -> dict[str, Any]:
    return {"messages": [HumanMessage(f"message {i}", id=f"m{i}")]}


def config(run: str | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = {"configurable": {"thread_id": "chat"}}
    if run is not None:
        conf["metadata"] = {"run_id": run}  # saved with the checkpoints, as a server does
    return conf


def hold_after_read(saver: Any, paused: threading.Event, resume: threading.Event) -> None:
    """Make ``saver``'s retention stop after reading the thread, until ``resume``."""
    original = saver.retain_gen

    def held(tid: str, choose: Any) -> Generator[tuple[str, Any], Any, bool]:
        gen = original(tid, choose)
        rows = yield next(gen)
        paused.set()
        assert resume.wait(WAIT)
        try:
            while True:
                rows = yield gen.send(rows)
        except StopIteration as stop:
            return bool(stop.value)

    saver.retain_gen = held


def waiting_on_advisory_lock(url: str) -> bool:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        ).fetchone()
    return bool(row and row[0])


def check_readable(url: str) -> None:
    from stategraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as cold:
        tuples = list(cold.list(config()))  # raises if a delta lost its base
        assert tuples
        state = chat(cold).get_state(config())
        # turn 3's run is gone; the writer's turn 4 went on from turn 3's state
        assert [m.id for m in state.values["messages"]] == ["m0", "m1", "m2", "m3", "m4"]
        ids = {m.id for t in tuples for m in t.checkpoint["channel_values"].get("messages", [])}
        assert ids == {"m0", "m1", "m2", "m3", "m4"}


def test_delete_for_runs_and_a_delta_writer_on_its_base(url: str) -> None:
    from stategraph.checkpoint.postgres import PostgresSaver

    with (
        PostgresSaver.from_conn_string(url) as writer,
        PostgresSaver.from_conn_string(url) as cleaner,
    ):
        writer.setup()
        graph = chat(writer)
        for i in range(4):
            graph.invoke(turn(i), config(f"run-{i}"))
        paused, resume = threading.Event(), threading.Event()
        hold_after_read(cleaner, paused, resume)
        errors: list[BaseException] = []

        def run(fn: Any) -> threading.Thread:
            def body() -> None:
                try:
                    fn()
                except BaseException as exc:  # reported by the test below
                    errors.append(exc)

            t = threading.Thread(target=body, daemon=True)
            t.start()
            return t

        cleaning = run(lambda: cleaner.delete_for_runs(["run-3"]))
        assert paused.wait(WAIT), "the retention did not start"
        # the writer's next turn is a delta on turn 3's messages, which the retention
        # is about to delete
        writing = run(lambda: graph.invoke(turn(4), config("run-4")))
        deadline = time.monotonic() + WAIT
        while writing.is_alive() and not waiting_on_advisory_lock(url):
            assert time.monotonic() < deadline, "the writer neither finished nor waited"
            time.sleep(0.02)
        resume.set()
        cleaning.join(WAIT)
        writing.join(WAIT)
        assert not cleaning.is_alive() and not writing.is_alive()
        assert not errors, errors
    check_readable(url)


def test_the_async_saver_waits_the_same_way(url: str) -> None:
    from stategraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async def scenario() -> None:
        async with AsyncPostgresSaver.from_conn_string(url) as writer:
            await writer.setup()
            graph = chat(writer)
            for i in range(4):
                await graph.ainvoke(turn(i), config(f"run-{i}"))
            paused, resume = threading.Event(), threading.Event()
            loop = asyncio.get_running_loop()

            async def clean() -> None:
                # the held generator blocks its thread: run the retention in its own loop
                def in_thread() -> None:
                    async def go() -> None:
                        async with AsyncPostgresSaver.from_conn_string(url) as other:
                            hold_after_read(other, paused, resume)
                            await other.adelete_for_runs(["run-3"])

                    asyncio.run(go())

                await loop.run_in_executor(None, in_thread)

            cleaning = asyncio.ensure_future(clean())
            assert await loop.run_in_executor(None, paused.wait, WAIT)
            writing = asyncio.ensure_future(graph.ainvoke(turn(4), config("run-4")))
            deadline = time.monotonic() + WAIT
            while not writing.done():
                if await loop.run_in_executor(None, waiting_on_advisory_lock, url):
                    break
                assert time.monotonic() < deadline, "the writer neither finished nor waited"
                await asyncio.sleep(0.02)
            resume.set()
            await asyncio.wait_for(cleaning, WAIT)
            await asyncio.wait_for(writing, WAIT)

    asyncio.run(scenario())
    check_readable(url)
