"""Parallel tasks that finish in the same order stream in the same order on every run.

A map-reduce fans out with ``Send`` to an async node; the tasks all finish within one
turn of the event loop, so the runner sees them complete together. Their ``updates``
must come in the order the tasks were started, not in the order of a set of futures
(which follows memory addresses and changes from run to run).
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, TypedDict

from stategraph.graph import END, START, StateGraph
from stategraph.types import Send


class Item(TypedDict):
    x: int


class Batch(TypedDict):
    xs: list[int]
    out: Annotated[list[int], operator.add]


def _map_reduce() -> Any:
    async def work(s: Item) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"out": [s["x"] * 10]}

    def fan_out(s: Batch) -> list[Send]:
        return [Send("work", {"x": x}) for x in s["xs"]]

    g = StateGraph(Batch)
    g.add_node("work", work)
    g.add_conditional_edges(START, fan_out)
    g.add_edge("work", END)
    return g.compile()


def test_a_fan_out_streams_its_updates_in_start_order_every_run() -> None:
    app = _map_reduce()

    async def one_run() -> list[int]:
        return [
            chunk["work"]["out"][0]
            async for chunk in app.astream({"xs": list(range(8)), "out": []}, stream_mode="updates")
        ]

    async def runs() -> list[list[int]]:
        return [await one_run() for _ in range(25)]

    for seen in asyncio.run(runs()):
        assert seen == [x * 10 for x in range(8)]
