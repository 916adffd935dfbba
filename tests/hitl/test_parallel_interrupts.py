"""One task interrupts while its siblings in the same step finish."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.constants import INTERRUPT
from stategraph.graph import START, StateGraph
from stategraph.types import Command, Interrupt, interrupt

from ._support import LogState, Runner, cfg, fan_out, shape, xxh

# the same assertions on threads, a local Ray and a local Dask cluster
pytestmark = pytest.mark.executors


def one_asker(calls: list[str]) -> tuple[Any, InMemorySaver]:
    saver = InMemorySaver()
    graph = fan_out([("a", True), ("b", False), ("c", False)], calls).compile(checkpointer=saver)
    return graph, saver


def test_siblings_finish_and_their_writes_show_in_result_and_state(runner: Runner) -> None:
    calls: list[str] = runner.log()
    graph, _ = one_asker(calls)
    config = cfg("siblings")
    result = runner.invoke(graph, {"log": ["in"]}, config)
    snapshot = runner.get_state(graph, config)
    task_ids = {t.name: t.id for t in snapshot.tasks}
    assert result == {
        "log": ["in", "b", "c"],
        "__interrupt__": [Interrupt(value="a?", id=xxh(f"a:{task_ids['a']}"))],
    }
    assert sorted(calls) == ["a", "b", "c"]
    assert snapshot.next == ("a",)
    assert snapshot.values == {"log": ["in", "b", "c"]}
    assert {t.name: t.result for t in snapshot.tasks} == {
        "a": None,
        "b": {"log": ["b"]},
        "c": {"log": ["c"]},
    }


def test_checkpoint_by_id_holds_values_from_before_the_step(runner: Runner) -> None:
    graph, saver = one_asker([])
    config = cfg("by-id")
    runner.invoke(graph, {"log": ["in"]}, config)
    latest = runner.get_state(graph, config)
    history = runner.history(graph, config)
    assert shape(history) == [("loop", 0, ("a", "b", "c")), ("input", -1, ("__start__",))]
    assert (
        history[0].config["configurable"]["checkpoint_id"]
        == (latest.config["configurable"]["checkpoint_id"])
    )
    assert history[0].values == {"log": ["in"]}
    by_id = runner.get_state(graph, history[0].config)
    assert by_id.values == {"log": ["in"]}

    # the saved checkpoint itself is the pre-step state; the step's progress is pending writes
    saved = saver.get_tuple(history[0].config)
    assert saved is not None
    assert saved.checkpoint["channel_values"]["log"] == ["in"]
    by_task: dict[str, list[str]] = {}
    for task_id, channel, _ in saved.pending_writes or []:
        by_task.setdefault(task_id, []).append(channel)
    ids = {t.name: t.id for t in latest.tasks}
    assert by_task[ids["a"]] == [INTERRUPT]
    assert "log" in by_task[ids["b"]]
    assert "log" in by_task[ids["c"]]


def test_resume_does_not_rerun_finished_siblings(runner: Runner) -> None:
    calls: list[str] = runner.log()
    graph, _ = one_asker(calls)
    config = cfg("no-rerun")
    runner.invoke(graph, {"log": ["in"]}, config)
    calls.clear()
    final = runner.invoke(graph, Command(resume="A"), config)
    # writes are applied in task order, whatever order the tasks finished in
    assert final == {"log": ["in", "a=A", "b", "c", "j"]}
    assert calls == ["a", "j"]
    history = runner.history(graph, config)
    assert shape(history) == [
        ("loop", 2, ()),
        ("loop", 1, ("j",)),
        ("loop", 0, ("a", "b", "c")),
        ("input", -1, ("__start__",)),
    ]
    assert [s.values for s in history] == [
        {"log": ["in", "a=A", "b", "c", "j"]},
        {"log": ["in", "a=A", "b", "c"]},
        {"log": ["in"]},
        {"log": []},
    ]


def test_slow_sibling_is_not_cancelled_by_the_interrupt(runner: Runner) -> None:
    calls: list[str] = runner.log()

    def fast_ask(state: LogState) -> dict[str, list[str]]:
        calls.append("ask")
        return {"log": [f"ask={interrupt('now?')}"]}

    def slow(state: LogState) -> dict[str, list[str]]:
        time.sleep(0.05)
        calls.append("slow")
        return {"log": ["slow"]}

    builder = StateGraph(LogState)
    builder.add_node("ask", fast_ask)
    builder.add_node("slow", slow)
    builder.add_edge(START, "ask")
    builder.add_edge(START, "slow")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("slow")
    result = runner.invoke(graph, {"log": []}, config)
    assert result["log"] == ["slow"]
    assert [i.value for i in result["__interrupt__"]] == ["now?"]
    assert sorted(calls) == ["ask", "slow"]
    calls.clear()
    assert runner.invoke(graph, Command(resume="go"), config) == {"log": ["ask=go", "slow"]}
    assert calls == ["ask"]


async def test_slow_async_sibling_is_not_cancelled_by_the_interrupt() -> None:
    calls: list[str] = []

    async def ask(state: LogState) -> dict[str, list[str]]:
        calls.append("ask")
        return {"log": [f"ask={interrupt('now?')}"]}

    async def slow(state: LogState) -> dict[str, list[str]]:
        await asyncio.sleep(0.05)
        calls.append("slow")
        return {"log": ["slow"]}

    builder = StateGraph(LogState)
    builder.add_node("ask", ask)
    builder.add_node("slow", slow)
    builder.add_edge(START, "ask")
    builder.add_edge(START, "slow")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("slow-async")
    result = await graph.ainvoke({"log": []}, config)
    assert result["log"] == ["slow"]
    assert [i.value for i in result["__interrupt__"]] == ["now?"]
    calls.clear()
    assert await graph.ainvoke(Command(resume="go"), config) == {"log": ["ask=go", "slow"]}
    assert calls == ["ask"]


def test_stream_updates_of_interrupted_step(runner: Runner) -> None:
    graph, _ = one_asker([])
    config = cfg("stream")
    chunks = runner.stream(graph, {"log": ["in"]}, config)
    ids = {t.name: t.id for t in runner.get_state(graph, config).tasks}
    interrupt_chunk = {"__interrupt__": (Interrupt(value="a?", id=xxh(f"a:{ids['a']}")),)}
    # the interrupt and the siblings' updates arrive as each task ends: order is timing
    assert len(chunks) == 3
    assert interrupt_chunk in chunks
    assert {"b": {"log": ["b"]}} in chunks
    assert {"c": {"log": ["c"]}} in chunks

    # on resume the finished siblings' saved writes are replayed, marked as cached
    resumed = runner.stream(graph, Command(resume="A"), config)
    assert resumed == [
        {"b": {"log": ["b"]}, "__metadata__": {"cached": True}},
        {"c": {"log": ["c"]}, "__metadata__": {"cached": True}},
        {"a": {"log": ["a=A"]}},
        {"j": {"log": ["j"]}},
    ]


def test_two_parallel_askers_then_a_sequential_one(runner: Runner) -> None:
    calls: list[str] = runner.log()
    builder = fan_out([("a", True), ("b", True)], calls, join="j")
    builder.add_node("k", _ask_node("k", calls))
    builder.add_edge("j", "k")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("then-sequential")
    first = runner.invoke(graph, {"log": []}, config)
    ids = {i.value: i.id for i in first["__interrupt__"]}
    second = runner.invoke(graph, Command(resume={ids["a?"]: "A", ids["b?"]: "B"}), config)
    assert second["log"] == ["a=A", "b=B", "j"]
    assert [i.value for i in second["__interrupt__"]] == ["k?"]
    # one waiting interrupt again: a bare resume answers it
    assert runner.invoke(graph, Command(resume="K"), config) == {"log": ["a=A", "b=B", "j", "k=K"]}
    assert calls.count("a") == 2
    assert calls.count("b") == 2
    assert calls.count("j") == 1
    assert calls.count("k") == 2


def _ask_node(name: str, calls: list[str]) -> Any:
    def node(state: LogState) -> dict[str, list[str]]:
        calls.append(name)
        return {"log": [f"{name}={interrupt(name + '?')}"]}

    return node
