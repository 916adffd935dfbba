"""Resume details: task-level ids, invalid answers, the ambiguous-resume message."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

import pydantic
import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.errors import UnknownInterruptError, is_invalid_resume
from stategraph.graph import START, StateGraph
from stategraph.types import Command, interrupt

from ._support import Runner, cfg


class Out(TypedDict, total=False):
    out: Any


class Log(TypedDict, total=False):
    log: Annotated[list[str], operator.add]


class Approval(pydantic.BaseModel):
    approved: bool


def _two_questions() -> Any:
    def node(state: Out) -> Out:
        first = interrupt("name?")
        second = interrupt("age?")
        return {"out": [first, second]}

    return (
        StateGraph(Out)
        .add_node("ask", node)
        .add_edge(START, "ask")
        .compile(checkpointer=InMemorySaver())
    )


def test_the_first_interrupt_id_answers_the_task_questions_in_order(runner: Runner) -> None:
    graph = _two_questions()
    c = cfg("two")
    first_id = runner.invoke(graph, {"out": None}, c)["__interrupt__"][0].id
    second = runner.invoke(graph, Command(resume={first_id: "Ada"}), c)["__interrupt__"][0]
    assert second.value == "age?" and second.id != first_id
    assert runner.invoke(graph, Command(resume={first_id: 36}), c) == {"out": ["Ada", 36]}


def test_the_second_interrupt_own_id_works_too(runner: Runner) -> None:
    graph = _two_questions()
    c = cfg("own")
    first_id = runner.invoke(graph, {"out": None}, c)["__interrupt__"][0].id
    second_id = runner.invoke(graph, Command(resume={first_id: "Ada"}), c)["__interrupt__"][0].id
    assert runner.invoke(graph, Command(resume={second_id: 36}), c) == {"out": ["Ada", 36]}


def test_invalid_answers_are_recognisable_and_can_be_retried(runner: Runner) -> None:
    def node(state: Out) -> Out:
        return {"out": interrupt("approve?", response_schema=Approval)}

    graph = (
        StateGraph(Out)
        .add_node("gate", node)
        .add_edge(START, "gate")
        .compile(checkpointer=InMemorySaver())
    )
    c = cfg("gate")
    runner.invoke(graph, {"out": None}, c)
    with pytest.raises(pydantic.ValidationError) as info:
        runner.invoke(graph, Command(resume={"approved": "maybe"}), c)
    assert is_invalid_resume(info.value)
    assert runner.invoke(graph, Command(resume={"approved": True}), c) == {
        "out": Approval(approved=True)
    }


def test_is_invalid_resume_is_false_for_other_errors() -> None:
    with pytest.raises(pydantic.ValidationError) as info:
        Approval.model_validate({"approved": "maybe"})
    assert not is_invalid_resume(info.value)
    assert not is_invalid_resume(ValueError("x"))


def test_bare_resume_with_several_waiting_interrupts_names_them(runner: Runner) -> None:
    def left(state: Out) -> Out:
        return {"out": interrupt("left?")}

    def right(state: Out) -> Out:
        return {"out": interrupt("right?")}

    graph = (
        StateGraph(Out)
        .add_node("left", left)
        .add_node("right", right)
        .add_edge(START, "left")
        .add_edge(START, "right")
        .compile(checkpointer=InMemorySaver())
    )
    c = cfg("two-tasks")
    runner.invoke(graph, {"out": None}, c)
    with pytest.raises(RuntimeError, match="multiple pending interrupts") as info:
        runner.invoke(graph, Command(resume="yes"), c)
    assert "'left?'" in str(info.value) and "'right?'" in str(info.value)


def test_unknown_interrupt_error_carries_its_details() -> None:
    err = UnknownInterruptError(
        "no such interrupt", reason="not_pending", interrupt_ids=["a"], pending_ids=["b"]
    )
    assert (err.reason, err.interrupt_ids, err.pending_ids) == ("not_pending", ("a",), ("b",))


async def test_an_invalid_answer_lets_the_other_answered_tasks_finish() -> None:
    effects: list[str] = []

    async def pay(state: Log) -> Log:
        interrupt("pay?", response_schema=Approval)
        effects.append("paid")
        await asyncio.sleep(0.05)
        return {"log": ["paid"]}

    async def ship(state: Log) -> Log:
        interrupt("ship?", response_schema=Approval)
        return {"log": ["shipped"]}

    graph = (
        StateGraph(Log)
        .add_node("pay", pay)
        .add_node("ship", ship)
        .add_edge(START, "pay")
        .add_edge(START, "ship")
        .compile(checkpointer=InMemorySaver())
    )
    c = cfg("answers")
    await graph.ainvoke({"log": []}, c)
    ids = {i.value: i.id for i in (await graph.aget_state(c)).interrupts}
    bad = {ids["pay?"]: {"approved": True}, ids["ship?"]: {"approved": "perhaps"}}
    with pytest.raises(pydantic.ValidationError):
        await graph.ainvoke(Command(resume=bad), c)
    # the valid answer's task finished (and is not run again)
    assert [i.value for i in (await graph.aget_state(c)).interrupts] == ["ship?"]
    out = await graph.ainvoke(Command(resume={ids["ship?"]: {"approved": True}}), c)
    assert (sorted(out["log"]), effects) == (["paid", "shipped"], ["paid"])
