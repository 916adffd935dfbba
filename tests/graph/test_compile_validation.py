"""``compile()`` and builder validation: every error names the offending element."""

import operator
import warnings
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.graph import END, START, StateGraph


class State(TypedDict):
    a: int
    log: Annotated[list, operator.add]


def noop(state):
    return None


def step(name: str) -> Any:
    def f(state):
        return {"log": [name]}

    return f


def _builder(*names: str) -> StateGraph:
    builder = StateGraph(State)
    for name in names:
        builder.add_node(name, noop)
    return builder


# --------------------------------------------------------------------------- structure


def test_edge_to_unknown_node():
    builder = _builder("a")
    builder.add_edge(START, "a")
    builder.add_edge("a", "missing")
    with pytest.raises(ValueError, match=r"unknown node .missing."):
        builder.compile()


def test_edge_from_unknown_node():
    builder = _builder("a")
    builder.add_edge(START, "a")
    builder.add_edge("ghost", "a")
    with pytest.raises(ValueError, match=r"unknown node .ghost."):
        builder.compile()


def test_barrier_from_unknown_node():
    builder = _builder("a", "c")
    builder.add_edge(START, "a")
    with pytest.raises(ValueError, match="ghost3"):
        builder.add_edge(["a", "ghost3"], "c")
        builder.compile()


def test_barrier_to_unknown_node():
    builder = _builder("a", "b")
    builder.add_edge(START, "a")
    with pytest.raises(ValueError, match="nowhere"):
        builder.add_edge(["a", "b"], "nowhere")
        builder.compile()


def test_conditional_edge_from_unknown_node():
    builder = _builder("a")
    builder.add_edge(START, "a")
    builder.add_conditional_edges("ghost2", lambda s: "a")
    with pytest.raises(ValueError, match=r"unknown node .ghost2."):
        builder.compile()


def test_conditional_edge_path_map_to_unknown_node():
    builder = _builder("a")
    builder.add_edge(START, "a")
    builder.add_conditional_edges("a", lambda s: "x", {"x": "phantom"})
    with pytest.raises(ValueError, match="phantom") as info:
        builder.compile()
    assert "'a'" in str(info.value)


def test_conditional_entry_point_list_to_unknown_node():
    builder = _builder("a")
    builder.set_conditional_entry_point(lambda s: "a", ["a", "nonode"])
    with pytest.raises(ValueError, match="nonode"):
        builder.compile()


def test_destination_to_unknown_node():
    builder = StateGraph(State)
    builder.add_node("a", noop, destinations=("zz",))
    builder.add_edge(START, "a")
    with pytest.raises(ValueError, match="zz"):
        builder.compile()


def test_missing_entry_point():
    builder = _builder("a")
    with pytest.raises(ValueError, match="entrypoint"):
        builder.compile()


def test_finish_point_alone_is_not_an_entry_point():
    builder = _builder("a")
    builder.set_finish_point("a")
    with pytest.raises(ValueError, match="entrypoint"):
        builder.compile()


def test_end_cannot_start_an_edge():
    with pytest.raises(ValueError, match="END"):
        _builder("a").add_edge(END, "a")


def test_start_cannot_end_an_edge():
    with pytest.raises(ValueError, match="START"):
        _builder("a").add_edge("a", START)


# --------------------------------------------------------------------------- node names


@pytest.mark.parametrize("name", ["__start__", "__end__"])
def test_reserved_node_names(name):
    with pytest.raises(ValueError, match=f"{name}.*reserved"):
        _builder().add_node(name, noop)


@pytest.mark.parametrize(("name", "char"), [("a|b", "|"), ("a:b", ":")])
def test_reserved_characters_in_node_names(name, char):
    with pytest.raises(ValueError, match="reserved") as info:
        _builder().add_node(name, noop)
    assert f"'{char}'" in str(info.value)


def test_duplicate_node():
    builder = _builder("a")
    with pytest.raises(ValueError, match=r"Node .a. already present"):
        builder.add_node("a", noop)


def test_duplicate_node_by_inferred_name():
    builder = StateGraph(State)
    builder.add_node(noop)
    with pytest.raises(ValueError, match=r".noop. already present"):
        builder.add_node(noop)


# --------------------------------------------------------------------------- interrupts


@pytest.mark.parametrize("kind", ["interrupt_before", "interrupt_after"])
def test_unknown_interrupt_node(kind):
    builder = _builder("a")
    builder.add_edge(START, "a")
    with pytest.raises(ValueError, match=r"Interrupt node .nope. not found"):
        builder.compile(**{kind: ["a", "nope"]})


@pytest.mark.parametrize("kind", ["interrupt_before", "interrupt_after"])
def test_known_and_wildcard_interrupt_nodes_compile(kind):
    builder = _builder("a")
    builder.add_edge(START, "a")
    assert builder.compile(**{kind: ["a"]}) is not None
    assert builder.compile(**{kind: "*"}) is not None


# --------------------------------------------------------------------------- builder after compile


def test_builder_changes_after_compile_do_not_change_compiled_graph(run):
    builder = StateGraph(State)
    builder.add_node("one", step("one"))
    builder.add_edge(START, "one")
    first = builder.compile()
    assert run.invoke(first, {"a": 0}) == {"a": 0, "log": ["one"]}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        builder.add_node("two", step("two"))
        builder.add_edge("one", "two")
    second = builder.compile()

    assert run.invoke(first, {"a": 0}) == {"a": 0, "log": ["one"]}
    assert "two" not in first.nodes
    assert run.invoke(second, {"a": 0}) == {"a": 0, "log": ["one", "two"]}
    assert "two" in second.nodes


def test_compiled_graphs_of_one_builder_do_not_share_state(run):
    builder = StateGraph(State)
    builder.add_node("one", lambda s: {"a": s["a"] + 1, "log": ["one"]})
    builder.add_edge(START, "one")
    first = builder.compile()
    second = builder.compile()
    assert run.invoke(first, {"a": 1}) == {"a": 2, "log": ["one"]}
    assert run.invoke(second, {"a": 10}) == {"a": 11, "log": ["one"]}
    assert run.invoke(first, {"a": 1}) == {"a": 2, "log": ["one"]}


def test_compile_name():
    builder = _builder("a")
    builder.add_edge(START, "a")
    assert builder.compile(name="my_graph").name == "my_graph"


def test_get_graph_lists_nodes():
    builder = _builder("a", "b")
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", END)
    mermaid = builder.compile().get_graph().draw_mermaid()
    for edge in ("__start__ --> a;", "a --> b;", "b --> __end__;"):
        assert edge in mermaid
