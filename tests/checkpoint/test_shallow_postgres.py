"""ShallowPostgresSaver / AsyncShallowPostgresSaver on the real server: the latest
checkpoint per thread only, constant storage, interrupts and resume as LangGraph."""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import psycopg
import pytest
from saver_harness import PgSchema

from stategraph.checkpoint.postgres import ShallowPostgresSaver
from stategraph.checkpoint.postgres.aio import AsyncShallowPostgresSaver
from stategraph.graph import START, StateGraph
from stategraph.types import Command, interrupt


class State(TypedDict):
    items: Annotated[list, operator.add]


def build(saver: Any) -> Any:
    def a(state: State) -> dict[str, Any]:
        return {"items": ["a"]}

    def b(state: State) -> dict[str, Any]:
        return {"items": [interrupt("q")]}

    g = StateGraph(State)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    return g.compile(checkpointer=saver)


@pytest.fixture
def pg() -> Iterator[PgSchema]:
    schema = PgSchema()
    try:
        yield schema
    finally:
        schema.drop()


def counts(pg: PgSchema) -> tuple[int, int, int]:
    with pg.connect() as conn:
        return tuple(  # type: ignore[return-value]
            conn.execute(f"SELECT COUNT(*) FROM sg_shallow_{t}").fetchone()[0]  # type: ignore[index]
            for t in ("checkpoints", "blobs", "writes")
        )


def test_interrupt_resume_and_constant_storage(pg: PgSchema) -> None:
    with pg.connect() as conn:
        app = build(ShallowPostgresSaver(conn))
        config = {"configurable": {"thread_id": "1"}}
        out = app.invoke({"items": ["x"]}, config)
        assert out["items"] == ["x", "a"] and out["__interrupt__"][0].value == "q"
        state = app.get_state(config)
        assert state.values == {"items": ["x", "a"]} and state.next == ("b",)
        assert len(state.tasks[0].interrupts) == 1
        history = list(app.get_state_history(config))
        assert len(history) == 1 and history[0].parent_config is None
        # the same result LangGraph's ShallowPostgresSaver gives
        assert app.invoke(Command(resume="r"), config) == {"items": ["x", "a", "r"]}
        after_first = counts(pg)
        for turn in range(20):
            app.invoke({"items": [f"t{turn}"]}, config)
            app.invoke(Command(resume=turn), config)
        assert counts(pg)[0] == 1  # one checkpoint row for the thread
        assert counts(pg)[1] == after_first[1]  # one value row per channel
        assert len(app.get_state(config).values["items"]) == 3 + 3 * 20


def test_saver_api(pg: PgSchema) -> None:
    with pg.connect() as conn:
        saver = ShallowPostgresSaver(conn)
        app = build(saver)
        for thread in ("t1", "t2"):
            app.invoke({"items": [thread]}, {"configurable": {"thread_id": thread}})
        listed = list(saver.list(None))
        assert [t.config["configurable"]["thread_id"] for t in listed] == ["t2", "t1"]
        assert [t.config["configurable"]["thread_id"] for t in saver.list(None, limit=1)] == ["t2"]
        assert len(list(saver.list({"configurable": {"thread_id": "t1"}}))) == 1
        assert list(saver.list(None, filter={"source": "loop"})) != []
        assert list(saver.list(None, filter={"source": "nope"})) == []
        latest = saver.get_tuple({"configurable": {"thread_id": "t1"}})
        assert latest is not None and latest.pending_writes  # the interrupt is pending
        old = {
            "configurable": {
                "thread_id": "t1",
                "checkpoint_id": "1ef00000-0000-6000-8000-000000000000",
            }
        }
        assert saver.get_tuple(old).config == latest.config  # type: ignore[union-attr]
        saver.delete_thread("t1")
        assert saver.get_tuple({"configurable": {"thread_id": "t1"}}) is None
        assert saver.get_tuple({"configurable": {"thread_id": "t2"}}) is not None
        with pytest.raises(TypeError, match="limit must be an int"):
            list(saver.list(None, limit="5"))  # type: ignore[arg-type]


def test_refuses_a_connection_outside_autocommit(pg: PgSchema) -> None:
    with psycopg.connect(pg.conninfo) as conn:
        with pytest.raises(ValueError, match="autocommit"):
            ShallowPostgresSaver(conn)


async def test_async_saver_and_its_sync_api_from_threads(pg: PgSchema) -> None:
    conn = await pg.aconnect()
    try:
        saver = AsyncShallowPostgresSaver(conn)
        app = build(saver)
        config = {"configurable": {"thread_id": "a"}}
        out = await app.ainvoke({"items": ["x"]}, config)
        assert out["__interrupt__"][0].value == "q"
        assert await app.ainvoke(Command(resume="r"), config) == {"items": ["x", "a", "r"]}
        assert len([s async for s in app.aget_state_history(config)]) == 1
        got = await asyncio.to_thread(saver.get_tuple, config)
        assert got is not None and got.checkpoint["channel_values"]["items"] == ["x", "a", "r"]
        assert len(await asyncio.to_thread(lambda: list(saver.list(None)))) == 1
        with pytest.raises(asyncio.InvalidStateError, match="event loop"):
            saver.get_tuple(config)
        await saver.adelete_thread("a")
        assert await saver.aget_tuple(config) is None
    finally:
        await conn.close()
