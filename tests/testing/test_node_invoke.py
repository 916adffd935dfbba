"""Running one node alone: PregelNode.invoke/ainvoke and run_node."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from stategraph.config import get_config, get_stream_writer
from stategraph.errors import GraphInterrupt
from stategraph.graph import END, START, StateGraph
from stategraph.runtime import Runtime
from stategraph.store.memory import InMemoryStore
from stategraph.testing import arun_node, run_node
from stategraph.types import Command, Send, interrupt


class State(TypedDict, total=False):
    text: str
    log: Annotated[list[str], operator.add]


@dataclass
class Ctx:
    user: str


def shout(state: State) -> dict:
    return {"text": state["text"].upper(), "log": ["shout"]}


def greet(state: State, runtime: Runtime[Ctx]) -> dict:
    return {"text": f"hi {runtime.context.user}"}


def tagged(state: State) -> dict:
    return {"text": get_config()["configurable"]["tag"]}


def streams(state: State) -> dict:
    get_stream_writer()({"progress": 50})
    return {"log": ["streams"]}


def ask(state: State) -> dict:
    first = interrupt("first?")
    second = interrupt("second?")
    return {"text": f"{first}/{second}"}


def route(state: State) -> Command[Literal["shout", "__end__"]]:
    return Command(update={"log": ["route"]}, goto=["shout", Send("shout", {"text": "x"})])


def remember(state: State, *, store) -> dict:
    store.put(("notes",), "last", {"text": state["text"]})
    return {}


async def slow(state: State) -> dict:
    return {"text": "async"}


def build():
    b = StateGraph(State, context_schema=Ctx)
    for fn in (shout, greet, tagged, streams, ask, route, remember, slow):
        b.add_node(fn.__name__, fn)
    b.add_edge(START, "shout")
    b.add_edge("shout", END)
    return b.compile()


graph = build()


def test_invoke_returns_what_the_node_function_returns():
    assert graph.nodes["shout"].invoke({"text": "hey"}) == {"text": "HEY", "log": ["shout"]}


def test_invoke_passes_config_context_and_store():
    assert graph.nodes["tagged"].invoke({}, {"configurable": {"tag": "t1"}}) == {"text": "t1"}
    assert graph.nodes["greet"].invoke({}, context=Ctx(user="ada")) == {"text": "hi ada"}
    store = InMemoryStore()
    graph.nodes["remember"].invoke({"text": "milk"}, store=store)
    assert store.get(("notes",), "last").value == {"text": "milk"}


def test_interrupt_raises_unless_answered():
    with pytest.raises(GraphInterrupt) as info:
        graph.nodes["ask"].invoke({})
    assert [i.value for i in info.value.interrupts] == ["first?"]
    assert graph.nodes["ask"].invoke({}, resumes=["a", "b"]) == {"text": "a/b"}
    with pytest.raises(GraphInterrupt) as info:
        graph.nodes["ask"].invoke({}, resume="a")
    assert [i.value for i in info.value.interrupts] == ["second?"]
    with pytest.raises(ValueError, match=r"either resume= .* or resumes="):
        graph.nodes["ask"].invoke({}, resume="a", resumes=["b"])


def test_async_nodes_need_ainvoke():
    with pytest.raises(TypeError, match=r"await graph.nodes\['slow'\].ainvoke"):
        graph.nodes["slow"].invoke({})


async def test_ainvoke_runs_async_and_sync_nodes():
    assert await graph.nodes["slow"].ainvoke({}) == {"text": "async"}
    assert await graph.nodes["shout"].ainvoke({"text": "a"}) == {"text": "A", "log": ["shout"]}


class Doc(BaseModel):
    title: str
    words: int = 0


def test_input_is_mapped_to_the_node_schema():
    def count(doc: Doc) -> dict:
        return {"words": len(doc.title.split())}

    b = StateGraph(Doc)
    b.add_node("count", count)
    b.add_edge(START, "count")
    compiled = b.compile()
    assert compiled.nodes["count"].invoke({"title": "a b c"}) == {"words": 3}
    assert compiled.nodes["count"].invoke(Doc(title="a")) == {"words": 1}


def test_subgraph_node_runs_the_whole_subgraph():
    inner = StateGraph(State)
    inner.add_node("shout", shout)
    inner.add_edge(START, "shout")
    outer = StateGraph(State)
    outer.add_node("inner", inner.compile())
    outer.add_edge(START, "inner")
    assert outer.compile().nodes["inner"].invoke({"text": "x", "log": []}) == {
        "text": "X",
        "log": ["shout"],
    }


def test_run_node_reports_update_routes_and_stream_writes():
    result = run_node(graph, "route", {})
    assert result.update == {"log": ["route"]}
    assert result.goto == ["shout", Send("shout", {"text": "x"})]
    assert isinstance(result.output, Command)
    streamed = run_node(graph, "streams", {})
    assert streamed.custom == [{"progress": 50}] and streamed.update == {"log": ["streams"]}
    assert streamed.writes == [("log", ["streams"])]


def test_run_node_reports_interrupts_instead_of_raising():
    paused = run_node(graph, "ask", {})
    assert paused.interrupted and [i.value for i in paused.interrupts] == ["first?"]
    assert paused.output is None
    done = run_node(graph, "ask", {}, resumes=["yes", "no"])
    assert not done.interrupted and done.update == {"text": "yes/no"}


def test_run_node_names_unknown_nodes():
    with pytest.raises(KeyError, match=r"no node .nope.\. Its nodes: shout, greet"):
        run_node(graph, "nope", {})
    with pytest.raises(TypeError, match="needs a compiled graph"):
        run_node(object(), "x", {})


async def test_arun_node():
    result = await arun_node(graph, "slow", {})
    assert result.update == {"text": "async"}
