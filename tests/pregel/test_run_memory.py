"""A finished run leaves no reference cycles behind: its state is freed at once.

Cycles (loop <-> run context, task <-> its reader) would keep a finished run's channels,
node inputs and writes alive until the next full garbage collection, so memory would
grow with each run of a long-lived graph.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Annotated, TypedDict

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, StateGraph
from stategraph.pregel._loop.drive import Loop
from stategraph.pregel._run import RunContext
from stategraph.pregel._task import Task


class State(TypedDict):
    items: Annotated[list[str], lambda a, b: a + b]


def _graph(checkpointer: InMemorySaver | None = None):  # type: ignore[no-untyped-def]
    builder = StateGraph(State)
    builder.add_node("a", lambda s: {"items": ["a"]})
    builder.add_node("b", lambda s: {"items": ["b"]})
    builder.add_edge(START, "a")
    builder.add_conditional_edges("a", lambda s: "b" if len(s["items"]) < 6 else END)
    builder.add_edge("b", "a")
    return builder.compile(checkpointer=checkpointer)


@pytest.fixture
def saved_garbage() -> Iterator[list[object]]:
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield gc.garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


@pytest.mark.parametrize("saver", [None, "memory"])
def test_a_finished_run_leaves_no_cycles(saved_garbage: list[object], saver: str | None) -> None:
    graph = _graph(InMemorySaver() if saver else None)
    config = {"configurable": {"thread_id": "t"}}
    out = graph.invoke({"items": []}, config)
    assert out == {"items": ["a", "b", "a", "b", "a", "b", "a"]}
    gc.collect()
    kinds = {type(o) for o in saved_garbage}
    assert not kinds & {Loop, RunContext, Task}, kinds


def test_the_run_context_reaches_its_loop_while_it_runs() -> None:
    seen: list[object] = []

    def node(state: State) -> dict[str, list[str]]:
        from stategraph._context import CURRENT_TASK

        ctx = CURRENT_TASK.get()
        assert ctx is not None
        run, _task = ctx.run
        seen.append(run.loop)
        return {"items": ["x"]}

    builder = StateGraph(State)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    builder.add_edge("n", END)
    builder.compile().invoke({"items": []})
    assert len(seen) == 1 and isinstance(seen[0], Loop)
