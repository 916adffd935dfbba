"""A node's ``@task`` calls still running when it pauses or returns are waited for.

Their results are saved with the node's writes, so answering the interrupt does not
run a finished call again (LangGraph waits for every task of the step as well).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.func import entrypoint, task
from stategraph.types import Command, interrupt


def _invoke(mode: str, graph: Any, *args: Any) -> Any:
    """``graph.invoke`` or ``graph.ainvoke`` (a sync entrypoint runs on a worker thread)."""
    if mode == "async":
        return asyncio.run(graph.ainvoke(*args))
    return graph.invoke(*args)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_call_running_at_interrupt_is_not_run_again(mode: str) -> None:
    gate = threading.Event()
    runs: list[int] = []

    @task
    def weigh(n: int) -> int:
        # cannot finish before the entrypoint has raised its interrupt
        assert gate.wait(timeout=60)
        runs.append(n)
        return n * 3

    @entrypoint(checkpointer=InMemorySaver())
    def scale(n: int) -> dict[str, Any]:
        pending = weigh(n)
        try:
            unit = interrupt("unit?")
        finally:
            gate.set()
        return {"weight": pending.result(), "unit": unit}

    cfg = {"configurable": {"thread_id": "settle-sync"}}
    paused = _invoke(mode, scale, 4, cfg)
    assert [i.value for i in paused["__interrupt__"]] == ["unit?"]
    assert runs == [4]
    assert _invoke(mode, scale, Command(resume="kg"), cfg) == {"weight": 12, "unit": "kg"}
    assert runs == [4]


def test_async_call_running_at_interrupt_is_not_run_again() -> None:
    runs: list[int] = []
    gates: list[asyncio.Event] = []

    @task
    async def weigh(n: int) -> int:
        await asyncio.wait_for(gates[-1].wait(), timeout=60)
        runs.append(n)
        return n * 3

    @entrypoint(checkpointer=InMemorySaver())
    async def scale(n: int) -> dict[str, Any]:
        gates.append(asyncio.Event())
        pending = weigh(n)
        try:
            unit = interrupt("unit?")
        finally:
            gates[-1].set()
        return {"weight": await pending, "unit": unit}

    async def main() -> None:
        cfg = {"configurable": {"thread_id": "settle-async"}}
        paused = await scale.ainvoke(5, cfg)
        assert [i.value for i in paused["__interrupt__"]] == ["unit?"]
        assert runs == [5]
        assert await scale.ainvoke(Command(resume="g"), cfg) == {"weight": 15, "unit": "g"}
        assert runs == [5]

    asyncio.run(main())


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_unawaited_call_finishes_before_the_run_returns(mode: str) -> None:
    gate = threading.Event()
    done: list[str] = []

    @task
    def audit(label: str) -> str:
        assert gate.wait(timeout=60)
        done.append(label)
        return label

    @entrypoint(checkpointer=InMemorySaver())
    def flow(label: str) -> str:
        audit(label)  # fire and forget
        gate.set()
        return "started"

    cfg = {"configurable": {"thread_id": "settle-unawaited"}}
    assert _invoke(mode, flow, "first", cfg) == "started"
    assert done == ["first"]
