"""Async tasks that finish in the same turn of the event loop are reported in the order
they were started, every run (LangGraph does the same; a set's hash order did not)."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from stategraph.graph import START, StateGraph


class State(TypedDict):
    seen: Annotated[list[str], operator.add]


def _graph(width: int) -> Any:
    builder = StateGraph(State)
    names = [f"n{i:02d}" for i in range(width)]
    for name in names:

        async def node(state: State, name: str = name) -> dict[str, Any]:
            return {"seen": [name]}

        builder.add_node(name, node)
        builder.add_edge(START, name)
    return builder.compile(), names


def test_updates_of_parallel_async_tasks_come_in_start_order() -> None:
    graph, names = _graph(12)

    async def once() -> list[str]:
        return [
            next(iter(chunk)) async for chunk in graph.astream({"seen": []}, stream_mode="updates")
        ]

    for _ in range(5):
        assert asyncio.run(once()) == names
