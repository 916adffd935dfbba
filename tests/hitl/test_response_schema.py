"""interrupt(..., response_schema=...): surfaced to the caller, validating resume values."""

from __future__ import annotations

import dataclasses
from typing import Any

import pydantic
import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.constants import RESUME
from stategraph.graph import START, StateGraph
from stategraph.types import Command, Interrupt, interrupt

from ._support import Runner, cfg, xxh


class Out(TypedDict, total=False):
    out: Any


class Decision(pydantic.BaseModel):
    ok: bool
    note: str = ""


class DecisionDict(TypedDict):
    ok: bool


@dataclasses.dataclass
class DecisionDC:
    ok: bool


JSON_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def schema_graph(schema: Any, runs: list[Any]) -> Any:
    def review(state: Out) -> dict[str, Any]:
        runs.append("review")
        return {"out": interrupt({"ask": "ok?"}, response_schema=schema)}

    builder = StateGraph(Out)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    return builder.compile(checkpointer=InMemorySaver())


def test_json_schema_dict_is_surfaced_as_is_and_not_enforced(runner: Runner) -> None:
    runs: list[Any] = []
    graph = schema_graph(JSON_SCHEMA, runs)
    config = cfg("json")
    paused = runner.invoke(graph, {}, config)
    task_id = runner.get_state(graph, config).tasks[0].id
    expected = Interrupt(
        value={"ask": "ok?"}, id=xxh(f"review:{task_id}"), response_schema=JSON_SCHEMA
    )
    assert paused["__interrupt__"] == [expected]
    assert runner.get_state(graph, config).interrupts == (expected,)
    # a value that does not match the schema passes through untouched
    final = runner.invoke(graph, Command(resume={"ok": "not a bool"}), config)
    assert final == {"out": {"ok": "not a bool"}}
    assert runs == ["review", "review"]


def test_no_schema_means_response_schema_none(runner: Runner) -> None:
    runs: list[Any] = []
    graph = schema_graph(None, runs)
    paused = runner.invoke(graph, {}, cfg("none"))
    assert paused["__interrupt__"][0].response_schema is None


@pytest.mark.parametrize(
    ("schema", "valid", "expected"),
    [
        (Decision, {"ok": True}, Decision(ok=True, note="")),
        (DecisionDict, {"ok": True}, {"ok": True}),
        (DecisionDC, {"ok": True}, DecisionDC(ok=True)),
    ],
    ids=["pydantic", "typeddict", "dataclass"],
)
def test_typed_schema_validates_and_returns_the_validated_object(
    runner: Runner, schema: Any, valid: Any, expected: Any
) -> None:
    runs: list[Any] = []
    graph = schema_graph(schema, runs)
    config = cfg(f"typed-{schema.__name__}")
    paused = runner.invoke(graph, {}, config)
    surfaced = paused["__interrupt__"][0].response_schema
    assert surfaced == pydantic.TypeAdapter(schema).json_schema()
    assert surfaced["properties"]["ok"] == {"title": "Ok", "type": "boolean"}
    assert surfaced["required"] == ["ok"]

    final = runner.invoke(graph, Command(resume=valid), config)
    assert final == {"out": expected}
    assert type(final["out"]) is type(expected)
    assert runs == ["review", "review"]


def test_pydantic_schema_coerces_like_pydantic(runner: Runner) -> None:
    graph = schema_graph(Decision, [])
    config = cfg("coerce")
    runner.invoke(graph, {}, config)
    final = runner.invoke(graph, Command(resume={"ok": "true", "note": "fine"}), config)
    assert final == {"out": Decision(ok=True, note="fine")}


# the validated object lands in an untyped channel; reading it back warns (allowlist)
@pytest.mark.filterwarnings("ignore::stategraph.checkpoint.serde.base.UnknownTypeWarning")
@pytest.mark.parametrize("schema", [Decision, DecisionDict, DecisionDC], ids=lambda s: s.__name__)
def test_invalid_resume_raises_and_saves_nothing(runner: Runner, schema: Any) -> None:
    runs: list[Any] = []
    graph = schema_graph(schema, runs)
    config = cfg(f"invalid-{schema.__name__}")
    paused = runner.invoke(graph, {}, config)
    pending = paused["__interrupt__"][0]
    history_before = runner.history(graph, config)
    checkpoint_id = runner.get_state(graph, config).config["configurable"]["checkpoint_id"]

    with pytest.raises(pydantic.ValidationError) as info:
        runner.invoke(graph, Command(resume={"ok": "not a bool"}), config)
    assert "ok" in str(info.value)

    # nothing saved: same checkpoint, same pending interrupt, no resume value recorded
    snapshot = runner.get_state(graph, config)
    assert snapshot.config["configurable"]["checkpoint_id"] == checkpoint_id
    assert len(runner.history(graph, config)) == len(history_before)
    assert snapshot.next == ("review",)
    assert snapshot.interrupts == (pending,)
    saved = graph.checkpointer.get_tuple(config)
    assert [w for w in saved.pending_writes if w[1] == RESUME] == []

    # the interrupt can be answered again, and a valid answer goes through
    with pytest.raises(pydantic.ValidationError):
        runner.invoke(graph, Command(resume={"nope": 1}), config)
    final = runner.invoke(graph, Command(resume={"ok": False}), config)
    assert final == {"out": pydantic.TypeAdapter(schema).validate_python({"ok": False})}
    # initial run + two invalid answers + the valid one
    assert runs == ["review"] * 4
    assert runner.get_state(graph, config).next == ()


def test_invalid_answer_by_id_can_be_answered_again(runner: Runner) -> None:
    runs: list[Any] = []
    graph = schema_graph(Decision, runs)
    config = cfg("invalid-by-id")
    iid = runner.invoke(graph, {}, config)["__interrupt__"][0].id
    with pytest.raises(pydantic.ValidationError):
        runner.invoke(graph, Command(resume={iid: {"ok": []}}), config)
    assert runner.get_state(graph, config).interrupts[0].id == iid
    final = runner.invoke(graph, Command(resume={iid: {"ok": True, "note": "by id"}}), config)
    assert final == {"out": Decision(ok=True, note="by id")}
    assert runs == ["review"] * 3


def test_schema_on_second_interrupt_only(runner: Runner) -> None:
    def form(state: Out) -> dict[str, Any]:
        name = interrupt("name?")
        decision = interrupt("decide", response_schema=Decision)
        return {"out": (name, decision)}

    builder = StateGraph(Out)
    builder.add_node("form", form)
    builder.add_edge(START, "form")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("second")
    first = runner.invoke(graph, {}, config)
    assert first["__interrupt__"][0].response_schema is None
    second = runner.invoke(graph, Command(resume="Ada"), config)
    assert second["__interrupt__"][0].response_schema == Decision.model_json_schema()
    with pytest.raises(pydantic.ValidationError):
        runner.invoke(graph, Command(resume={"ok": {}}), config)
    # the first answer is kept; only the second question is asked again
    again = runner.get_state(graph, config)
    assert [i.value for i in again.interrupts] == ["decide"]
    final = runner.invoke(graph, Command(resume={"ok": True}), config)
    assert final == {"out": ("Ada", Decision(ok=True))}
