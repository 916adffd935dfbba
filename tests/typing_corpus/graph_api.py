"""Typing of the StateGraph API as a user writes it (checked, never run)."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict, assert_type

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, StateGraph
from stategraph.graph.state import CompiledStateGraph
from stategraph.runtime import Runtime
from stategraph.types import Command, RetryPolicy, Send


class State(TypedDict):
    topic: str
    notes: Annotated[list[str], operator.add]


class Context(TypedDict):
    user_id: str


class Input(TypedDict):
    topic: str


class Output(TypedDict):
    notes: list[str]


def research(state: State) -> dict[str, Any]:
    return {"notes": [state["topic"]]}


def personalise(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    user: str = runtime.context["user_id"]
    return {"notes": [user]}


def fan_out(state: State) -> list[Send]:
    return [Send("research", state)]


# no annotation needed: context, input and output default to None, State, State
builder = StateGraph(State)
assert_type(builder, StateGraph[State, None, State, State])
builder.add_node("research", research, retry_policy=RetryPolicy(max_attempts=2))
builder.add_node(personalise)
builder.add_edge(START, "research")
builder.add_conditional_edges("research", fan_out, ["research"])
builder.add_edge("research", END)
graph = builder.compile(checkpointer=InMemorySaver())
assert_type(graph, CompiledStateGraph[State, None, State, State])

with_schemas = StateGraph(State, Context, input_schema=Input, output_schema=Output)
assert_type(with_schemas, StateGraph[State, Context, Input, Output])
compiled = with_schemas.compile()
assert_type(compiled, CompiledStateGraph[State, Context, Input, Output])

result = graph.invoke({"topic": "x", "notes": []}, {"configurable": {"thread_id": "1"}})
resumed = graph.invoke(Command(resume="ok"), {"configurable": {"thread_id": "1"}})
chained: StateGraph[State] = StateGraph(State).add_node("research", research)
