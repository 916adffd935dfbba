"""State keys as channels: reducers, channel annotations and managed values."""

import dataclasses
import operator
from typing import Annotated, Any

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from stategraph.channels import BinaryOperatorAggregate, LastValue, Topic
from stategraph.errors import GraphRecursionError
from stategraph.graph import END, START, StateGraph
from stategraph.managed import IsLastStep, RemainingSteps

# --------------------------------------------------------------------------- channels


def test_each_key_becomes_a_channel():
    class State(TypedDict):
        plain: int
        summed: Annotated[int, operator.add]
        topic_instance: Annotated[list, Topic(str, accumulate=True)]
        topic_class: Annotated[list, Topic]

    channels = StateGraph(State).channels
    assert {k: type(v) for k, v in channels.items()} == {
        "plain": LastValue,
        "summed": BinaryOperatorAggregate,
        "topic_instance": Topic,
        "topic_class": Topic,
    }
    assert channels["summed"].operator is operator.add


def _r_kwonly(a, *, b):
    return a


def _r_three(a, b, c=1):
    return a


def _r_varargs(*args):
    return args[0]


def _r_one(a):
    return a


@pytest.mark.parametrize(
    ("reducer", "sig"),
    [(_r_kwonly, "(a, *, b)"), (_r_three, "(a, b, c=1)"), (_r_varargs, "(*args)"), (_r_one, "(a)")],
)
def test_invalid_reducer_signature(reducer, sig):
    class State(TypedDict):
        x: Annotated[list, reducer]

    with pytest.raises(ValueError) as info:
        StateGraph(State)
    assert str(info.value) == f"Invalid reducer signature. Expected (a, b) -> c. Got {sig}"


def _r_posonly(a, b, /):
    return a + b


def _r_two_default(a, b=None):
    return a + (b or [])


@pytest.mark.parametrize("reducer", [_r_posonly, _r_two_default, operator.add])
def test_valid_reducer_signatures(run, reducer):
    class State(TypedDict):
        x: Annotated[list, reducer]

    builder = StateGraph(State)
    assert isinstance(builder.channels["x"], BinaryOperatorAggregate)
    builder.add_node("a", lambda s: {"x": ["a"]})
    builder.add_node("b", lambda s: {"x": ["b"]})
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    assert run.invoke(builder.compile(), {"x": ["in"]}) == {"x": ["in", "a", "b"]}


def test_topic_channels_in_a_run(run):
    class State(TypedDict):
        acc: Annotated[list, Topic(str, accumulate=True)]
        fresh: Annotated[list, Topic]
        log: Annotated[list, operator.add]

    def first(state):
        return {"acc": "a", "fresh": ["f1", "f2"]}

    def second(state):
        return {"log": [f"{state['acc']}|{state['fresh']}"], "acc": ["b", "c"], "fresh": "g"}

    def third(state):
        return {"log": [f"{state['acc']}|{state['fresh']}"]}

    builder = StateGraph(State)
    builder.add_sequence([first, second, third])
    builder.add_edge(START, "first")
    result = run.invoke(builder.compile(), {"log": []})
    assert result["log"] == ["['a']|['f1', 'f2']", "['a', 'b', 'c']|['g']"]
    assert result["acc"] == ["a", "b", "c"]


# --------------------------------------------------------------------------- managed values


class ManagedState(TypedDict):
    log: Annotated[list, operator.add]
    remaining: RemainingSteps
    last: IsLastStep


def _managed_loop(route: Any) -> Any:
    def n(state):
        return {"log": [(state["remaining"], state["last"])]}

    builder = StateGraph(ManagedState)
    builder.add_node("n", n)
    builder.add_edge(START, "n")
    builder.add_conditional_edges("n", route)
    return builder.compile()


def _three_times(state):
    return END if len(state["log"]) >= 3 else "n"


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        (5, [(4, False), (3, False), (2, False)]),
        (4, [(3, False), (2, False), (1, True)]),
    ],
)
def test_remaining_steps_and_is_last_step_values(run, limit, expected):
    # exact values observed with LangGraph 1.2 on the same graph
    graph = _managed_loop(_three_times)
    result = run.invoke(graph, {"log": []}, {"recursion_limit": limit})
    assert result == {"log": expected}


def test_managed_values_recursion_limit_too_small(run):
    graph = _managed_loop(_three_times)
    with pytest.raises(GraphRecursionError):
        run.invoke(graph, {"log": []}, {"recursion_limit": 3})


def test_managed_values_are_not_streamed_as_state(run):
    graph = _managed_loop(_three_times)
    updates = run.stream(graph, {"log": []}, {"recursion_limit": 4}, stream_mode="updates")
    assert updates == [
        {"n": {"log": [(3, False)]}},
        {"n": {"log": [(2, False)]}},
        {"n": {"log": [(1, True)]}},
    ]


def test_conditional_edge_reads_managed_value(run):
    def stop_on_last_step(state):
        return END if state["last"] else "n"

    graph = _managed_loop(stop_on_last_step)
    result = run.invoke(graph, {"log": []}, {"recursion_limit": 5})
    assert result == {"log": [(4, False), (3, False), (2, False), (1, True)]}


@dataclasses.dataclass
class DCManaged:
    log: Annotated[list, operator.add] = dataclasses.field(default_factory=list)
    remaining: RemainingSteps = 0


class PMManaged(BaseModel):
    log: Annotated[list, operator.add] = []
    remaining: RemainingSteps = 0


@pytest.mark.parametrize("schema", [DCManaged, PMManaged])
def test_managed_value_in_dataclass_and_pydantic(run, schema):
    def n(state):
        return {"log": [state.remaining]}

    builder = StateGraph(schema)
    builder.add_node("n", n)
    builder.add_node("m", n)
    builder.add_edge(START, "n")
    builder.add_edge("n", "m")
    result = run.invoke(builder.compile(), {"log": []}, {"recursion_limit": 7})
    assert result == {"log": [6, 5]}
