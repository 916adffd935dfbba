"""An async run abandoned mid-step is finalized cleanly by the garbage collector.

When an event loop is closed under a run (no ``aclose``, no ``shutdown_asyncgens``),
the collector later closes the step's suspended task coroutines from whatever context
it runs in. Leaving the task's context there must not raise: before, resetting the
context variable raised ``ValueError: ... was created in a different Context``, reported
as an unraisable exception on some unrelated thread.
"""

from __future__ import annotations

import asyncio
import gc
import operator
import sys
from typing import Annotated, Any, TypedDict

from stategraph.graph import START, StateGraph


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


def test_collecting_an_abandoned_async_run_raises_nothing() -> None:
    async def slow(s: Log) -> dict[str, Any]:
        await asyncio.sleep(3600)
        return {"log": ["slow"]}

    async def quick(s: Log) -> dict[str, Any]:
        return {"log": ["quick"]}

    g = StateGraph(Log)
    g.add_node("slow", slow)
    g.add_node("quick", quick)
    g.add_edge(START, "slow")
    g.add_edge(START, "quick")
    app = g.compile()

    unraisable: list[BaseException | None] = []
    previous = sys.unraisablehook
    sys.unraisablehook = lambda u: unraisable.append(u.exc_value)
    try:
        loop = asyncio.new_event_loop()
        stream = app.astream({"log": []}, stream_mode="updates")
        first = loop.run_until_complete(stream.__anext__())
        assert first == {"quick": {"log": ["quick"]}}
        loop.close()  # the run is abandoned with "slow" suspended in its step
        del stream, loop
        gc.collect()
    finally:
        sys.unraisablehook = previous
    assert [e for e in unraisable if e is not None] == []
