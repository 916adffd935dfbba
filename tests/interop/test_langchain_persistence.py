"""LangChain message classes survive every saver with their exact type."""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest
from langchain_core import messages as lc

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.graph import START, StateGraph
from stategraph.graph.message import MessagesState
from stategraph.types import Command, interrupt


def approval_graph(saver: Any) -> Any:
    def draft(state: MessagesState) -> dict[str, Any]:
        return {
            "messages": [
                lc.AIMessage(
                    "draft",
                    id="d",
                    tool_calls=[{"name": "send", "args": {"to": "x"}, "id": "s1"}],
                    usage_metadata={"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
                ),
                lc.ToolMessage("queued", tool_call_id="s1", id="t", artifact={"n": 1}),
            ]
        }

    def review(state: MessagesState) -> dict[str, Any]:
        answer = interrupt("ok?")
        last = state["messages"][-1]
        return {"messages": [lc.HumanMessage(f"{answer} after {type(last).__name__}", id="r")]}

    builder = StateGraph(MessagesState)
    builder.add_node("draft", draft)
    builder.add_node("review", review)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "review")
    return builder.compile(checkpointer=saver)


def check_round_trip(saver: Any) -> None:
    graph = approval_graph(saver)
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    graph.invoke({"messages": [lc.SystemMessage("sys", id="s")]}, config)
    out = graph.invoke(Command(resume="yes"), config)
    assert [type(m) for m in out["messages"]] == [
        lc.SystemMessage,
        lc.AIMessage,
        lc.ToolMessage,
        lc.HumanMessage,
    ]
    assert out["messages"][-1].content == "yes after ToolMessage"
    saved = graph.get_state(config).values["messages"]
    assert saved[1].tool_calls[0]["args"] == {"to": "x"}
    assert saved[1].usage_metadata == {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
    assert saved[2].artifact == {"n": 1}


def test_in_memory_saver() -> None:
    check_round_trip(InMemorySaver())


def test_sqlite_saver(tmp_path: Any) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "lc.db")) as saver:
        check_round_trip(saver)


def test_postgres_saver() -> None:
    psycopg = pytest.importorskip("psycopg")
    from stategraph.checkpoint.postgres import PostgresSaver

    dsn = os.environ.get("STATEGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
    schema = f"lc_{uuid.uuid4().hex[:10]}"
    try:
        admin = psycopg.connect(dsn, autocommit=True)
    except psycopg.OperationalError:
        pytest.skip("PostgreSQL is not reachable")
    with admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
        try:
            with PostgresSaver.from_conn_string(f"{dsn}?options=-csearch_path%3D{schema}") as saver:
                saver.setup()
                check_round_trip(saver)
        finally:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


def test_no_unknown_type_warning(recwarn: Any) -> None:
    check_round_trip(InMemorySaver())
    assert not [w for w in recwarn if "Unknown" in type(w.message).__name__]
