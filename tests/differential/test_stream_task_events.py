"""Task and checkpoint events of ``stream_mode="tasks"``, ``"debug"``, ``"checkpoints"``.

Found by the differential fuzzer (tools/differential); expected values recorded from
LangGraph 1.2.24:

- a task that interrupts still gets a result event (``result == {}``, the interrupts
  listed as dicts with ``value``/``id``/``response_schema``);
- the first step of a resumed run reports a start event for every task of the step
  (also those whose writes were saved before and are not re-run) and result events
  only for the tasks that run;
- a resumed run first re-emits the checkpoint it resumes from (``checkpoints`` and
  ``debug`` modes), even when nothing is left to run.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.types import Command, interrupt


class State(TypedDict, total=False):
    trace: Annotated[list, operator.add]


def plain(state: State) -> dict[str, Any]:
    return {"trace": ["a"]}


def asks(state: State) -> dict[str, Any]:
    interrupt("e")
    return {"trace": ["e"]}


def parallel_with_interrupt() -> Any:
    g = StateGraph(State)
    g.add_node("e", asks)
    g.add_node("a", plain)
    g.add_edge(START, "e")
    g.add_edge(START, "a")
    return g.compile(checkpointer=InMemorySaver())


def chain_paused_before_b() -> Any:
    def b(state: State) -> dict[str, Any]:
        return {"trace": ["b"]}

    g = StateGraph(State)
    g.add_node("a", plain)
    g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    return g.compile(checkpointer=InMemorySaver(), interrupt_before=["b"])


def result_events(events: list[dict], name: str) -> list[dict]:
    return [e for e in events if e["name"] == name and "result" in e]


def test_tasks_stream_has_a_result_for_an_interrupted_task(runner: Any) -> None:
    graph = parallel_with_interrupt()
    events = runner.stream(
        graph, {"trace": []}, {"configurable": {"thread_id": "t"}}, stream_mode="tasks"
    )
    assert sorted(e["name"] for e in events if "input" in e) == ["a", "e"]
    assert [e["result"] for e in result_events(events, "a")] == [{"trace": ["a"]}]
    # recorded from LangGraph 1.2.24
    (res,) = result_events(events, "e")
    assert res["result"] == {}
    assert res["error"] is None
    assert [sorted(i) for i in res["interrupts"]] == [["id", "response_schema", "value"]]
    assert [(i["value"], i["response_schema"]) for i in res["interrupts"]] == [("e", None)]
    assert isinstance(res["interrupts"][0]["id"], str)


def test_debug_stream_has_a_result_for_an_interrupted_task(runner: Any) -> None:
    graph = parallel_with_interrupt()
    events = runner.stream(
        graph, {"trace": []}, {"configurable": {"thread_id": "t"}}, stream_mode="debug"
    )
    got = sorted(
        (
            e["type"],
            e["step"],
            e["payload"]["name"],
            e["payload"].get("result"),
            [
                i["value"] if isinstance(i, dict) else i.value
                for i in e["payload"].get("interrupts", [])
            ],
        )
        for e in events
        if e["type"] != "checkpoint"
    )
    # recorded from LangGraph 1.2.24
    assert got == [
        ("task", 1, "a", None, []),
        ("task", 1, "e", None, []),
        ("task_result", 1, "a", {"trace": ["a"]}, []),
        ("task_result", 1, "e", {}, ["e"]),
    ]


def test_tasks_stream_of_the_resumed_step(runner: Any) -> None:
    graph = parallel_with_interrupt()
    config = {"configurable": {"thread_id": "t"}}
    runner.invoke(graph, {"trace": []}, config)
    events = runner.stream(graph, Command(resume="r"), config, stream_mode="tasks")
    got = [(e["name"], "start" if "input" in e else "result", e.get("result")) for e in events]
    # recorded from LangGraph 1.2.24: "a" (saved before, not re-run) has a start event
    # and no result event
    assert got == [("a", "start", None), ("e", "start", None), ("e", "result", {"trace": ["e"]})]


def checkpoints(chunks: list[dict]) -> list[tuple]:
    return [
        (c["metadata"]["step"], c["metadata"]["source"], list(c["next"]), c["values"])
        for c in chunks
    ]


def test_checkpoints_stream_of_a_resumed_run_starts_with_the_resumed_checkpoint(
    runner: Any,
) -> None:
    graph = chain_paused_before_b()
    config = {"configurable": {"thread_id": "t"}}
    first = runner.stream(graph, {"trace": []}, config, stream_mode="checkpoints")
    assert checkpoints(first) == [
        (-1, "input", ["__start__"], {"trace": []}),
        (0, "loop", ["a"], {"trace": []}),
        (1, "loop", ["b"], {"trace": ["a"]}),
    ]
    # recorded from LangGraph 1.2.24
    resumed = runner.stream(graph, None, config, stream_mode="checkpoints")
    assert checkpoints(resumed) == [
        (1, "loop", ["b"], {"trace": ["a"]}),
        (2, "loop", [], {"trace": ["a", "b"]}),
    ]
    finished = runner.stream(graph, None, config, stream_mode="checkpoints")
    assert checkpoints(finished) == [(2, "loop", [], {"trace": ["a", "b"]})]


def test_debug_stream_of_a_resumed_run_starts_with_the_resumed_checkpoint(runner: Any) -> None:
    graph = chain_paused_before_b()
    config = {"configurable": {"thread_id": "t"}}
    runner.stream(graph, {"trace": []}, config, stream_mode="debug")
    events = runner.stream(graph, None, config, stream_mode="debug")
    # recorded from LangGraph 1.2.24
    assert [(e["type"], e["step"]) for e in events] == [
        ("checkpoint", 1),
        ("task", 2),
        ("task_result", 2),
        ("checkpoint", 2),
    ]
