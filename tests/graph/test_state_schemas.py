"""State schemas of ``StateGraph``: TypedDict, dataclass and pydantic; input and output schemas."""

import dataclasses
import operator
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field, ValidationError
from typing_extensions import NotRequired, TypedDict

from stategraph.graph import END, START, StateGraph

# --------------------------------------------------------------------------- TypedDict


class BaseState(TypedDict):
    a: int


class ChildState(BaseState, total=False):
    b: str
    log: Annotated[list, operator.add]


class NotRequiredState(TypedDict):
    a: int
    c: NotRequired[str]


def _one_node(schema: Any, fn: Any) -> Any:
    builder = StateGraph(schema)
    builder.add_node("n", fn)
    builder.add_edge(START, "n")
    builder.add_edge("n", END)
    return builder.compile()


def test_typeddict_inheritance_and_total_false(run):
    seen: list[Any] = []

    def n(state):
        seen.append(state)
        return {"a": state["a"] + 1, "b": "set"}

    graph = _one_node(ChildState, n)
    assert sorted(StateGraph(ChildState).channels) == ["a", "b", "log"]
    result = run.invoke(graph, {"a": 1})
    assert result == {"a": 2, "b": "set", "log": []}
    # the node gets a plain dict with only the keys that have values
    assert seen == [{"a": 1, "log": []}]
    assert type(seen[0]) is dict


def test_typeddict_not_required_key(run):
    seen: list[Any] = []

    def n(state):
        seen.append(dict(state))
        return {"c": "late"} if "c" not in state else {"a": 0}

    graph = _one_node(NotRequiredState, n)
    assert run.invoke(graph, {"a": 1}) == {"a": 1, "c": "late"}
    assert run.invoke(graph, {"a": 1, "c": "given"}) == {"a": 0, "c": "given"}
    assert seen == [{"a": 1}, {"a": 1, "c": "given"}]
    schema = graph.get_input_jsonschema()
    assert sorted(schema["properties"]) == ["a", "c"]


# --------------------------------------------------------------------------- dataclass


@dataclasses.dataclass
class DCState:
    a: int
    b: str = "dflt"
    items: Annotated[list, operator.add] = dataclasses.field(default_factory=list)


def test_dataclass_state_defaults_and_default_factory(run):
    seen: list[Any] = []

    def n(state: DCState):
        seen.append(state)
        return {"a": state.a + 1, "items": [state.b]}

    graph = _one_node(DCState, n)
    result = run.invoke(graph, {"a": 1})
    assert seen == [DCState(a=1, b="dflt", items=[])]
    assert isinstance(seen[0], DCState)
    assert result["a"] == 2
    assert result["items"] == ["dflt"]


def test_dataclass_state_accepts_an_instance_as_input(run):
    seen: list[Any] = []

    def n(state: DCState):
        seen.append(state)
        return {"a": state.a + 1, "items": [state.b]}

    graph = _one_node(DCState, n)
    result = run.invoke(graph, DCState(a=5, b="z"))
    assert result == {"a": 6, "b": "z", "items": ["z"]}
    assert seen == [DCState(a=5, b="z", items=[])]


def test_dataclass_state_missing_required_field_names_field(run):
    graph = _one_node(DCState, lambda s: {"a": 0})
    with pytest.raises(TypeError, match="'a'"):
        run.invoke(graph, {"b": "x"})


# --------------------------------------------------------------------------- pydantic


class PMState(BaseModel):
    a: int
    b: str = "dflt"
    items: Annotated[list, operator.add] = Field(default_factory=list)


def test_pydantic_state_defaults_and_instance(run):
    seen: list[Any] = []

    def n(state: PMState):
        seen.append(state)
        return {"a": state.a + 1, "items": [state.b]}

    graph = _one_node(PMState, n)
    result = run.invoke(graph, {"a": 1})
    assert seen == [PMState(a=1, b="dflt", items=[])]
    assert isinstance(seen[0], PMState)
    assert result["a"] == 2
    assert result["items"] == ["dflt"]
    result = run.invoke(graph, PMState(a=3, b="q"))
    assert result == {"a": 4, "b": "q", "items": ["q"]}
    assert seen[-1] == PMState(a=3, b="q", items=[])


def test_pydantic_input_is_validated_and_coerced(run):
    seen: list[Any] = []

    def n(state: PMState):
        seen.append(state.a)
        return None

    graph = _one_node(PMState, n)
    run.invoke(graph, {"a": "7"})
    assert seen == [7]


@pytest.mark.parametrize(
    ("bad_input", "error_type"),
    [({"a": "notint"}, "int_parsing"), ({"b": "x"}, "missing")],
)
def test_pydantic_input_validation_error_names_field_and_input(run, bad_input, error_type):
    graph = _one_node(PMState, lambda s: None)
    with pytest.raises(ValidationError) as info:
        run.invoke(graph, bad_input)
    errors = info.value.errors()
    assert [(e["loc"], e["type"]) for e in errors] == [(("a",), error_type)]
    notes = " ".join(getattr(info.value, "__notes__", []))
    assert "input" in notes
    assert "PMState" in notes


def test_pydantic_validation_error_on_node_input_names_the_node(run):
    def bad(state: PMState):
        return {"a": "zzz"}

    builder = StateGraph(PMState)
    builder.add_node("bad", bad)
    builder.add_node("after", lambda s: {"a": s.a})
    builder.add_edge(START, "bad")
    builder.add_edge("bad", "after")
    graph = builder.compile()
    with pytest.raises(ValidationError) as info:
        run.invoke(graph, {"a": 1})
    assert [e["loc"] for e in info.value.errors()] == [("a",)]
    notes = " ".join(getattr(info.value, "__notes__", []))
    assert "'after'" in notes


# --------------------------------------------------------------------------- input / output schemas


class In(TypedDict):
    question: str


class Out(TypedDict):
    answer: str


class Overall(TypedDict):
    question: str
    answer: str
    notes: str


class Private(TypedDict):
    question: str
    scratch: str


def _io_graph(seen: dict[str, Any]) -> Any:
    def first(state: In):
        seen["first"] = dict(state)
        return {"scratch": "s:" + state["question"], "notes": "n"}

    def second(state: Private):
        seen["second"] = dict(state)
        return {"answer": state["scratch"].upper()}

    def third(state):
        seen["third"] = dict(state)
        return {}

    builder = StateGraph(Overall, input_schema=In, output_schema=Out)
    builder.add_node("first", first)
    builder.add_node("second", second)
    builder.add_node("third", third, input_schema=Out)
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", "third")
    return builder.compile()


def test_input_output_and_node_schemas(run):
    seen: dict[str, Any] = {}
    graph = _io_graph(seen)
    result = run.invoke(graph, {"question": "q"})
    assert result == {"answer": "S:Q"}
    assert seen == {
        "first": {"question": "q"},
        "second": {"question": "q", "scratch": "s:q"},
        "third": {"answer": "S:Q"},
    }


def test_private_node_schema_keys_become_channels():
    seen: dict[str, Any] = {}
    graph = _io_graph(seen)
    assert sorted(graph.builder.channels) == ["answer", "notes", "question", "scratch"]
    assert sorted(graph.get_input_jsonschema()["properties"]) == ["question"]
    assert sorted(graph.get_output_jsonschema()["properties"]) == ["answer"]


def test_input_accepts_only_input_schema_keys(run):
    seen: list[Any] = []

    def reader(state):
        seen.append(dict(state))
        return {"answer": "a"}

    builder = StateGraph(Overall, input_schema=In)
    builder.add_node("reader", reader)
    builder.add_edge(START, "reader")
    graph = builder.compile()
    result = run.invoke(graph, {"question": "q", "answer": "sneaky", "notes": "x"})
    assert seen == [{"question": "q"}]
    assert result == {"question": "q", "answer": "a"}


def test_updates_of_private_keys_are_streamed(run):
    graph = _io_graph({})
    updates = run.stream(graph, {"question": "q"}, stream_mode="updates")
    assert updates == [
        {"first": {"scratch": "s:q", "notes": "n"}},
        {"second": {"answer": "S:Q"}},
        {"third": None},
    ]


def test_values_stream_snapshots_after_each_step(run):
    graph = _io_graph({})
    values = run.stream(graph, {"question": "q"}, stream_mode="values")
    # one snapshot after the input step and one per step that changed the state
    assert values == [
        {"question": "q"},
        {"question": "q", "notes": "n", "scratch": "s:q"},
        {"question": "q", "answer": "S:Q", "notes": "n", "scratch": "s:q"},
    ]


# --------------------------------------------------------------------------- same graph, three schemas


class TDCounter(TypedDict):
    count: int
    label: str
    history: Annotated[list, operator.add]


@dataclasses.dataclass
class DCCounter:
    count: int = 0
    label: str = ""
    history: Annotated[list, operator.add] = dataclasses.field(default_factory=list)


class PMCounter(BaseModel):
    count: int = 0
    label: str = ""
    history: Annotated[list, operator.add] = Field(default_factory=list)


def _get(state: Any, key: str) -> Any:
    return state[key] if isinstance(state, dict) else getattr(state, key)


def _counter_graph(schema: Any) -> Any:
    def inc(state):
        count = _get(state, "count") + 1
        return {"count": count, "history": [f"inc{count}"]}

    def left(state):
        return {"history": ["left"], "label": "L"}

    def right(state):
        return {"history": ["right"], "label": "R"}

    def finish(state):
        return {"history": [f"done:{_get(state, 'label')}:{len(_get(state, 'history'))}"]}

    def route(state):
        if _get(state, "count") < 3:
            return "inc"
        return "left" if _get(state, "label") == "go-left" else "right"

    builder = StateGraph(schema)
    builder.add_node("inc", inc)
    builder.add_node("left", left)
    builder.add_node("right", right)
    builder.add_node("finish", finish)
    builder.add_edge(START, "inc")
    builder.add_conditional_edges("inc", route, ["inc", "left", "right"])
    builder.add_edge("left", "finish")
    builder.add_edge("right", "finish")
    builder.add_edge("finish", END)
    return builder.compile()


@pytest.mark.parametrize(
    "schema", [TDCounter, DCCounter, PMCounter], ids=["typeddict", "dataclass", "pydantic"]
)
@pytest.mark.parametrize(
    ("label", "expected"),
    [
        (
            "go-left",
            {"count": 3, "label": "L", "history": ["inc1", "inc2", "inc3", "left", "done:L:4"]},
        ),
        ("x", {"count": 3, "label": "R", "history": ["inc1", "inc2", "inc3", "right", "done:R:4"]}),
    ],
)
def test_same_graph_same_result_for_all_schema_kinds(run, schema, label, expected):
    graph = _counter_graph(schema)
    inp = {"count": 0, "label": label, "history": []}
    assert run.invoke(graph, inp) == expected
    updates = run.stream(graph, inp, stream_mode="updates")
    assert [next(iter(u)) for u in updates] == [
        "inc",
        "inc",
        "inc",
        (expected["label"] == "L" and "left") or "right",
        "finish",
    ]


class POverall(BaseModel):
    q: str
    a: str = ""
    secret: str = ""


class PIn(BaseModel):
    q: str


class POut(BaseModel):
    a: str


def test_pydantic_input_and_output_schemas(run):
    seen: list[Any] = []

    def n(state: POverall):
        seen.append(state)
        return {"a": state.q.upper(), "secret": "s"}

    builder = StateGraph(POverall, input_schema=PIn, output_schema=POut)
    builder.add_node("n", n)
    builder.add_edge(START, "n")
    graph = builder.compile()
    assert run.invoke(graph, {"q": "hi", "secret": "zzz"}) == {"a": "HI"}
    # "secret" is not an input key, so the node saw the default
    assert seen == [POverall(q="hi", a="", secret="")]
    with pytest.raises(ValidationError) as info:
        run.invoke(graph, {"nope": 1})
    assert [e["loc"] for e in info.value.errors()] == [("q",)]


@dataclasses.dataclass
class DOverall:
    q: str = ""
    a: str = ""


def test_dataclass_state_with_typeddict_input_and_output(run):
    # keys declared only by the input/output schemas become channels too
    assert sorted(StateGraph(DOverall, input_schema=In, output_schema=Out).channels) == [
        "a",
        "answer",
        "q",
        "question",
    ]

    builder2 = StateGraph(DOverall, input_schema=TIn, output_schema=TOut)
    builder2.add_node("n", lambda s: {"a": s.q.upper()})
    builder2.add_edge(START, "n")
    assert run.invoke(builder2.compile(), {"q": "yo", "a": "ignored"}) == {"a": "YO"}


class TIn(TypedDict):
    q: str


class TOut(TypedDict):
    a: str
