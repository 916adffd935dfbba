"""Pydantic state: each node's input is validated only where the state changed.

The validators of a field run when its value is new, not again for every node that
reads the unchanged value; what each node receives is the same as with a full
``model_validate``, and a node changing its input does not change another node's.
"""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from stategraph.graph import END, START, StateGraph
from stategraph.graph._model_input import ModelInputs, model_inputs


def _counting_model() -> tuple[type[BaseModel], dict[str, int]]:
    calls = {"items": 0, "note": 0}

    class State(BaseModel):
        items: Annotated[list[int], operator.add] = Field(default_factory=list)
        note: str = ""
        count: int = 0

        @field_validator("items", mode="after")
        @classmethod
        def _items(cls, v: list[int]) -> list[int]:
            calls["items"] += 1
            return v

        @field_validator("note", mode="after")
        @classmethod
        def _note(cls, v: str) -> str:
            calls["note"] += 1
            return v.strip()

    return State, calls


def test_unchanged_fields_are_not_validated_again() -> None:
    State, calls = _counting_model()
    seen: list[tuple[list[int], str, int]] = []

    def make(i: int):  # type: ignore[no-untyped-def]
        def node(state: State) -> dict[str, object]:  # type: ignore[valid-type]
            seen.append((list(state.items), state.note, state.count))  # type: ignore[attr-defined]
            return {"count": i} if i % 2 else {}

        return node

    builder = StateGraph(State)
    previous = START
    for i in range(6):
        builder.add_node(f"n{i}", make(i))
        builder.add_edge(previous, f"n{i}")
        previous = f"n{i}"
    builder.add_edge(previous, END)
    graph = builder.compile()
    out = graph.invoke({"items": [1, 2], "note": "  hi  "})
    # as in LangGraph, the state keeps the input as given; nodes see validated values
    assert out == {"items": [1, 2], "note": "  hi  ", "count": 5}
    assert seen == [
        ([1, 2], "hi", 0),
        ([1, 2], "hi", 0),
        ([1, 2], "hi", 1),
        ([1, 2], "hi", 1),
        ([1, 2], "hi", 3),
        ([1, 2], "hi", 3),
    ]
    # items and note never change after the input: validated for the input, then once
    # for the first node, not again for the five others (a full validation per node
    # would make it 7 each)
    assert calls == {"items": 2, "note": 2}


def test_changed_values_are_validated_and_errors_name_the_field() -> None:
    State, calls = _counting_model()
    inputs = model_inputs(State)
    assert isinstance(inputs, ModelInputs)
    first = inputs.validate({"items": [1], "note": " a "})
    second = inputs.validate({"items": [1, 2], "note": first.__dict__["note"]})
    assert second.items == [1, 2] and second.note == "a"
    assert calls == {"items": 2, "note": 2}
    with pytest.raises(ValidationError) as info:
        inputs.validate({"items": ["x"], "note": " a "})
    assert info.value.title == "State"
    assert info.value.errors()[0]["loc"] == ("items", 0)
    # the same error as a full validation
    with pytest.raises(ValidationError) as full:
        State.model_validate({"items": ["x"], "note": " a "})
    assert info.value.errors() == full.value.errors()


def test_fields_set_and_defaults_match_model_validate() -> None:
    State, _ = _counting_model()
    inputs = model_inputs(State)
    assert inputs is not None
    values = {"items": [3]}
    inputs.validate(values)
    again = inputs.validate(values)
    reference = State.model_validate(values)
    assert again == reference
    assert again.model_fields_set == reference.model_fields_set == {"items"}
    assert again.count == 0 and again.note == ""


def test_a_node_mutating_its_input_does_not_reach_the_next_node() -> None:
    State, _ = _counting_model()

    def first(state: State) -> dict[str, object]:  # type: ignore[valid-type]
        state.items.append(99)  # type: ignore[attr-defined]
        state.note = "changed"  # type: ignore[attr-defined]
        return {}

    def second(state: State) -> dict[str, object]:  # type: ignore[valid-type]
        return {"note": f"{state.items}|{state.note}"}  # type: ignore[attr-defined]

    builder = StateGraph(State)
    builder.add_node("first", first)
    builder.add_node("second", second)
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", END)
    out = builder.compile().invoke({"items": [1], "note": "x"})
    assert out["note"] == "[1]|x"
    assert out["items"] == [1]


def test_models_with_model_validators_are_always_validated_in_full() -> None:
    runs: list[int] = []

    class Checked(BaseModel):
        a: int = 0
        b: int = 0

        @model_validator(mode="after")
        def _both(self) -> Checked:
            runs.append(self.a + self.b)
            return self

    assert model_inputs(Checked) is None

    class Aliased(BaseModel):
        a: int = Field(default=0, alias="A")

    assert model_inputs(Aliased) is None

    builder = StateGraph(Checked)
    builder.add_node("one", lambda s: {"a": 1})
    builder.add_node("two", lambda s: {"b": 2})
    builder.add_edge(START, "one")
    builder.add_edge("one", "two")
    builder.add_edge("two", END)
    assert builder.compile().invoke({"a": 0, "b": 0}) == {"a": 1, "b": 2}
    # input, node one's input, node two's input, output: every one validated in full
    assert runs[:3] == [0, 0, 1]


@pytest.mark.parametrize("extra", ["ignore", "allow", "forbid"])
def test_an_input_with_every_field_is_the_model_model_validate_builds(extra: str) -> None:
    class Full(BaseModel, extra=extra):  # type: ignore[call-arg]
        first: list[int] = Field(default_factory=list)
        second: str = ""
        third: dict[str, int] = Field(default_factory=dict)

    inputs = model_inputs(Full)
    assert inputs is not None
    # keys given in another order than the fields: the model keeps the fields' order
    values = {"third": {"k": 1}, "first": [1], "second": "s"}
    inputs.validate(values)
    changed = {**values, "second": "t"}
    for again in (inputs.validate(values), inputs.validate(changed)):
        reference = Full.model_validate(again.__dict__)
        assert again == reference
        assert list(again.__dict__) == ["first", "second", "third"]
        assert again.model_fields_set == {"first", "second", "third"}
        assert again.__pydantic_extra__ == reference.__pydantic_extra__
        assert again.__pydantic_private__ is None
        assert again.model_dump() == reference.model_dump()
    # unchanged containers are fresh copies for each input
    a, b = inputs.validate(values), inputs.validate(values)
    assert a.first == b.first and a.first is not b.first
    if extra == "allow":
        # each input has a dict of extra keys of its own
        assert a.__pydantic_extra__ == {} and a.__pydantic_extra__ is not b.__pydantic_extra__
        a.surplus = 1  # type: ignore[attr-defined]
        assert b.__pydantic_extra__ == {}


def extend_in_place(old: list[int], new: list[int]) -> list[int]:
    """A reducer that grows its list in place (the channel keeps the same object)."""
    old.extend(new)
    return old


def test_a_reducer_extending_its_list_in_place_is_seen_by_the_next_nodes() -> None:
    """The channel hands out the same list object with new items: not the one validated."""
    checked: list[list[int]] = []

    class State(BaseModel):
        items: Annotated[list[int], extend_in_place] = Field(default_factory=list)
        n: int = 0

        @field_validator("items", mode="after")
        @classmethod
        def _items(cls, v: list[int]) -> list[int]:
            checked.append(list(v))
            return v

    seen: list[list[int]] = []

    def step(state: State) -> dict[str, object]:
        seen.append(list(state.items))
        return {"items": [len(state.items) + 1], "n": state.n + 1}

    builder = StateGraph(State)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_conditional_edges("step", lambda s: END if s.n >= 3 else "step")
    out = builder.compile().invoke({"items": [0]})
    assert seen == [[0], [0, 2], [0, 2, 3]]
    assert out["items"] == [0, 2, 3, 4]
    assert [0, 2, 3] in checked  # the grown list went through the field's validator


def test_an_input_list_appended_to_between_runs_is_validated_again() -> None:
    calls: list[list[str]] = []

    class State(BaseModel):
        history: list[str] = []
        meta: dict[str, int] = {}

        @field_validator("history", mode="after")
        @classmethod
        def _history(cls, v: list[str]) -> list[str]:
            calls.append(list(v))
            return v

    seen: list[tuple[list[str], dict[str, int]]] = []

    def node(state: State) -> dict[str, object]:
        seen.append((list(state.history), dict(state.meta)))
        return {}

    builder = StateGraph(State)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    graph = builder.compile()
    history, meta = ["hi"], {"a": 1}
    graph.invoke({"history": history, "meta": meta})
    history.append("again")
    meta["a"] = 2  # same keys, a new value
    graph.invoke({"history": history, "meta": meta})
    assert seen == [(["hi"], {"a": 1}), (["hi", "again"], {"a": 2})]
    assert calls[-1] == ["hi", "again"]

    with pytest.raises(ValidationError, match="history"):
        history.append(3)  # type: ignore[arg-type]
        graph.invoke({"history": history, "meta": meta})


def test_an_unchanged_list_is_still_not_validated_again() -> None:
    """The snapshot check keeps the saving: same object, same items -> no validation."""
    State, calls = _counting_model()
    inputs = ModelInputs.build(State)
    assert inputs is not None
    items = [1, 2]
    first = inputs.validate({"items": items, "note": "a"})
    second = inputs.validate({"items": items, "note": "a"})
    assert calls == {"items": 1, "note": 1}
    assert second.items == first.items == [1, 2] and second.items is not first.items
    items[0] = 5  # same length, another item
    third = inputs.validate({"items": items, "note": "a"})
    assert calls == {"items": 2, "note": 1}
    assert third.items == [5, 2]
