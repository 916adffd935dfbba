"""Parallel tasks that finish in the same order stream in the same order on every run.

A map-reduce fans out with ``Send`` to a subgraph; its async tasks all finish within
one turn of the event loop, so the runner sees them complete together. The parent's
``updates`` for them must come in the order the tasks were started, not in the order
of a set of futures (which follows memory addresses and changes from run to run).
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, TypedDict

from stategraph.graph import END, START, StateGraph
from stategraph.types import Send


class Item(TypedDict):
    x: int
    out: Annotated[list[int], operator.add]


class Batch(TypedDict):
    xs: list[int]
    out: Annotated[list[int], operator.add]


def _map_reduce() -> Any:
    async def work(s: Item) -> dict[str, Any]:
        return {"out": [s["x"] * 10]}

    inner = StateGraph(Item)
    inner.add_node("work", work)
    inner.add_edge(START, "work")

    def fan_out(s: Batch) -> list[Send]:
        return [Send("each", {"x": x, "out": []}) for x in s["xs"]]

    outer = StateGraph(Batch)
    outer.add_node("each", inner.compile())
    outer.add_conditional_edges(START, fan_out)
    outer.add_edge("each", END)
    return outer.compile()


async def _one_run(app: Any) -> list[tuple[int, str, Any]]:
    seen = []
    async for ns, mode, data in app.astream(
        {"xs": list(range(8)), "out": []}, subgraphs=True, stream_mode=["updates"]
    ):
        seen.append((len(ns), mode, data))  # task ids in ns differ per run: keep depth
    return seen


def test_map_reduce_through_a_subgraph_streams_one_order() -> None:
    app = _map_reduce()

    async def runs() -> list[list[tuple[int, str, Any]]]:
        return [await _one_run(app) for _ in range(25)]

    for seen in asyncio.run(runs()):
        # how the two levels interleave may follow the worker thread of the subgraphs'
        # input step; the order within each level may not
        parent = [d["each"]["out"][0] for depth, _, d in seen if depth == 0]
        assert parent == [x * 10 for x in range(8)]
        inner = [d["work"]["out"][0] for depth, _, d in seen if depth == 1]
        assert inner == [x * 10 for x in range(8)]
