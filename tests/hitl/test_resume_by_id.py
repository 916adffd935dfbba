"""Answering specific interrupts with Command(resume={interrupt_id: value})."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.types import Command, Interrupt, interrupt

from ._support import Runner, cfg, fan_out, xxh


def two_askers(calls: list[str]) -> Any:
    """a and b interrupt in parallel, c finishes; all join into j."""
    return fan_out([("a", True), ("b", True), ("c", False)], calls).compile(
        checkpointer=InMemorySaver()
    )


def merge(left: dict[str, str] | None, right: dict[str, str]) -> dict[str, str]:
    """Reducer: later keys win."""
    return {**(left or {}), **right}


class M(TypedDict, total=False):
    out: Annotated[dict[str, str], merge]


def _ids(result: dict) -> dict[str, str]:
    return {i.value: i.id for i in result["__interrupt__"]}


def test_parallel_interrupt_ids_follow_task_namespaces(runner: Runner) -> None:
    calls: list[str] = []
    graph = two_askers(calls)
    config = cfg("ids")
    result = runner.invoke(graph, {"log": ["in"]}, config)
    snapshot = runner.get_state(graph, config)
    by_name = {t.name: t for t in snapshot.tasks}
    expected = [
        Interrupt(value="a?", id=xxh(f"a:{by_name['a'].id}")),
        Interrupt(value="b?", id=xxh(f"b:{by_name['b'].id}")),
    ]
    assert result["log"] == ["in", "c"]
    assert sorted(result["__interrupt__"], key=lambda i: i.value) == expected
    assert snapshot.next == ("a", "b")
    assert snapshot.interrupts == tuple(expected)
    assert by_name["a"].interrupts == (expected[0],)
    assert by_name["b"].interrupts == (expected[1],)
    assert by_name["c"].interrupts == ()
    assert sorted(calls) == ["a", "b", "c"]


def test_bare_resume_with_several_waiting_is_an_error_listing_ids(runner: Runner) -> None:
    calls: list[str] = []
    graph = two_askers(calls)
    config = cfg("bare")
    ids = _ids(runner.invoke(graph, {"log": ["in"]}, config))
    calls.clear()
    with pytest.raises(RuntimeError) as info:
        runner.invoke(graph, Command(resume="X"), config)
    message = str(info.value)
    assert ids["a?"] in message
    assert ids["b?"] in message
    assert calls == []
    # nothing changed: both interrupts are still waiting
    snapshot = runner.get_state(graph, config)
    assert snapshot.next == ("a", "b")
    assert {i.id for i in snapshot.interrupts} == set(ids.values())


def test_unknown_id_with_several_waiting_is_an_error(runner: Runner) -> None:
    graph = two_askers([])
    config = cfg("unknown-id")
    ids = _ids(runner.invoke(graph, {"log": ["in"]}, config))
    with pytest.raises(RuntimeError) as info:
        runner.invoke(graph, Command(resume={"no-such-id": "A"}), config)
    assert ids["a?"] in str(info.value)
    assert ids["b?"] in str(info.value)


def test_resume_one_task_at_a_time(runner: Runner) -> None:
    calls: list[str] = []
    graph = two_askers(calls)
    config = cfg("one-at-a-time")
    ids = _ids(runner.invoke(graph, {"log": ["in"]}, config))

    calls.clear()
    after_b = runner.invoke(graph, Command(resume={ids["b?"]: "B"}), config)
    assert after_b == {
        "log": ["in", "b=B", "c"],
        "__interrupt__": [Interrupt(value="a?", id=ids["a?"])],
    }
    # only the two waiting tasks run again; c is finished
    assert sorted(calls) == ["a", "b"]
    snapshot = runner.get_state(graph, config)
    assert snapshot.next == ("a",)
    assert snapshot.values == {"log": ["in", "b=B", "c"]}
    assert snapshot.interrupts == (Interrupt(value="a?", id=ids["a?"]),)
    tasks = {t.name: (t.interrupts, t.result) for t in snapshot.tasks}
    assert tasks == {
        "a": ((Interrupt(value="a?", id=ids["a?"]),), None),
        "b": ((), {"log": ["b=B"]}),
        "c": ((), {"log": ["c"]}),
    }

    calls.clear()
    final = runner.invoke(graph, Command(resume={ids["a?"]: "A"}), config)
    assert final == {"log": ["in", "a=A", "b=B", "c", "j"]}
    assert calls == ["a", "j"]


def test_resume_both_tasks_at_once(runner: Runner) -> None:
    calls: list[str] = []
    graph = two_askers(calls)
    config = cfg("both")
    ids = _ids(runner.invoke(graph, {"log": ["in"]}, config))
    calls.clear()
    final = runner.invoke(graph, Command(resume={ids["a?"]: "A", ids["b?"]: "B"}), config)
    assert final == {"log": ["in", "a=A", "b=B", "c", "j"]}
    assert sorted(calls[:2]) == ["a", "b"]
    assert calls[2:] == ["j"]
    assert runner.get_state(graph, config).next == ()


def test_single_waiting_interrupt_accepts_bare_and_by_id(runner: Runner) -> None:
    calls: list[str] = []
    graph = fan_out([("a", True), ("c", False)], calls).compile(checkpointer=InMemorySaver())
    bare_cfg, id_cfg = cfg("single-bare"), cfg("single-id")
    runner.invoke(graph, {"log": []}, bare_cfg)
    assert runner.invoke(graph, Command(resume="X"), bare_cfg) == {"log": ["a=X", "c", "j"]}

    ids = _ids(runner.invoke(graph, {"log": []}, id_cfg))
    assert runner.invoke(graph, Command(resume={ids["a?"]: "Y"}), id_cfg) == {
        "log": ["a=Y", "c", "j"]
    }


def test_resume_later_interrupt_of_a_task_by_its_indexed_id(runner: Runner) -> None:
    class S(TypedDict, total=False):
        out: list[str]

    def form(state: S) -> dict[str, list[str]]:
        return {"out": [interrupt("first?"), interrupt("second?")]}

    builder = StateGraph(S)
    builder.add_node("form", form)
    builder.add_edge(START, "form")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("indexed")
    first = runner.invoke(graph, {"out": []}, config)
    ns = f"form:{runner.get_state(graph, config).tasks[0].id}"
    assert first["__interrupt__"] == [Interrupt(value="first?", id=xxh(ns))]

    second = runner.invoke(graph, Command(resume={xxh(ns): "one"}), config)
    assert second["__interrupt__"] == [Interrupt(value="second?", id=xxh(f"{ns}|1"))]

    final = runner.invoke(graph, Command(resume={xxh(f"{ns}|1"): "two"}), config)
    assert final == {"out": ["one", "two"]}


def test_mixed_parallel_and_sequential_answers(runner: Runner) -> None:
    """Two parallel tasks, one of which asks twice: answered by id across three invokes."""

    def x(state: M) -> dict[str, dict[str, str]]:
        return {"out": {"x1": interrupt("x1?"), "x2": interrupt("x2?")}}

    def y(state: M) -> dict[str, dict[str, str]]:
        return {"out": {"y": interrupt("y?")}}

    builder = StateGraph(M)
    builder.add_node("x", x)
    builder.add_node("y", y)
    builder.add_edge(START, "x")
    builder.add_edge(START, "y")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("mixed")
    first = _ids(runner.invoke(graph, {"out": {}}, config))
    assert set(first) == {"x1?", "y?"}
    second = runner.invoke(graph, Command(resume={first["x1?"]: "X1", first["y?"]: "Y"}), config)
    assert second["out"] == {"y": "Y"}
    tasks = {t.name: t.id for t in runner.get_state(graph, config).tasks}
    assert second["__interrupt__"] == [Interrupt(value="x2?", id=xxh(f"x:{tasks['x']}|1"))]
    final = runner.invoke(graph, Command(resume="X2"), config)
    assert final == {"out": {"y": "Y", "x1": "X1", "x2": "X2"}}
