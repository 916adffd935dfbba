"""A compiled ``StateGraph`` used as a node runs as a subgraph with its own channels."""

import dataclasses
import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from stategraph.graph import END, START, StateGraph

from .helpers import assert_steps


class Parent(TypedDict):
    topic: str
    result: str
    log: Annotated[list, operator.add]


class SubIn(TypedDict):
    topic: str


class SubOut(TypedDict):
    result: str
    log: Annotated[list, operator.add]


class SubState(TypedDict):
    topic: str
    result: str
    private: str
    log: Annotated[list, operator.add]


def _subgraph() -> Any:
    builder = StateGraph(SubState, input_schema=SubIn, output_schema=SubOut)
    builder.add_node("s1", lambda s: {"private": s["topic"] * 2, "log": ["s1"]})
    builder.add_node("s2", lambda s: {"result": s["private"].upper(), "log": [f"s2:{sorted(s)}"]})
    builder.add_edge(START, "s1")
    builder.add_edge("s1", "s2")
    return builder.compile()


def _parent() -> Any:
    builder = StateGraph(Parent)
    builder.add_node("pre", lambda s: {"log": ["pre"]})
    builder.add_node("sub", _subgraph())
    builder.add_node("post", lambda s: {"log": [f"post:{s['result']}"]})
    builder.add_edge(START, "pre")
    builder.add_edge("pre", "sub")
    builder.add_edge("sub", "post")
    builder.add_edge("post", END)
    return builder.compile()


S2 = "s2:['log', 'private', 'topic']"


def test_subgraph_runs_with_input_and_output_schemas(run):
    result = run.invoke(_parent(), {"topic": "ab", "log": []})
    # the subgraph only received topic (its input schema), so its log started empty,
    # and only its output keys came back: "private" stays inside
    assert result == {"topic": "ab", "result": "ABAB", "log": ["pre", "s1", S2, "post:ABAB"]}


def test_subgraph_update_is_its_output(run):
    chunks = run.stream(_parent(), {"topic": "ab", "log": []}, stream_mode="updates")
    assert chunks == [
        {"pre": {"log": ["pre"]}},
        {"sub": {"result": "ABAB", "log": ["s1", S2]}},
        {"post": {"log": ["post:ABAB"]}},
    ]


def test_subgraph_streams_its_own_namespace(run):
    chunks = run.stream(
        _parent(), {"topic": "ab", "log": []}, stream_mode="updates", subgraphs=True
    )
    namespaces = [ns for ns, _ in chunks]
    assert namespaces[0] == ()
    assert len(namespaces[1]) == 1
    assert namespaces[1][0].startswith("sub:")
    assert namespaces[2] == namespaces[1]
    assert namespaces[3:] == [(), ()]
    assert [next(iter(update)) for _, update in chunks] == ["pre", "s1", "s2", "sub", "post"]
    assert chunks[2][1] == {"s2": {"result": "ABAB", "log": [S2]}}
    assert chunks[3][1] == {"sub": {"result": "ABAB", "log": ["s1", S2]}}


class Shared(TypedDict):
    x: int


def test_subgraph_with_the_parent_schema_and_inferred_name(run):
    inner = StateGraph(Shared)
    inner.add_node("inc", lambda s: {"x": s["x"] * 10})
    inner.add_edge(START, "inc")
    sub = inner.compile(name="inner")

    outer = StateGraph(Shared)
    outer.add_node(sub)
    outer.add_edge(START, "inner")
    assert list(outer.nodes) == ["inner"]
    assert run.invoke(outer.compile(), {"x": 2}) == {"x": 20}


@dataclasses.dataclass
class DCParent:
    x: int = 0
    log: Annotated[list, operator.add] = dataclasses.field(default_factory=list)


class ChildState(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def test_dataclass_parent_with_typeddict_subgraph(run):
    child = StateGraph(ChildState)
    child.add_node("c", lambda s: {"x": s["x"] + 100, "log": ["c"]})
    child.add_edge(START, "c")

    parent = StateGraph(DCParent)
    parent.add_node("sub", child.compile())
    parent.add_node("after", lambda s: {"log": [f"after:{s.x}"]})
    parent.add_edge(START, "sub")
    parent.add_edge("sub", "after")
    graph = parent.compile()
    assert run.invoke(graph, {"x": 1}) == {"x": 101, "log": ["c", "after:101"]}
    assert run.invoke(graph, DCParent(x=2)) == {"x": 102, "log": ["c", "after:102"]}


class Log(TypedDict):
    log: Annotated[list, operator.add]


def _nested() -> Any:
    level3 = StateGraph(Log)
    level3.add_node("deep", lambda s: {"log": ["deep"]})
    level3.add_edge(START, "deep")
    level2 = StateGraph(Log)
    level2.add_node("mid", lambda s: {"log": ["mid"]})
    level2.add_node("l3", level3.compile())
    level2.add_edge(START, "mid")
    level2.add_edge("mid", "l3")
    level1 = StateGraph(Log)
    level1.add_node("l2", level2.compile())
    level1.add_node("top", lambda s: {"log": ["top"]})
    level1.add_edge(START, "l2")
    level1.add_edge("l2", "top")
    return level1.compile()


def test_nested_subgraphs_return_full_state_through_reducers(run):
    # each subgraph returns its whole log, which the parent's reducer appends again
    # (exact value observed with LangGraph 1.2)
    result = run.invoke(_nested(), {"log": ["in"]})
    assert result == {"log": ["in", "in", "mid", "in", "mid", "deep", "top"]}


def test_nested_subgraph_namespaces(run):
    chunks = run.stream(_nested(), {"log": []}, stream_mode="updates", subgraphs=True)
    depth = [len(ns) for ns, _ in chunks]
    names = [next(iter(update)) for _, update in chunks]
    assert list(zip(depth, names, strict=True)) == [
        (1, "mid"),
        (2, "deep"),
        (1, "l3"),
        (0, "l2"),
        (0, "top"),
    ]
    assert chunks[1][0][0] == chunks[0][0][0]
    assert chunks[1][0][0].startswith("l2:")
    assert chunks[1][0][1].startswith("l3:")


def test_subgraph_invoked_inside_a_node_function(run):
    inner = StateGraph(Log)
    inner.add_node("deep", lambda s: {"log": ["deep"]})
    inner.add_edge(START, "deep")
    compiled_inner = inner.compile()

    def wrapper(state):
        out = compiled_inner.invoke({"log": []})
        return {"log": ["wrapped:" + ",".join(out["log"])]}

    outer = StateGraph(Log)
    outer.add_node("w", wrapper)
    outer.add_edge(START, "w")
    assert run.invoke(outer.compile(), {"log": []}) == {"log": ["wrapped:deep"]}


def test_subgraphs_in_parallel_branches(run):
    def branch(tag: str) -> Any:
        inner = StateGraph(Log)
        inner.add_node("work", lambda s: {"log": [tag]})
        inner.add_edge(START, "work")
        return inner.compile()

    outer = StateGraph(Log)
    outer.add_node("left", branch("L"))
    outer.add_node("right", branch("R"))
    outer.add_node("join", lambda s: {"log": [f"join:{len(s['log'])}"]})
    outer.add_edge(START, "left")
    outer.add_edge(START, "right")
    outer.add_edge(["left", "right"], "join")
    graph = outer.compile()
    assert run.invoke(graph, {"log": []}) == {"log": ["L", "R", "join:2"]}
    chunks = run.stream(graph, {"log": []}, stream_mode="updates")
    assert_steps(
        chunks,
        [[{"left": {"log": ["L"]}}, {"right": {"log": ["R"]}}], [{"join": {"log": ["join:2"]}}]],
    )
