"""Which compiled graphs a node is found to run (its ``subgraphs``), and
``get_subgraphs`` over nested namespaces.

A node that calls a compiled graph runs it as a subgraph; ``get_subgraphs()``,
``get_state(subgraphs=True)`` and ``update_state`` on its namespace rely on finding it
without running the node.
"""

from __future__ import annotations

import asyncio
import functools
import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.graph import START, StateGraph


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


def leaf(label: str) -> Any:
    graph = StateGraph(Log).add_node("only", lambda s: {"log": [label]}).add_edge(START, "only")
    compiled = graph.compile()
    compiled.name = label
    return compiled


def found(node: Any) -> list[str]:
    compiled = StateGraph(Log).add_node("n", node).add_edge(START, "n").compile()
    return [g.name for g in compiled.nodes["n"].subgraphs]


class Shelf:
    def __init__(self, item: Any) -> None:
        self.item = item


class Bag(list[Any]):
    """A list subclass can carry attributes."""


GLOBAL_GRAPH = leaf("global")
NESTED_SHELVES = Shelf(Shelf(leaf("deep")))
LISTED = [leaf("listed")]


def test_a_graph_captured_or_named_globally_is_found() -> None:
    local = leaf("captured")

    def by_closure(state: Log) -> Any:
        return local.invoke(state)

    def by_global(state: Log) -> Any:
        return GLOBAL_GRAPH.invoke(state)

    async def by_global_async(state: Log) -> Any:
        return await GLOBAL_GRAPH.ainvoke(state)

    assert found(by_closure) == ["captured"]
    assert found(by_global) == ["global"]
    assert found(by_global_async) == ["global"]
    assert found(functools.partial(lambda state, g: g.invoke(state), g=local)) == ["captured"]


def test_attribute_chains_from_a_global_or_a_captured_value_are_followed() -> None:
    holder = Shelf(leaf("on-shelf"))
    bag = Bag()
    bag.item = leaf("in-bag")  # type: ignore[attr-defined]

    def through_global(state: Log) -> Any:
        return NESTED_SHELVES.item.item.invoke(state)

    def through_closure(state: Log) -> Any:
        return holder.item.invoke(state)

    def through_bag(state: Log) -> Any:
        return bag.item.invoke(state)  # type: ignore[attr-defined]

    def through_nested_function(state: Log) -> Any:
        def helper() -> Any:
            return holder.item.invoke(state)

        return helper()

    assert found(through_global) == ["deep"]
    assert found(through_closure) == ["on-shelf"]
    assert found(through_bag) == ["in-bag"]
    assert found(through_nested_function) == ["on-shelf"]


def test_a_wrapper_is_followed_to_the_function_it_wraps() -> None:
    inner_graph = leaf("wrapped")

    def real(state: Log) -> Any:
        return inner_graph.invoke(state)

    def wrapper(state: Log) -> Any:
        return {"log": []}

    wrapper.__wrapped__ = real  # type: ignore[attr-defined]
    assert found(wrapper) == ["wrapped"]


def test_unreachable_shapes_are_not_reported() -> None:
    holder = Shelf(leaf("dropped"))
    broken = Shelf("text")

    def subscript(state: Log) -> Any:
        return LISTED[0].invoke(state)

    def dead_chain(state: Log) -> Any:
        if False:
            holder.item.invoke(state)  # the compiler drops this code
        return {"log": []}

    def bad_chain(state: Log) -> Any:
        return broken.item.missing.invoke(state)  # type: ignore[attr-defined]

    def global_in_nested_function(state: Log) -> Any:
        def helper() -> Any:
            return GLOBAL_GRAPH.invoke(state)

        return helper()

    def plain(state: Log) -> Any:
        return {"log": [str(len(state["log"]))]}

    for node in (subscript, dead_chain, bad_chain, global_in_nested_function, plain):
        assert found(node) == [], node.__name__


def test_a_property_is_not_run_while_looking() -> None:
    ran: list[str] = []

    class Lazy:
        @property
        def graph(self) -> Any:
            ran.append("property")
            return leaf("lazy")

    lazy = Lazy()

    def node(state: Log) -> Any:
        return lazy.graph.invoke(state)

    assert found(node) == []
    assert ran == []


def prefixed_parent() -> tuple[Any, dict[str, Any]]:
    """Subgraph namespaces that start with one another's names."""
    graphs = {
        "alpha|beta": leaf("alpha|beta"),
        "alpha_beta": leaf("alpha_beta"),
        "beta": leaf("beta"),
    }
    graphs["alpha"] = (
        StateGraph(Log).add_node("beta", graphs["alpha|beta"]).add_edge(START, "beta").compile()
    )
    parent = (
        StateGraph(Log)
        .add_node("alpha", graphs["alpha"])
        .add_node("alpha_beta", graphs["alpha_beta"])
        .add_node("beta", graphs["beta"])
        .add_edge(START, "alpha")
        .compile()
    )
    return parent, graphs


@pytest.mark.parametrize("namespace", ["alpha", "alpha|beta", "alpha_beta", "beta"])
def test_get_subgraphs_matches_whole_namespace_levels(namespace: str) -> None:
    parent, graphs = prefixed_parent()
    assert list(parent.get_subgraphs(namespace=namespace, recurse=True)) == [
        (namespace, graphs[namespace])
    ]

    async def collect() -> list[Any]:
        return [item async for item in parent.aget_subgraphs(namespace=namespace, recurse=True)]

    assert asyncio.run(collect()) == [(namespace, graphs[namespace])]


def test_get_subgraphs_ignores_task_ids_and_lists_everything() -> None:
    parent, graphs = prefixed_parent()
    assert list(parent.get_subgraphs(namespace="alpha:1234|beta:abcd", recurse=True)) == [
        ("alpha|beta", graphs["alpha|beta"])
    ]
    assert [name for name, _ in parent.get_subgraphs()] == ["alpha", "alpha_beta", "beta"]
    assert [name for name, _ in parent.get_subgraphs(recurse=True)] == [
        "alpha",
        "alpha|beta",
        "alpha_beta",
        "beta",
    ]
