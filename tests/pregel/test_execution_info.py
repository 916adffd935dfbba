"""Runtime.execution_info / server_info: what a running node can learn about itself."""

from __future__ import annotations

import dataclasses
import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.config import RunnableConfig
from stategraph.graph import START, StateGraph
from stategraph.runtime import ExecutionInfo, Runtime, ServerInfo, get_runtime
from stategraph.types import RetryPolicy, Send


class Msg(TypedDict, total=False):
    text: str


def _recorder(seen: list[Any], fail_times: int = 0) -> Any:
    def node(state: Msg, runtime: Runtime[Any]) -> Msg:
        seen.append(runtime.execution_info)
        if len(seen) <= fail_times:
            raise ConnectionError("flaky network")
        return {"text": "ok"}

    return node


def _graph(node: Any, **compile_kw: Any) -> Any:
    return (
        StateGraph(Msg)
        .add_node(
            "worker",
            node,
            retry_policy=RetryPolicy(initial_interval=0, jitter=False, max_attempts=3),
        )
        .add_edge(START, "worker")
        .compile(**compile_kw)
    )


def test_fields_on_a_checkpointed_thread() -> None:
    seen: list[ExecutionInfo] = []
    graph = _graph(_recorder(seen), checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "th-7"}, "run_id": "3b1d9f4e-0000-0000-0000-000000000001"}
    graph.invoke({"text": "hi"}, cfg)
    (info,) = seen
    assert info.thread_id == "th-7"
    assert info.run_id == "3b1d9f4e-0000-0000-0000-000000000001"
    assert info.node_attempt == 1
    assert isinstance(info.node_first_attempt_time, float)
    assert info.checkpoint_ns == f"worker:{info.task_id}"
    # the checkpoint the step's tasks were prepared from
    history = list(graph.get_state_history({"configurable": {"thread_id": "th-7"}}))
    assert info.checkpoint_id in {s.config["configurable"]["checkpoint_id"] for s in history}


@pytest.mark.parametrize("is_async", [False, True])
async def test_attempt_counts_retries_and_first_attempt_time_stays(is_async: bool) -> None:
    seen: list[ExecutionInfo] = []
    graph = _graph(_recorder(seen, fail_times=2))
    if is_async:
        await graph.ainvoke({"text": "hi"})
    else:
        graph.invoke({"text": "hi"})
    assert [i.node_attempt for i in seen] == [1, 2, 3]
    assert len({i.node_first_attempt_time for i in seen}) == 1
    assert len({i.task_id for i in seen}) == 1


def test_subgraph_nodes_see_nested_namespaces() -> None:
    seen: list[ExecutionInfo] = []

    def inner_node(state: Msg) -> Msg:
        seen.append(get_runtime().execution_info)  # type: ignore[arg-type]
        return {"text": "inner"}

    inner = StateGraph(Msg).add_node("leaf", inner_node).add_edge(START, "leaf").compile()
    graph = (
        StateGraph(Msg)
        .add_node("outer", inner)
        .add_edge(START, "outer")
        .compile(checkpointer=InMemorySaver())
    )
    graph.invoke({"text": ""}, {"configurable": {"thread_id": "nest"}})
    (info,) = seen
    outer_part, leaf_part = info.checkpoint_ns.split("|")
    assert outer_part.startswith("outer:") and leaf_part == f"leaf:{info.task_id}"
    assert info.thread_id == "nest"


def test_execution_info_is_frozen_and_patch_copies() -> None:
    info = ExecutionInfo(checkpoint_id="c", checkpoint_ns="n:1", task_id="1")
    assert (info.thread_id, info.run_id, info.node_attempt, info.node_first_attempt_time) == (
        None,
        None,
        1,
        None,
    )
    later = info.patch(node_attempt=2)
    assert later.node_attempt == 2 and info.node_attempt == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.task_id = "2"  # type: ignore[misc]


def test_server_info_comes_from_configurable() -> None:
    seen: list[Any] = []

    def node(state: Msg, runtime: Runtime[Any]) -> Msg:
        seen.append(runtime.server_info)
        return {}

    graph = StateGraph(Msg).add_node("n", node).add_edge(START, "n").compile()
    user = {"identity": "ada"}
    graph.invoke({}, {"configurable": {"assistant_id": "a-1", "graph_id": "g-1"}})
    graph.invoke({}, {"configurable": {"graph_id": "g-2", "langgraph_auth_user": user}})
    graph.invoke({})
    assert seen[0] == ServerInfo(assistant_id="a-1", graph_id="g-1")
    assert seen[1].graph_id == "g-2" and seen[1].user is user
    assert seen[2] is None


def test_runtime_merge_keeps_fields_set_on_either_side() -> None:
    info = ServerInfo(assistant_id="a", graph_id="g")
    other = ServerInfo(assistant_id="b", graph_id="g")
    assert Runtime(server_info=info).merge(Runtime()).server_info is info
    assert Runtime(server_info=info).merge(Runtime(server_info=other)).server_info is other
    assert Runtime().execution_info is None and Runtime().control is None


class Items(TypedDict):
    items: Annotated[list[int], operator.add]


def test_send_tasks_carry_langgraphs_three_part_path_in_their_metadata() -> None:
    seen: list[tuple[object, ...]] = []

    def first(state: Items, config: RunnableConfig) -> Items:
        seen.append(tuple(config["metadata"]["langgraph_path"]))
        return {"items": []}

    def worker(state: Items, config: RunnableConfig) -> Items:
        seen.append(tuple(config["metadata"]["langgraph_path"]))
        return {"items": [state["items"][0] * 10]}

    builder = StateGraph(Items)
    builder.add_node("first", first)
    builder.add_node("worker", worker)
    builder.add_edge(START, "first")
    builder.add_conditional_edges(
        "first", lambda s: [Send("worker", {"items": [i]}) for i in (1, 2)], ["worker"]
    )
    assert builder.compile().invoke({"items": []}) == {"items": [10, 20]}
    assert seen[0] == ("__pregel_pull", "first")
    assert sorted(seen[1:], key=str) == [("__pregel_push", 0, False), ("__pregel_push", 1, False)]
