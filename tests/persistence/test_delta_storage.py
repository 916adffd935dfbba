"""Delta storage of list values in the savers: the same graph run with
``delta_storage`` on and off gives identical histories (values, tasks, metadata,
stored checkpoint tuples), on every saver kind; the stored bytes stay flat per step;
a cold reader (a new saver on the same file) rebuilds every version."""

from __future__ import annotations

import asyncio
import operator
import os
import re
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.channels import Topic
from stategraph.checkpoint import _list_delta
from stategraph.checkpoint.base import BaseCheckpointSaver
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from stategraph.graph import END, START, StateGraph
from stategraph.graph.message import add_messages
from stategraph.messages import AIMessage, HumanMessage, RemoveMessage
from stategraph.types import Command, interrupt

KINDS = ["memory", "sqlite", "aiosqlite", "postgres", "apostgres"]
PG_URL = os.environ.get("STATEGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


class State(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    log: Annotated[list, operator.add]
    events: Annotated[list, Topic(str, accumulate=True)]
    note: str


def build(saver: BaseCheckpointSaver[Any]) -> Any:
    def bot(state: State) -> dict[str, Any]:
        msgs = state["messages"]
        last = msgs[-1]
        out: dict[str, Any] = {
            "messages": [AIMessage(f"re: {last.content}", id=f"ai-{len(msgs)}")],
            "log": [f"bot{len(msgs)}"],
            "events": f"e{len(msgs)}",
        }
        if last.content == "edit":
            # replace an early message by id, remove another
            out["messages"] = [
                HumanMessage("edited first", id=msgs[0].id),
                RemoveMessage(id=msgs[1].id),
                *out["messages"],
            ]
        return out

    def review(state: State) -> dict[str, Any]:
        if state["messages"][-2].content == "ask":
            answer = interrupt("approve?")
            return {"note": str(answer), "log": [f"review:{answer}"]}
        return {"log": ["review"]}

    b = StateGraph(State)
    b.add_node("bot", bot)
    b.add_node("review", review)
    b.add_edge(START, "bot")
    b.add_edge("bot", "review")
    b.add_edge("review", END)
    return b.compile(checkpointer=saver)


class Driver:
    """One saver kind, sync or async, with delta storage on or off."""

    def __init__(self, kind: str, path: Path, delta: bool) -> None:
        self.kind = kind
        self.loop = asyncio.new_event_loop()
        if kind == "memory":
            self.saver: Any = InMemorySaver(delta_storage=delta)
        elif kind == "sqlite":
            self.conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self.saver = SqliteSaver(self.conn, delta_storage=delta)
        elif kind in ("postgres", "apostgres"):
            import psycopg

            self.schema = f"sg_delta_{uuid.uuid4().hex[:12]}"
            try:
                self.admin = psycopg.connect(PG_URL, autocommit=True, connect_timeout=5)
            except psycopg.OperationalError as exc:
                if os.environ.get("CI"):
                    raise
                pytest.skip(f"PostgreSQL unreachable: {exc}")
            self.admin.execute(f"CREATE SCHEMA {self.schema}")
            url = f"{PG_URL}?options=-csearch_path%3D{self.schema}"
            if kind == "postgres":
                from stategraph.checkpoint.postgres import PostgresSaver

                self.pg = psycopg.connect(url, autocommit=True)
                self.saver = PostgresSaver(self.pg, delta_storage=delta)
            else:
                from stategraph.checkpoint.postgres.aio import AsyncPostgresSaver

                async def connect() -> Any:
                    return await psycopg.AsyncConnection.connect(url, autocommit=True)

                self.pg = self.run(connect())
                self.saver = AsyncPostgresSaver(self.pg, delta_storage=delta)
        else:
            self.conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self.saver = AsyncSqliteSaver(self.conn, delta_storage=delta)
        self.graph = build(self.saver)

    def run(self, coro_or_value: Any) -> Any:
        return self.loop.run_until_complete(coro_or_value)

    @property
    def is_async(self) -> bool:
        return self.kind in ("aiosqlite", "apostgres")

    def invoke(self, inp: Any, config: dict[str, Any]) -> Any:
        if self.is_async:
            return self.run(self.graph.ainvoke(inp, config))
        return self.graph.invoke(inp, config)

    def history(self, config: dict[str, Any]) -> list[Any]:
        if self.is_async:

            async def collect() -> list[Any]:
                return [s async for s in self.graph.aget_state_history(config)]

            return self.run(collect())
        return list(self.graph.get_state_history(config))

    def update(self, config: dict[str, Any], values: Any) -> Any:
        if self.is_async:
            return self.run(self.graph.aupdate_state(config, values))
        return self.graph.update_state(config, values)

    def tuples(self) -> list[Any]:
        if self.is_async:

            async def collect() -> list[Any]:
                return [t async for t in self.saver.alist(None)]

            return self.run(collect())
        return list(self.saver.list(None))

    def cold_tuples(self) -> list[Any]:
        """Every stored tuple read by a new saver on the same storage (nothing cached)."""
        if self.kind == "memory":
            cold: Any = InMemorySaver()
            cold.storage, cold.writes, cold.blobs = (
                self.saver.storage,
                self.saver.writes,
                self.saver.blobs,
            )
            cold.items = self.saver.items
            return list(cold.list(None))
        if self.kind in ("sqlite", "aiosqlite"):
            return list(SqliteSaver(self.conn).list(None))
        if self.kind == "postgres":
            from stategraph.checkpoint.postgres import PostgresSaver

            return list(PostgresSaver(self.pg).list(None))
        from stategraph.checkpoint.postgres.aio import AsyncPostgresSaver

        async def collect() -> list[Any]:
            return [t async for t in AsyncPostgresSaver(self.pg).alist(None)]

        return self.run(collect())

    def close(self) -> None:
        if self.kind == "aiosqlite":
            self.saver._executor.shutdown(wait=True)
        if self.kind in ("sqlite", "aiosqlite"):
            self.conn.close()
        if self.kind == "postgres":
            self.pg.close()
        if self.kind == "apostgres":
            self.run(self.pg.close())
        if self.kind in ("postgres", "apostgres"):
            self.admin.execute(f"DROP SCHEMA {self.schema} CASCADE")
            self.admin.close()
        self.loop.close()


def scenario(d: Driver) -> None:
    """Turns, an interrupt and its resume, edits by id, a replay and two forks."""
    t = {"configurable": {"thread_id": "t"}}
    for i, text in enumerate(["hello", "more", "ask", "x", "edit", "y", "z"]):
        d.invoke({"messages": [HumanMessage(text, id=f"h{i}")], "log": [text]}, t)
        if text == "ask":
            d.invoke(Command(resume="yes"), t)
    history = d.history(t)
    old = history[len(history) // 2].config
    d.invoke(None, old)  # replay from the middle
    fork = d.update(old, {"messages": [HumanMessage("forked", id="f")], "note": "fork"})
    d.invoke({"messages": [HumanMessage("after fork", id="af")]}, fork)
    d.update(t, {"log": ["manual"]})
    d.invoke({"messages": [HumanMessage("end", id="end")]}, t)
    u = {"configurable": {"thread_id": "u"}}
    for i in range(30):
        d.invoke({"messages": [HumanMessage(f"m{i}", id=f"u{i}")], "log": [i]}, u)


def describe(snapshots: list[Any]) -> list[Any]:
    return [
        (s.values, s.next, s.config, s.metadata, s.parent_config, s.tasks, s.interrupts)
        for s in snapshots
    ]


@pytest.fixture(params=KINDS)
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Driver, Driver]]:
    on = Driver(request.param, tmp_path / "on.sqlite", True)
    off = Driver(request.param, tmp_path / "off.sqlite", False)
    try:
        yield on, off
    finally:
        on.close()
        off.close()


_RANDOM = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # uuids
    r"|\d{32}\.[0-9a-f]{16}"  # channel versions
    r"|\b[0-9a-f]{32}\b"  # interrupt ids
    r"|\d{4}-\d\d-\d\dT[0-9:.]+\+00:00"  # timestamps
)


def _normalize(obj: Any) -> str:
    """``repr(obj)`` with checkpoint ids, versions, interrupt ids and timestamps
    (random per run) replaced by their first-seen order, so two runs compare."""
    seen: dict[str, str] = {}
    return _RANDOM.sub(lambda m: seen.setdefault(m.group(0), f"#{len(seen)}"), repr(obj))


def test_delta_on_and_off_give_identical_histories(pair: tuple[Driver, Driver]) -> None:
    on, off = pair
    scenario(on)
    scenario(off)
    for thread in ("t", "u"):
        cfg = {"configurable": {"thread_id": thread}}
        a, b = describe(on.history(cfg)), describe(off.history(cfg))
        assert len(a) == len(b) > 10
        assert _normalize(a) == _normalize(b)
    # raw checkpoint tuples too, across every thread and namespace
    ta = [(t.checkpoint["channel_values"], t.pending_writes, t.metadata) for t in on.tuples()]
    tb = [(t.checkpoint["channel_values"], t.pending_writes, t.metadata) for t in off.tuples()]
    assert _normalize(ta) == _normalize(tb)
    # a new saver on the same storage, with nothing in memory, reads the same
    cold = [
        (t.checkpoint["channel_values"], t.pending_writes, t.metadata) for t in on.cold_tuples()
    ]
    assert _normalize(cold) == _normalize(ta)


def test_deltas_are_stored_and_a_cold_reader_rebuilds_them(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    d = Driver("sqlite", path, True)
    try:
        scenario(d)
        expected = [(t.config, t.checkpoint["channel_values"]) for t in d.tuples()]
    finally:
        d.close()
    conn = sqlite3.connect(path)
    kinds = dict(conn.execute("SELECT type, COUNT(*) FROM blobs GROUP BY type").fetchall())
    conn.close()
    assert kinds.get(_list_delta.DELTA_TYPE, 0) > 20
    # a new process: nothing cached, every version rebuilt from the file
    with SqliteSaver.from_conn_string(str(path)) as cold:
        assert [(t.config, t.checkpoint["channel_values"]) for t in cold.list(None)] == expected
        # newest first and oldest first give the same values
        again = list(
            reversed([(t.config, t.checkpoint["channel_values"]) for t in cold.list(None)])
        )
        assert list(reversed(again)) == expected


def test_bytes_per_turn_stay_flat() -> None:
    saver = InMemorySaver()
    graph = build(saver)
    cfg = {"configurable": {"thread_id": "flat"}}

    def stored() -> int:
        return sum(len(b[1]) for b in saver.blobs.values() if b is not None)

    sizes = []
    for i in range(120):
        before = stored()
        graph.invoke({"messages": [HumanMessage("m" * 300, id=f"m{i}")]}, cfg)
        sizes.append(stored() - before)
    # the value blobs of a turn do not grow with the thread (snapshots aside)
    late = sorted(sizes[100:])
    early = sorted(sizes[10:20])
    assert late[len(late) // 2] <= early[len(early) // 2] * 1.2
    assert sum(sizes) < 120 * 300 * 8


def test_missing_base_and_unknown_format_raise_clear_errors() -> None:
    saver = InMemorySaver()
    graph = build(saver)
    cfg = {"configurable": {"thread_id": "x"}}
    for i in range(4):
        graph.invoke({"messages": [HumanMessage(f"m{i}", id=f"m{i}")]}, cfg)
    deltas = [k for k, b in saver.blobs.items() if b is not None and b[0] == _list_delta.DELTA_TYPE]
    assert deltas
    head = saver.get_tuple(cfg)
    assert head is not None
    fresh = InMemorySaver()
    fresh.storage, fresh.writes, fresh.blobs = saver.storage, saver.writes, dict(saver.blobs)
    fresh.items = saver.items
    fresh._latest = saver._latest
    # drop every non-delta value of the messages channel: the chains lose their base
    for k in [
        k
        for k, b in fresh.blobs.items()
        if k[2] == "messages" and b and b[0] != _list_delta.DELTA_TYPE
    ]:
        del fresh.blobs[k]
    with pytest.raises(ValueError, match="is missing"):
        list(fresh.list(cfg))
    import ormsgpack

    future = InMemorySaver()
    future.storage, future.writes, future.blobs = saver.storage, saver.writes, dict(saver.blobs)
    future.items = saver.items
    future._latest = saver._latest
    key = deltas[-1]
    header = ormsgpack.unpackb(future.blobs[key][1])  # type: ignore[index]
    header[0] = 99
    future.blobs[key] = (_list_delta.DELTA_TYPE, ormsgpack.packb(header))
    with pytest.raises(ValueError, match="format 99"):
        list(future.list(cfg))
