"""A small approval graph the command-line tests load as ``approval_app:graph``."""

from __future__ import annotations

import operator
from typing import Annotated

from typing_extensions import TypedDict

from stategraph.graph import END, START, StateGraph
from stategraph.types import interrupt


class State(TypedDict, total=False):
    items: Annotated[list[str], operator.add]
    approved: bool


def draft(state: State) -> dict:
    return {"items": ["draft"]}


def review(state: State) -> dict:
    answer = interrupt({"items": state["items"]})
    if answer == "explode":
        raise RuntimeError("review exploded")
    return {"approved": answer is True}


def second_opinion(state: State) -> dict:
    return {"items": [interrupt("second opinion?")]}


def publish(state: State) -> dict:
    return {"items": ["published"]}


def route(state: State) -> str:
    if state.get("approved"):
        return "publish"
    return "second_opinion"


builder = StateGraph(State)
builder.add_node("draft", draft)
builder.add_node("review", review)
builder.add_node("second_opinion", second_opinion)
builder.add_node("publish", publish)
builder.add_edge(START, "draft")
builder.add_edge("draft", "review")
builder.add_conditional_edges("review", route, ["publish", "second_opinion"])
builder.add_edge("second_opinion", END)
graph = builder.compile()


def make_graph():
    """A factory the CLI calls."""
    return builder.compile()


not_a_graph = 42
