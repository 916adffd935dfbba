"""How a step's tasks are executed: inline, on threads, on asyncio; limits and failures."""

from __future__ import annotations

import asyncio
import operator
import sys
import threading
import time
from typing import Annotated, Any, TypedDict

import pytest

from stategraph.channels import LastValue, Topic
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.errors import GraphRecursionError
from stategraph.graph import END, START, StateGraph
from stategraph.pregel import NodeBuilder, Pregel
from stategraph.types import Command, interrupt

THREAD = {"configurable": {"thread_id": "t1"}}


def _fan(funcs: dict[str, Any]) -> Pregel:
    """Every function subscribes to "inp" and appends its output to the topic "out"."""
    return Pregel(
        nodes={
            name: NodeBuilder().subscribe_only("inp").do(f).write_to("out")
            for name, f in funcs.items()
        },
        channels={"inp": LastValue(int), "out": Topic(object)},
        input_channels="inp",
        output_channels="out",
    )


class State(TypedDict):
    x: int
    log: Annotated[list[str], operator.add]


# --------------------------------------------------------------------------- where tasks run


def test_single_sync_task_runs_inline_on_the_calling_thread() -> None:
    threads: list[int] = []
    app = _fan({"only": lambda x: threads.append(threading.get_ident()) or x})
    assert app.invoke(3) == [3]
    assert threads == [threading.get_ident()]


async def test_single_async_task_runs_on_the_event_loop_thread() -> None:
    threads: list[int] = []

    async def node(x: int) -> int:
        threads.append(threading.get_ident())
        return x

    app = _fan({"only": node})
    assert await app.ainvoke(3) == [3]
    assert threads == [threading.get_ident()]


def test_parallel_sync_tasks_overlap_in_time() -> None:
    # each task waits at a 3-party barrier: only possible if all three run at once
    barrier = threading.Barrier(3, timeout=5)
    threads: list[int] = []

    def meet(x: int) -> int:
        threads.append(threading.get_ident())
        return barrier.wait()

    app = _fan({f"n{i}": meet for i in range(3)})
    out = app.invoke(1)
    assert sorted(out) == [0, 1, 2]
    assert len(set(threads)) == 3
    assert not barrier.broken


async def test_parallel_async_tasks_overlap_on_the_loop() -> None:
    first, second = asyncio.Event(), asyncio.Event()

    async def one(x: int) -> str:
        first.set()
        await asyncio.wait_for(second.wait(), 5)
        return "one"

    async def two(x: int) -> str:
        second.set()
        await asyncio.wait_for(first.wait(), 5)
        return "two"

    app = _fan({"one": one, "two": two})
    assert await app.ainvoke(1) == ["one", "two"]


async def test_sync_nodes_in_async_run_go_to_worker_threads() -> None:
    loop_thread = threading.get_ident()
    threads: list[int] = []
    barrier = threading.Barrier(2, timeout=5)

    def sync_node(x: int) -> int:
        threads.append(threading.get_ident())
        barrier.wait()
        return x

    app = _fan({"a": sync_node, "b": sync_node})
    assert await app.ainvoke(5) == [5, 5]
    assert len(threads) == 2
    assert loop_thread not in threads

    single: list[int] = []
    lone = _fan({"a": lambda x: single.append(threading.get_ident()) or x})
    assert await lone.ainvoke(5) == [5]
    assert single != [loop_thread]
    assert len(single) == 1


async def test_sync_and_async_nodes_mixed_in_one_step() -> None:
    loop_thread = threading.get_ident()
    where: dict[str, int] = {}

    def sync_node(x: int) -> str:
        where["sync"] = threading.get_ident()
        return "sync"

    async def async_node(x: int) -> str:
        where["async"] = threading.get_ident()
        return "async"

    app = _fan({"a": async_node, "s": sync_node})
    assert await app.ainvoke(1) == ["async", "sync"]
    assert where["async"] == loop_thread
    assert where["sync"] != loop_thread


def test_async_node_in_sync_run_is_an_error_naming_the_node() -> None:
    async def node(x: int) -> int:
        return x

    app = _fan({"coro_node": node})
    with pytest.raises(Exception) as info:
        app.invoke(1)
    text = str(info.value) + "".join(getattr(info.value, "__notes__", ()))
    assert "coro_node" in text


# --------------------------------------------------------------------------- max_concurrency


class _Gauge:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = 0
        self.peak = 0

    def enter(self) -> None:
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)

    def leave(self) -> None:
        with self.lock:
            self.active -= 1


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_max_concurrency_limits_sync_tasks(limit: int) -> None:
    gauge = _Gauge()

    def work(x: int) -> int:
        gauge.enter()
        time.sleep(0.05)
        gauge.leave()
        return x

    app = _fan({f"n{i}": work for i in range(5)})
    assert app.invoke(1, {"max_concurrency": limit}) == [1] * 5
    assert gauge.peak == limit


@pytest.mark.parametrize("limit", [1, 2])
async def test_max_concurrency_limits_async_tasks(limit: int) -> None:
    gauge = _Gauge()

    async def work(x: int) -> int:
        gauge.enter()
        await asyncio.sleep(0.05)
        gauge.leave()
        return x

    app = _fan({f"n{i}": work for i in range(5)})
    assert await app.ainvoke(1, {"max_concurrency": limit}) == [1] * 5
    assert gauge.peak == limit


async def test_max_concurrency_limits_sync_tasks_in_async_run() -> None:
    gauge = _Gauge()

    def work(x: int) -> int:
        gauge.enter()
        time.sleep(0.05)
        gauge.leave()
        return x

    app = _fan({f"n{i}": work for i in range(4)})
    assert await app.ainvoke(1, {"max_concurrency": 2}) == [1] * 4
    assert gauge.peak == 2


def test_without_max_concurrency_all_tasks_of_a_step_run_together() -> None:
    gauge = _Gauge()

    def work(x: int) -> int:
        gauge.enter()
        time.sleep(0.05)
        gauge.leave()
        return x

    app = _fan({f"n{i}": work for i in range(5)})
    assert app.invoke(1) == [1] * 5
    assert gauge.peak == 5


# --------------------------------------------------------------------------- failures


def _failing_graph() -> Any:
    def ok(s: State) -> dict[str, Any]:
        return {"log": ["ok"]}

    def explode(s: State) -> dict[str, Any]:
        raise ValueError("boom")

    g = StateGraph(State)
    g.add_node("ok", ok)
    g.add_node("exploding_node", explode)
    g.add_edge(START, "ok")
    g.add_edge(START, "exploding_node")
    return g.compile()


def test_failing_task_propagates_its_own_exception(runner: Any) -> None:
    with pytest.raises(ValueError, match="boom") as info:
        runner.invoke(_failing_graph(), {"x": 0, "log": []})
    assert type(info.value) is ValueError
    if sys.version_info >= (3, 11):
        notes = info.value.__notes__
        assert len(notes) == 1
        assert notes[0].startswith("During task with name 'exploding_node' and id '")


def test_failing_task_in_stream_propagates(runner: Any) -> None:
    with pytest.raises(ValueError, match="boom"):
        runner.stream(_failing_graph(), {"x": 0, "log": []}, stream_mode="updates")


def test_failing_run_saves_the_error_and_completed_sibling_writes(runner: Any) -> None:
    g = StateGraph(State)
    g.add_node("ok", lambda s: {"log": ["ok"]})

    def explode(s: State) -> dict[str, Any]:
        time.sleep(0.01)
        raise ValueError("boom")

    g.add_node("bad", explode)
    g.add_edge(START, "ok")
    g.add_edge(START, "bad")
    app = g.compile(checkpointer=InMemorySaver())
    with pytest.raises(ValueError):
        runner.invoke(app, {"x": 0, "log": []}, THREAD)
    state = runner.get_state(app, THREAD)
    assert state.next == ("bad",)
    by_name = {t.name: t for t in state.tasks}
    assert by_name["ok"].result == {"log": ["ok"]}
    assert by_name["ok"].error is None
    assert by_name["bad"].error is not None
    assert "boom" in repr(by_name["bad"].error)


def test_interrupt_in_one_task_lets_siblings_finish(runner: Any) -> None:
    calls: list[str] = []

    def asks(s: State) -> dict[str, Any]:
        calls.append("asks")
        answer = interrupt("question")
        return {"log": [f"asks:{answer}"]}

    def sibling(s: State) -> dict[str, Any]:
        calls.append("sibling")
        time.sleep(0.05)
        return {"log": ["sibling"]}

    g = StateGraph(State)
    g.add_node("asks", asks)
    g.add_node("sibling", sibling)
    g.add_edge(START, "asks")
    g.add_edge(START, "sibling")
    app = g.compile(checkpointer=InMemorySaver())
    out = runner.invoke(app, {"x": 0, "log": []}, THREAD)
    assert out["log"] == ["sibling"]
    assert [i.value for i in out["__interrupt__"]] == ["question"]
    assert sorted(calls) == ["asks", "sibling"]
    state = runner.get_state(app, THREAD)
    assert state.next == ("asks",)
    by_name = {t.name: t for t in state.tasks}
    assert by_name["sibling"].result == {"log": ["sibling"]}
    assert [i.value for i in by_name["asks"].interrupts] == ["question"]
    # resuming re-runs only the interrupted task
    final = runner.invoke(app, Command(resume="yes"), THREAD)
    assert final == {"x": 0, "log": ["asks:yes", "sibling"]}
    assert sorted(calls) == ["asks", "asks", "sibling"]


# --------------------------------------------------------------------------- recursion limit


def _abc_chain(ran: list[str]) -> Any:
    g = StateGraph(State)
    for name in "abc":
        g.add_node(name, lambda s, name=name: ran.append(name) or {"x": s["x"] + 1})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return g.compile()


def test_recursion_limit_exact_boundary_of_a_chain(runner: Any) -> None:
    ran: list[str] = []
    app = _abc_chain(ran)
    assert runner.invoke(app, {"x": 0}, {"recursion_limit": 4}) == {"x": 3, "log": []}
    with pytest.raises(GraphRecursionError) as info:
        runner.invoke(app, {"x": 0}, {"recursion_limit": 3})
    message = str(info.value)
    assert "Recursion limit of 3 reached" in message
    assert "recursion_limit" in message


def test_recursion_limit_runs_steps_up_to_the_limit_before_failing(runner: Any) -> None:
    # like LangGraph: with limit N the steps 0..N run, the error comes before step N + 1
    ran: list[str] = []
    app = _abc_chain(ran)
    with pytest.raises(GraphRecursionError):
        runner.invoke(app, {"x": 0}, {"recursion_limit": 3})
    assert ran == ["a", "b", "c"]
    ran.clear()
    with pytest.raises(GraphRecursionError):
        runner.invoke(app, {"x": 0}, {"recursion_limit": 2})
    assert ran == ["a", "b"]


def test_cycle_with_condition_counts_steps(runner: Any) -> None:
    ran: list[int] = []

    def loop_node(s: State) -> dict[str, Any]:
        ran.append(s["x"])
        return {"x": s["x"] + 1}

    g = StateGraph(State)
    g.add_node("loop", loop_node)
    g.add_edge(START, "loop")
    g.add_conditional_edges("loop", lambda s: "loop" if s["x"] < 100 else END)
    app = g.compile()
    with pytest.raises(GraphRecursionError):
        runner.invoke(app, {"x": 0}, {"recursion_limit": 4})
    assert ran == [0, 1, 2, 3]
    ran.clear()
    assert runner.invoke(app, {"x": 95}, {"recursion_limit": 6}) == {"x": 100, "log": []}
    assert ran == [95, 96, 97, 98, 99]


def test_default_recursion_limit_is_10007(runner: Any) -> None:
    count = [0]

    def inc(x: int) -> int:
        count[0] += 1
        return x + 1

    app = Pregel(
        nodes={"n": NodeBuilder().subscribe_only("a").do(inc).write_to("a")},
        channels={"a": LastValue(int)},
        input_channels="a",
        output_channels="a",
    )
    with pytest.raises(GraphRecursionError) as info:
        runner.invoke(app, 0)
    assert "Recursion limit of 10007 reached" in str(info.value)
    # steps 0..10007 ran
    assert count[0] == 10008


@pytest.mark.parametrize("bad", [0, -1, "ten"])
def test_invalid_recursion_limit_is_rejected(runner: Any, bad: Any) -> None:
    app = _abc_chain([])
    with pytest.raises((ValueError, TypeError)):
        runner.invoke(app, {"x": 0}, {"recursion_limit": bad})
