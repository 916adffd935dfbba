"""Store wiring: compile(store=...), runtime.store, a ``store`` parameter, get_store()."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.config import get_store
from stategraph.graph import END, START, StateGraph
from stategraph.runtime import Runtime
from stategraph.store.base import BaseStore
from stategraph.store.memory import InMemoryStore
from stategraph.store.sqlite import SqliteStore


class Prefs(TypedDict, total=False):
    user: str
    set_color: str
    color: str


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseStore]:
    if request.param == "memory":
        yield InMemoryStore()
    else:
        s = SqliteStore(str(tmp_path / "store.sqlite"))
        try:
            yield s
        finally:
            s.close()


def _remember_via_runtime(state: Prefs, runtime: Runtime[Any]) -> dict[str, Any]:
    assert runtime.store is not None
    if "set_color" in state:
        runtime.store.put(("users", state["user"]), "prefs", {"color": state["set_color"]})
    item = runtime.store.get(("users", state["user"]), "prefs")
    return {"color": item.value["color"] if item else "unknown"}


def _remember_via_kwarg(state: Prefs, *, store: BaseStore) -> dict[str, Any]:
    if "set_color" in state:
        store.put(("users", state["user"]), "prefs", {"color": state["set_color"]})
    item = store.get(("users", state["user"]), "prefs")
    return {"color": item.value["color"] if item else "unknown"}


def _remember_via_get_store(state: Prefs) -> dict[str, Any]:
    store = get_store()
    assert store is not None
    if "set_color" in state:
        store.put(("users", state["user"]), "prefs", {"color": state["set_color"]})
    item = store.get(("users", state["user"]), "prefs")
    return {"color": item.value["color"] if item else "unknown"}


def _build(node: Callable[..., Any], store: BaseStore) -> Any:
    b = StateGraph(Prefs)
    b.add_node("remember", node)
    b.add_edge(START, "remember")
    b.add_edge("remember", END)
    return b.compile(checkpointer=InMemorySaver(), store=store)


NODES = [_remember_via_runtime, _remember_via_kwarg, _remember_via_get_store]


@pytest.mark.parametrize("node", NODES, ids=lambda f: f.__name__)
def test_preference_written_in_one_thread_is_read_in_another(
    store: BaseStore, node: Callable[..., Any]
) -> None:
    graph = _build(node, store)
    first = graph.invoke(
        {"user": "ada", "set_color": "green"}, {"configurable": {"thread_id": "thread-1"}}
    )
    assert first["color"] == "green"
    second = graph.invoke({"user": "ada"}, {"configurable": {"thread_id": "thread-2"}})
    assert second["color"] == "green"
    other_user = graph.invoke({"user": "bob"}, {"configurable": {"thread_id": "thread-3"}})
    assert other_user["color"] == "unknown"
    # the thread state is separate from long-term memory
    assert graph.get_state({"configurable": {"thread_id": "thread-2"}}).values == {
        "user": "ada",
        "color": "green",
    }


@pytest.mark.parametrize("node", NODES, ids=lambda f: f.__name__)
async def test_preference_across_threads_async(store: BaseStore, node: Callable[..., Any]) -> None:
    graph = _build(node, store)
    await graph.ainvoke(
        {"user": "ada", "set_color": "blue"}, {"configurable": {"thread_id": "a-1"}}
    )
    second = await graph.ainvoke({"user": "ada"}, {"configurable": {"thread_id": "a-2"}})
    assert second["color"] == "blue"


def test_no_store_gives_none_everywhere() -> None:
    seen: dict[str, Any] = {}

    def node(state: Prefs, runtime: Runtime[Any]) -> dict[str, Any]:
        seen["runtime"] = runtime.store
        seen["get_store"] = get_store()
        return {"color": "x"}

    b = StateGraph(Prefs)
    b.add_node("n", node)
    b.add_edge(START, "n")
    assert b.compile().invoke({"user": "u"}) == {"user": "u", "color": "x"}
    assert seen == {"runtime": None, "get_store": None}


def test_subgraph_inherits_parent_store() -> None:
    store = InMemoryStore()
    store.put(("users", "ada"), "prefs", {"color": "teal"})

    sub = StateGraph(Prefs)
    sub.add_node("remember", _remember_via_get_store)
    sub.add_edge(START, "remember")
    child = sub.compile()

    parent = StateGraph(Prefs)
    parent.add_node("child", child)
    parent.add_edge(START, "child")
    graph = parent.compile(store=store)
    assert graph.invoke({"user": "ada"})["color"] == "teal"
    assert asyncio.run(graph.ainvoke({"user": "ada"}))["color"] == "teal"
