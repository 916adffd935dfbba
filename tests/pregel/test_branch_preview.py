"""A conditional edge's view of a reducer key is what the step then commits.

The routing function sees the state including its node's own update (the reducer is
folded over the node's writes on a copy of the channel). When the step commits exactly
those writes onto the unchanged channel, that result is committed as is: the reducer
runs once per write, and values the reducer made up (message ids) are the same ones
the routing function saw.
"""

import operator
from typing import Annotated, Any, TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, MessagesState, StateGraph
from stategraph.types import Send

CALLS: list[tuple[list[int], list[int]]] = []


def _counting_add(left: list[int], right: list[int]) -> list[int]:
    CALLS.append((list(left), list(right)))
    return left + right


class Counted(TypedDict):
    items: Annotated[list[int], _counting_add]


def test_reducer_runs_once_for_writes_a_routing_function_already_saw() -> None:
    CALLS.clear()
    S = Counted
    seen: list[list[int]] = []

    def grow(state: S) -> dict[str, Any]:
        return {"items": [len(state["items"])]}

    def route(state: S) -> str:
        seen.append(list(state["items"]))
        return END if len(state["items"]) >= 3 else "grow"

    graph = StateGraph(S).add_node("grow", grow).add_edge(START, "grow")
    app = graph.add_conditional_edges("grow", route).compile()
    assert app.invoke({"items": []}) == {"items": [0, 1, 2]}
    assert seen == [[0], [0, 1], [0, 1, 2]]
    # one fold per node update (not two: the route's view is committed as is)
    node_folds = [call for call in CALLS if call[1]]
    assert node_folds == [([], [0]), ([0], [1]), ([0, 1], [2])]


def test_message_ids_made_for_the_routing_function_are_the_saved_ones() -> None:
    routed_ids: list[str] = []

    def reply(state: MessagesState) -> dict[str, Any]:
        return {"messages": [{"role": "assistant", "content": "hi"}]}  # no id

    def route(state: MessagesState) -> str:
        routed_ids.append(state["messages"][-1].id)
        return END

    graph = StateGraph(MessagesState).add_node("reply", reply).add_edge(START, "reply")
    app = graph.add_conditional_edges("reply", route).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "ids"}}
    out = app.invoke({"messages": [{"role": "user", "content": "q", "id": "u1"}]}, config)
    assert out["messages"][0].id == "u1"
    assert len(routed_ids) == 1 and routed_ids[0] is not None
    assert out["messages"][-1].id == routed_ids[0]
    saved = app.get_state(config).values["messages"]
    assert [m.id for m in saved] == ["u1", routed_ids[0]]


def test_parallel_writers_to_the_key_are_all_folded_in() -> None:
    # two tasks in one step: the step commits both updates, whatever each route saw
    class S(TypedDict):
        items: Annotated[list[str], operator.add]
        targets: list[str]

    views: dict[str, list[str]] = {}

    def fan(state: S) -> list[Send]:
        return [Send("work", {"items": [], "targets": [t]}) for t in state["targets"]]

    def work(state: S) -> dict[str, Any]:
        return {"items": [state["targets"][0]]}

    def after(state: S) -> str:
        views.setdefault("last", list(state["items"]))
        return END

    graph = StateGraph(S).add_node("work", work)
    graph.add_conditional_edges(START, fan)
    app = graph.add_conditional_edges("work", after).compile()
    out = app.invoke({"items": [], "targets": ["a", "b"]})
    assert sorted(out["items"]) == ["a", "b"]
    assert len(views["last"]) == 1  # a route sees only its own node's update


def test_a_channel_changed_after_the_route_read_it_is_updated_normally() -> None:
    # "sneak" writes the key in the same step as "grow" (whose route read it): the
    # step commits both writes through the reducer
    class S(TypedDict):
        items: Annotated[list[str], operator.add]

    def grow(state: S) -> dict[str, Any]:
        return {"items": ["grow"]}

    def sneak(state: S) -> dict[str, Any]:
        return {"items": ["sneak"]}

    def route(state: S) -> str:
        return END

    graph = StateGraph(S).add_node("grow", grow).add_node("sneak", sneak)
    graph.add_edge(START, "grow").add_edge(START, "sneak")
    app = graph.add_conditional_edges("grow", route).compile()
    assert app.invoke({"items": []}) == {"items": ["grow", "sneak"]}
