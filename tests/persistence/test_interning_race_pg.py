"""PostgreSQL retention against a concurrent writer of interned items (real server):
a retention's garbage collection must not delete an item that a writer references
while the retention runs. The writer saves a pending write whose message is already
stored as an item that only the checkpoints being deleted refer to: its insert finds
the item present and adds nothing, so without the lock the retention (whose snapshot
predates the write) would collect it and leave the write dangling. The writer must
wait for the retention, then store the item again; everything reads back."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Generator
from typing import Any

import pytest
from test_interning import TEXT
from test_retention_race_pg import WAIT, url, waiting_on_advisory_lock  # noqa: F401

from stategraph.graph import END, START, MessagesState, StateGraph
from stategraph.messages import HumanMessage

psycopg = pytest.importorskip("psycopg")


def chat(saver: Any) -> Any:
    b = StateGraph(MessagesState)
    b.add_node("noop", lambda state: {})
    b.add_edge(START, "noop")
    b.add_edge("noop", END)
    return b.compile(checkpointer=saver)


def message(i: int) -> HumanMessage:
    return HumanMessage(f"m{i} {TEXT}", id=f"m{i}")


def config(run: str | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = {"configurable": {"thread_id": "chat"}}
    if run is not None:
        conf["metadata"] = {"run_id": run}  # saved with the checkpoints, as a server does
    return conf


def hold_before_collect(saver: Any, paused: threading.Event, resume: threading.Event) -> None:
    """Make ``saver``'s retention stop once it deleted the checkpoints, before it
    marks the referenced items, until ``resume``."""
    original = saver.retain_gen

    def held(tid: str, choose: Any) -> Generator[tuple[str, Any], Any, bool]:
        from stategraph.checkpoint.postgres import _sql

        gen = original(tid, choose)
        rows: Any = None
        try:
            while True:
                sql, params = gen.send(rows)
                if sql == _sql.THREAD_REFERRING:
                    paused.set()
                    assert resume.wait(WAIT)
                rows = yield (sql, params)
        except StopIteration as stop:
            return bool(stop.value)

    saver.retain_gen = held


def check(url: str) -> None:  # noqa: F811
    from stategraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as cold:
        for t in cold.list(None):  # raises if a reference dangles
            assert isinstance(t.checkpoint["channel_values"], dict)
        latest = cold.get_tuple(config())
        assert latest is not None
        assert [w[2][0].id for w in latest.pending_writes if w[1] == "messages"] == ["m3"]
        with psycopg.connect(url, autocommit=True) as conn:
            n = conn.execute("SELECT COUNT(*) FROM sg_checkpoint_items").fetchone()
        assert n == (4,)  # m0..m2 in the history, m3 in the pending write


def test_a_writer_referencing_an_item_the_retention_collects(url: str) -> None:  # noqa: F811
    from stategraph.checkpoint.postgres import PostgresSaver

    with (
        PostgresSaver.from_conn_string(url) as writer,
        PostgresSaver.from_conn_string(url) as cleaner,
    ):
        writer.setup()
        graph = chat(writer)
        for i in range(4):
            graph.invoke({"messages": [message(i)]}, config(f"run-{i}"))
        target = next(iter(writer.list(config(), filter={"run_id": "run-2"}))).config
        paused, resume = threading.Event(), threading.Event()
        hold_before_collect(cleaner, paused, resume)
        errors: list[BaseException] = []

        def run(fn: Any) -> threading.Thread:
            def body() -> None:
                try:
                    fn()
                except BaseException as exc:  # reported below
                    errors.append(exc)

            t = threading.Thread(target=body, daemon=True)
            t.start()
            return t

        cleaning = run(lambda: cleaner.delete_for_runs(["run-3"]))
        assert paused.wait(WAIT), "the retention did not start"
        writing = run(lambda: writer.put_writes(target, [("messages", [message(3)])], "task-x"))
        deadline = time.monotonic() + WAIT
        while writing.is_alive() and not waiting_on_advisory_lock(url):
            assert time.monotonic() < deadline, "the writer neither finished nor waited"
            time.sleep(0.02)
        assert writing.is_alive(), "the writer did not wait for the retention"
        resume.set()
        cleaning.join(WAIT)
        writing.join(WAIT)
        assert not cleaning.is_alive() and not writing.is_alive()
        assert not errors, errors
    check(url)


def test_the_async_saver_waits_the_same_way(url: str) -> None:  # noqa: F811
    from stategraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async def scenario() -> None:
        async with AsyncPostgresSaver.from_conn_string(url) as writer:
            await writer.setup()
            graph = chat(writer)
            for i in range(4):
                await graph.ainvoke({"messages": [message(i)]}, config(f"run-{i}"))
            found = [t async for t in writer.alist(config(), filter={"run_id": "run-2"})]
            target = found[0]
            paused, resume = threading.Event(), threading.Event()
            loop = asyncio.get_running_loop()

            def in_thread() -> None:
                async def go() -> None:
                    async with AsyncPostgresSaver.from_conn_string(url) as other:
                        hold_before_collect(other, paused, resume)
                        await other.adelete_for_runs(["run-3"])

                asyncio.run(go())

            cleaning = loop.run_in_executor(None, in_thread)
            assert await loop.run_in_executor(None, paused.wait, WAIT)
            writing = asyncio.ensure_future(
                writer.aput_writes(target.config, [("messages", [message(3)])], "task-x")
            )
            deadline = time.monotonic() + WAIT
            waited = False
            while not writing.done():
                if await loop.run_in_executor(None, waiting_on_advisory_lock, url):
                    waited = True
                    break
                assert time.monotonic() < deadline, "the writer neither finished nor waited"
                await asyncio.sleep(0.02)
            assert waited and not writing.done()
            resume.set()
            await asyncio.wait_for(cleaning, WAIT)
            await asyncio.wait_for(writing, WAIT)

    asyncio.run(scenario())
    check(url)
