"""``version="v2"`` output: invoke with other stream modes, and values built as the
graph's pydantic / dataclass classes (root values, checkpoints, debug, GraphOutput)."""

from __future__ import annotations

import dataclasses
import operator
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, field_validator
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.func import entrypoint
from stategraph.graph import END, START, StateGraph
from stategraph.observe._typed_output import class_builder
from stategraph.types import GraphOutput, Interrupt, interrupt


class Order(BaseModel):
    sku: str
    log: Annotated[list[str], operator.add]

    @field_validator("sku")
    @classmethod
    def _upper(cls, v: str) -> str:
        return v.upper()


@dataclasses.dataclass
class Parcel:
    sku: str
    log: Annotated[list[str], operator.add]
    weight: int = 1


class Plain(TypedDict):
    sku: str
    log: Annotated[list[str], operator.add]


class Receipt(BaseModel):
    sku: str


def _pack(state: Any) -> dict[str, Any]:
    sku = state["sku"] if isinstance(state, dict) else state.sku
    return {"sku": sku + "-packed", "log": ["pack"]}


def _ship(state: Any) -> dict[str, Any]:
    return {"log": ["ship"]}


def _line(schema: Any, checkpointer: Any = None, **kw: Any) -> Any:
    return (
        StateGraph(schema, **kw)
        .add_node("pack", _pack)
        .add_node("ship", _ship)
        .add_edge(START, "pack")
        .add_edge("pack", "ship")
        .add_edge("ship", END)
        .compile(checkpointer=checkpointer)
    )


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


# --------------------------------------------------------------- invoke + other modes
def test_invoke_v2_with_one_other_mode_returns_its_parts() -> None:
    parts = _line(Order).invoke({"sku": "a1", "log": []}, stream_mode="updates", version="v2")
    assert parts == [
        {"type": "updates", "ns": (), "data": {"pack": {"sku": "A1-packed", "log": ["pack"]}}},
        {"type": "updates", "ns": (), "data": {"ship": {"log": ["ship"]}}},
    ]
    # updates stay plain dicts whatever the state class
    assert all(type(update) is dict for p in parts for update in p["data"].values())


def test_invoke_v2_with_a_list_of_modes_returns_every_part_in_order() -> None:
    parts = _line(Order).invoke(
        {"sku": "a1", "log": []}, stream_mode=["values", "updates"], version="v2"
    )
    assert [p["type"] for p in parts] == ["values", "updates", "values", "updates", "values"]
    values = [p for p in parts if p["type"] == "values"]
    assert all(p["interrupts"] == () and p["ns"] == () for p in values)
    assert [v["data"] for v in values] == [
        Order(sku="A1", log=[]),
        Order(sku="A1-PACKED", log=["pack"]),
        Order(sku="A1-PACKED", log=["pack", "ship"]),
    ]


def test_invoke_v1_with_a_list_of_modes_returns_mode_chunk_pairs() -> None:
    graph = _line(Plain)
    got = graph.invoke({"sku": "b", "log": []}, stream_mode=["updates"])
    assert got == [
        ("updates", {"pack": {"sku": "b-packed", "log": ["pack"]}}),
        ("updates", {"ship": {"log": ["ship"]}}),
    ]
    got = graph.invoke({"sku": "b", "log": []}, stream_mode=("values",))
    assert got[-1] == ("values", {"sku": "b-packed", "log": ["pack", "ship"]})
    # one mode as a string: the bare chunks, as before
    assert graph.invoke({"sku": "b", "log": []}, stream_mode="updates")[1] == {
        "ship": {"log": ["ship"]}
    }


def test_invoke_with_subgraphs_labels_parts_with_their_namespace() -> None:
    inner = _line(Plain)
    outer = StateGraph(Plain).add_node("line", inner).add_edge(START, "line").compile()
    v1 = outer.invoke({"sku": "c", "log": []}, stream_mode="updates", subgraphs=True)
    assert [ns[0].split(":")[0] if ns else "" for ns, _ in v1] == ["line", "line", ""]
    v2 = outer.invoke({"sku": "c", "log": []}, stream_mode="updates", subgraphs=True, version="v2")
    # each run has its own task ids (as in LangGraph), so compare the node part
    assert [p["ns"][0].split(":")[0] if p["ns"] else "" for p in v2] == ["line", "line", ""]
    assert all(len(p["ns"]) == len(ns) for p, (ns, _) in zip(v2, v1, strict=True))


async def test_ainvoke_v2_with_other_modes() -> None:
    graph = _line(Parcel)
    parts = await graph.ainvoke(
        {"sku": "d", "log": []}, stream_mode=["updates", "values"], version="v2"
    )
    assert parts[-1] == {
        "type": "values",
        "ns": (),
        "data": Parcel(sku="d-packed", log=["pack", "ship"]),
        "interrupts": (),
    }
    updates = await graph.ainvoke({"sku": "d", "log": []}, stream_mode="updates", version="v2")
    assert [p["type"] for p in updates] == ["updates", "updates"]
    pairs = await graph.ainvoke({"sku": "d", "log": []}, stream_mode=["updates"])
    assert pairs[0] == ("updates", {"pack": {"sku": "d-packed", "log": ["pack"]}})


# --------------------------------------------------------------- typed values
def test_values_parts_are_state_class_instances() -> None:
    parts = list(_line(Parcel).stream({"sku": "e", "log": []}, stream_mode="values", version="v2"))
    assert [p["data"] for p in parts] == [
        Parcel(sku="e", log=[]),
        Parcel(sku="e-packed", log=["pack"]),
        Parcel(sku="e-packed", log=["pack", "ship"]),
    ]


def test_typeddict_values_stay_plain_dicts() -> None:
    parts = list(_line(Plain).stream({"sku": "f", "log": []}, stream_mode="values", version="v2"))
    assert all(type(p["data"]) is dict for p in parts)
    assert parts[-1]["data"] == {"sku": "f-packed", "log": ["pack", "ship"]}


def test_version_v1_is_untouched() -> None:
    graph = _line(Order)
    chunks = list(graph.stream({"sku": "g", "log": []}, stream_mode="values"))
    assert all(type(c) is dict for c in chunks)
    assert graph.invoke({"sku": "g", "log": []}) == {"sku": "G-packed", "log": ["pack", "ship"]}


def test_invoke_v2_value_is_the_output_class() -> None:
    out = _line(Order).invoke({"sku": "h", "log": []}, version="v2")
    assert isinstance(out, GraphOutput)
    # the validator runs when the value is built, as in a node's input
    assert out.value == Order(sku="H-PACKED", log=["pack", "ship"])
    assert out.interrupts == ()


async def test_ainvoke_v2_value_is_the_output_class() -> None:
    out = await _line(Parcel).ainvoke({"sku": "h", "log": []}, version="v2")
    assert out.value == Parcel(sku="h-packed", log=["pack", "ship"], weight=1)


def test_output_schema_shapes_values_and_state_schema_shapes_checkpoints() -> None:
    graph = _line(Order, InMemorySaver(), output_schema=Receipt)
    parts = list(
        graph.stream(
            {"sku": "i", "log": []},
            _cfg("receipt"),
            stream_mode=["values", "checkpoints"],
            version="v2",
        )
    )
    values = [p["data"] for p in parts if p["type"] == "values"]
    # Receipt has no validator: the values are the state's. The input is stored as given
    # (as in LangGraph); the nodes read it through Order, whose validator upper-cases it
    assert values == [Receipt(sku="i"), Receipt(sku="I-packed"), Receipt(sku="I-packed")]
    checkpoints = [p["data"]["values"] for p in parts if p["type"] == "checkpoints"]
    # the input checkpoint lacks the required "sku": kept as the dict it is
    assert checkpoints[0] == {"log": []}
    assert checkpoints[1:] == [
        Order(sku="I", log=[]),
        Order(sku="I-PACKED", log=["pack"]),
        Order(sku="I-PACKED", log=["pack", "ship"]),
    ]
    out = graph.invoke({"sku": "i", "log": []}, _cfg("receipt-2"), version="v2")
    assert out.value == Receipt(sku="I-packed")


def test_output_class_with_fewer_fields_is_built_from_its_own_keys() -> None:
    @dataclasses.dataclass
    class Label:
        sku: str

    graph = _line(Plain, output_schema=Label)
    parts = list(graph.stream({"sku": "j", "log": []}, stream_mode="values", version="v2"))
    # the values chunk has every state key; the dataclass is built from "sku" only
    assert [p["data"] for p in parts] == [Label("j"), Label("j-packed"), Label("j-packed")]


def test_debug_checkpoint_payloads_are_typed_and_other_debug_events_are_not() -> None:
    graph = _line(Order, InMemorySaver())
    parts = list(
        graph.stream(
            {"sku": "k", "log": []},
            _cfg("debug"),
            stream_mode=["debug", "checkpoints"],
            version="v2",
        )
    )
    debug = [p["data"] for p in parts if p["type"] == "debug"]
    checkpoint_values = [d["payload"]["values"] for d in debug if d["type"] == "checkpoint"]
    assert checkpoint_values[0] == {"log": []}
    assert checkpoint_values[-1] == Order(sku="K-PACKED", log=["pack", "ship"])
    results = [d["payload"]["result"] for d in debug if d["type"] == "task_result"]
    assert results == [{"sku": "K-packed", "log": ["pack"]}, {"log": ["ship"]}]
    checkpoints = [p["data"]["values"] for p in parts if p["type"] == "checkpoints"]
    assert checkpoints == checkpoint_values


def test_interrupted_values_part_keeps_the_class_and_separates_interrupts() -> None:
    def approve(state: Order) -> dict[str, Any]:
        return {"log": [interrupt(f"approve {state.sku}?")]}

    graph = (
        StateGraph(Order)
        .add_node("approve", approve)
        .add_edge(START, "approve")
        .compile(checkpointer=InMemorySaver())
    )
    parts = list(
        graph.stream({"sku": "m", "log": []}, _cfg("m"), version="v2", stream_mode="values")
    )
    last = parts[-1]
    assert last["data"] == Order(sku="M", log=[])
    assert [i.value for i in last["interrupts"]] == ["approve M?"]
    out = graph.invoke({"sku": "n", "log": []}, _cfg("n"), version="v2")
    assert out.value == Order(sku="N", log=[])
    assert len(out.interrupts) == 1 and isinstance(out.interrupts[0], Interrupt)


def test_subgraph_parts_are_not_built_as_classes() -> None:
    class Inner(BaseModel):
        sku: str

    def stamp(state: Inner) -> dict[str, Any]:
        return {"sku": state.sku + "!"}

    inner = StateGraph(Inner).add_node("stamp", stamp).add_edge(START, "stamp").compile()
    outer = StateGraph(Receipt).add_node("inner", inner).add_edge(START, "inner").compile()
    parts = list(outer.stream({"sku": "p"}, stream_mode="values", subgraphs=True, version="v2"))
    root = [p["data"] for p in parts if p["ns"] == ()]
    nested = [p["data"] for p in parts if p["ns"] != ()]
    assert root == [Receipt(sku="p"), Receipt(sku="p!")]
    assert nested and all(type(d) is dict for d in nested)


def test_output_class_rejecting_the_values_keeps_the_dict_and_the_run_goes_on() -> None:
    class Done(BaseModel):
        sku: str
        shipped_by: str

    class Flow(TypedDict, total=False):
        sku: str
        shipped_by: str

    def ship(state: Flow) -> dict[str, Any]:
        return {"shipped_by": "van"}

    graph = (
        StateGraph(Flow, output_schema=Done)
        .add_node("ship", ship)
        .add_edge(START, "ship")
        .compile()
    )
    parts = list(graph.stream({"sku": "q"}, stream_mode="values", version="v2"))
    assert parts[0]["data"] == {"sku": "q"}
    assert parts[1]["data"] == Done(sku="q", shipped_by="van")


async def test_astream_v2_values_are_typed() -> None:
    parts = [
        p
        async for p in _line(Order).astream(
            {"sku": "r", "log": []}, stream_mode="values", version="v2"
        )
    ]
    assert parts[-1]["data"] == Order(sku="R-PACKED", log=["pack", "ship"])


def test_functional_api_output_is_left_as_returned() -> None:
    @entrypoint()
    def total(n: int) -> dict[str, int]:
        return {"n": n * 2}

    assert total.invoke(3, version="v2").value == {"n": 6}
    assert list(total.stream(3, stream_mode="values", version="v2"))[-1]["data"] == {"n": 6}


# --------------------------------------------------------------- the builder itself
@pytest.mark.parametrize("schema", [Plain, dict, None, int])
def test_class_builder_leaves_non_classes_alone(schema: Any) -> None:
    assert class_builder(schema) is None


def test_class_builder_drops_keys_the_class_does_not_declare() -> None:
    build = class_builder(Receipt)
    assert build is not None
    assert build({"sku": "s", "log": ["x"]}) == Receipt(sku="s")
    missing = {"log": ["x"]}
    assert build(missing) is missing
