"""JsonPlusSerializer's LangGraph-compatible options and pre-1.0 interrupts."""

from __future__ import annotations

import datetime
import json

import pytest

from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from stategraph.types import Interrupt, Send


def _legacy_interrupt(ns: list[str]) -> bytes:
    return json.dumps(
        {
            "lc": 2,
            "type": "constructor",
            "id": ["langgraph", "types", "Interrupt"],
            "kwargs": {"value": "approve?", "resumable": True, "ns": ns, "when": "during"},
        }
    ).encode()


def test_old_json_interrupts_are_rebuilt_with_their_namespace_id() -> None:
    serde = JsonPlusSerializer(allowed_json_modules=True)
    restored = serde.loads_typed(("json", _legacy_interrupt(["review:1", "ask:2"])))
    assert isinstance(restored, Interrupt)
    assert restored.value == "approve?"
    assert restored.id == Interrupt.from_ns("x", "review:1|ask:2").id


def test_json_revival_is_off_by_default_and_limited_to_listed_modules() -> None:
    payload = ("json", _legacy_interrupt(["a"]))
    assert isinstance(JsonPlusSerializer().loads_typed(payload), dict)
    listed = JsonPlusSerializer(allowed_json_modules=[("langgraph", "types")])
    assert isinstance(listed.loads_typed(payload), Interrupt)
    other = JsonPlusSerializer(allowed_json_modules=[("langgraph", "graph")])
    assert isinstance(other.loads_typed(payload), dict)


def test_json_revival_never_builds_other_classes() -> None:
    sneaky = json.dumps(
        {
            "lc": 1,
            "type": "constructor",
            "id": ["langgraph", "checkpoint", "memory", "InMemorySaver"],
            "kwargs": {},
        }
    ).encode()
    out = JsonPlusSerializer(allowed_json_modules=True).loads_typed(("json", sneaky))
    assert out == {}


def test_allowed_msgpack_modules_adds_classes() -> None:
    serde = JsonPlusSerializer(allowed_msgpack_modules=[("datetime", "date"), Send])
    assert {datetime.date, Send} <= serde.allowed_types
    assert JsonPlusSerializer(allowed_msgpack_modules=None).allowed_types == frozenset()
    with pytest.raises(ValueError, match="cannot be imported"):
        JsonPlusSerializer(allowed_msgpack_modules=[("no_such_module_xyz", "Thing")])
    with pytest.raises(TypeError, match="allowed_msgpack_modules entries"):
        JsonPlusSerializer(allowed_msgpack_modules=["datetime.date"])  # type: ignore[list-item]


def test_interrupt_accepts_the_pre_1_0_keywords() -> None:
    legacy = Interrupt("v", ns=["a:1", "b:2"], resumable=True, when="during")
    assert legacy.id == Interrupt.from_ns("v", "a:1|b:2").id
    assert Interrupt("v", "given-id", ns=["a"]).id == "given-id"
    with pytest.raises(TypeError, match="unexpected arguments: colour"):
        Interrupt("v", colour="red")


def test_a_custom_serializer_error_keeps_its_type_and_names_the_channel() -> None:
    from typing import Any

    from typing_extensions import TypedDict

    from stategraph.checkpoint.memory import InMemorySaver
    from stategraph.graph import START, StateGraph

    class Refusing(JsonPlusSerializer):
        def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
            raise ValueError("refusing to serialize")

    class S(TypedDict, total=False):
        x: int

    graph = (
        StateGraph(S)
        .add_node("n", lambda s: {"x": 1})
        .add_edge(START, "n")
        .compile(checkpointer=InMemorySaver(serde=Refusing()))
    )
    with pytest.raises(ValueError, match="refusing to serialize") as info:
        graph.invoke({"x": 0}, {"configurable": {"thread_id": "t"}})
    assert any("While saving the value of channel" in n for n in info.value.__notes__)
