"""A graph input a reducer cannot take is rejected before anything is saved (issue 10),
naming the key and the reducer, and the thread stays readable; same on every saver."""

from __future__ import annotations

import operator
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.errors import InvalidUpdateError
from stategraph.graph import START, MessagesState, StateGraph
from stategraph.messages import AIMessage, HumanMessage, RemoveMessage


class State(TypedDict):
    items: Annotated[list, operator.add]
    count: int


def build(saver: Any) -> Any:
    def node(state: State) -> dict[str, Any]:
        return {"count": len(state["items"])}

    g = StateGraph(State)
    g.add_node("node", node)
    g.add_edge(START, "node")
    return g.compile(checkpointer=saver)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield InMemorySaver()
    elif request.param == "sqlite":
        with SqliteSaver.from_conn_string(str(tmp_path / "c.sqlite")) as s:
            yield s
    else:
        import sys

        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "checkpoint"))
        from saver_harness import PgSchema

        from stategraph.checkpoint.postgres import PostgresSaver

        schema = PgSchema()
        conn = schema.connect()
        try:
            s = PostgresSaver(conn)
            s.setup()
            yield s
        finally:
            conn.close()
            schema.drop()


def test_bad_reducer_value_is_rejected_before_anything_is_saved(saver: Any) -> None:
    app = build(saver)
    config = {"configurable": {"thread_id": "t"}}
    assert app.invoke({"items": [1, 2]}, config) == {"items": [1, 2], "count": 2}
    history_before = len(list(app.get_state_history(config)))
    with pytest.raises(InvalidUpdateError, match=r"key 'items'.*reducer _operator\.add") as info:
        app.invoke({"items": 5}, config)
    assert "int" in str(info.value)
    assert isinstance(info.value.__cause__, TypeError)
    # nothing saved, the thread reads and continues as before
    assert len(list(app.get_state_history(config))) == history_before
    assert app.get_state(config).values == {"items": [1, 2], "count": 2}
    assert app.get_state(config).next == ()
    assert app.invoke({"items": [3]}, config) == {"items": [1, 2, 3], "count": 3}


def test_a_fresh_thread_saves_nothing_either(saver: Any) -> None:
    app = build(saver)
    config = {"configurable": {"thread_id": "new"}}
    with pytest.raises(InvalidUpdateError, match="items"):
        app.invoke({"items": 5, "count": 1}, config)
    assert app.get_state(config).values == {}
    assert list(app.get_state_history(config)) == []


def test_reducers_that_need_the_current_state_are_not_refused() -> None:
    # removing a message by id fails on an empty list but is valid on this thread
    g = StateGraph(MessagesState)
    g.add_node("echo", lambda s: {"messages": [AIMessage(content="ok", id="a2")]})
    g.add_edge(START, "echo")
    app = g.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "m"}}
    app.invoke({"messages": [HumanMessage(content="hi", id="h1")]}, config)
    out = app.invoke({"messages": [RemoveMessage(id="h1")]}, config)
    assert [m.id for m in out["messages"]] == ["a2"]


def _extend_in_place(a: list[int], b: list[int]) -> list[int]:
    a.extend(b)
    return a


class _InPlace(TypedDict):
    xs: Annotated[list, _extend_in_place]


def test_in_place_reducers_are_not_applied_twice() -> None:
    g = StateGraph(_InPlace)
    g.add_node("n", lambda s: {})
    g.add_edge(START, "n")
    app = g.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "x"}}
    app.invoke({"xs": [1]}, config)
    # the check works on copies: the reducer folds the input into the live state once
    assert app.invoke({"xs": [2]}, config)["xs"].count(2) == 1


class _Picky(Exception):
    """An error type of the user's own (not a built-in one)."""


def test_error_is_also_the_reducers_builtin_error_type() -> None:
    import pickle

    def refuse(current: str, new: str) -> str:
        raise ValueError("no strings today")

    g = StateGraph(Annotated[str, refuse])
    g.add_node("keep", lambda s: "")
    g.add_edge(START, "keep")
    app = g.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "typed"}}
    # caught as LangGraph code catches the reducer's error, and as our own error
    with pytest.raises(ValueError, match="no strings today") as info:
        app.invoke("x", config)
    assert isinstance(info.value, InvalidUpdateError)
    assert type(info.value).__name__ == "InvalidUpdateError"
    assert "reducer" in str(info.value) and "'__root__'" in str(info.value)
    # it crosses process boundaries as the plain error
    copy = pickle.loads(pickle.dumps(info.value))
    assert type(copy) is InvalidUpdateError and copy.args == info.value.args
    assert app.get_state(config).values == {}

    def picky(current: str, new: str) -> str:
        raise _Picky("mine")

    g = StateGraph(Annotated[str, picky])
    g.add_node("keep", lambda s: "")
    g.add_edge(START, "keep")
    with pytest.raises(InvalidUpdateError) as plain:
        g.compile().invoke("x")
    assert not isinstance(plain.value, _Picky)
    assert isinstance(plain.value.__cause__, _Picky)
