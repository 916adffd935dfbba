"""Typing of ``stategraph.pregel.protocol`` as a user writes it (checked, never run)."""

from __future__ import annotations

import queue
from typing import Any

from typing_extensions import TypedDict

from stategraph.graph import START, StateGraph
from stategraph.pregel import Pregel
from stategraph.pregel.protocol import PregelProtocol, StreamChunk, StreamProtocol
from stategraph.pregel.remote import RemoteGraph


class State(TypedDict):
    topic: str


def echo(state: State) -> dict[str, Any]:
    return {"topic": state["topic"]}


def run_any(graph: PregelProtocol, topic: str) -> Any:
    return graph.invoke({"topic": topic})


builder = StateGraph(State)
builder.add_node("echo", echo)
builder.add_edge(START, "echo")
compiled = builder.compile()

# a compiled graph and a hand-built Pregel both stand in for the protocol
run_any(compiled, "a")
as_protocol: PregelProtocol = compiled


def takes_pregel(graph: Pregel[Any, Any, Any, Any]) -> PregelProtocol:
    return graph


chunks: queue.Queue[StreamChunk] = queue.Queue()
sink = StreamProtocol(chunks.put, {"values"})
sink(((), "values", {"topic": "a"}))


def takes_remote(graph: RemoteGraph) -> PregelProtocol:
    # RemoteGraph implements every method of the protocol, bulk updates included
    return graph
