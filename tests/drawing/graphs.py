"""Small graphs the drawing tests draw."""

from __future__ import annotations

import itertools
import operator
from typing import Annotated, Any, Literal

from typing_extensions import TypedDict

from stategraph.graph import END, START, StateGraph
from stategraph.types import Command


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def noop(state: State) -> dict[str, Any]:
    return {}


def chain(*names: str) -> StateGraph[State]:
    """START -> names[0] -> ... -> names[-1]."""
    builder = StateGraph(State)
    for name in names:
        builder.add_node(name, noop)
    builder.add_edge(START, names[0])
    for a, b in itertools.pairwise(names):
        builder.add_edge(a, b)
    return builder


def review_graph() -> StateGraph[State]:
    """draft -> review -(approved|rejected)-> publish | archive."""
    builder = chain("draft", "review")
    builder.add_node("publish", noop)
    builder.add_node("archive", noop)
    builder.add_conditional_edges(
        "review", lambda s: "approved", {"approved": "publish", "rejected": "archive"}
    )
    return builder


def router(state: State) -> Command[Literal["left", "right"]]:
    return Command(goto="left")


def command_graph() -> StateGraph[State]:
    builder = StateGraph(State)
    builder.add_node("router", router)
    builder.add_node("left", noop)
    builder.add_node("right", noop)
    builder.add_edge(START, "router")
    return builder


def nested_graph() -> StateGraph[State]:
    """outer: prepare -> inner(subgraph: think -(again|done)-> ...) -> finish."""
    inner = chain("think", "check")
    inner.add_conditional_edges("check", lambda s: END, {"again": "think", "done": END})
    outer = StateGraph(State)
    outer.add_node("prepare", noop)
    outer.add_node("inner", inner.compile())
    outer.add_node("finish", noop)
    outer.add_edge(START, "prepare")
    outer.add_edge("prepare", "inner")
    outer.add_edge("inner", "finish")
    return outer
