"""Task payloads of the ``tasks``/``debug`` streams and ``stategraph.pregel.debug``.

``map_debug_tasks`` builds the payload that announces a task; the runtime builds the
same payload for the tasks it starts. Expected values were checked black-box against
LangGraph 1.2.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, TypedDict

import pytest

from stategraph.graph import START, StateGraph
from stategraph.pregel.debug import map_debug_tasks, task_metadata


@dataclass
class Job:
    """The fields ``map_debug_tasks`` reads from a task."""

    id: str = "job-1"
    name: str = "work"
    input: Any = field(default_factory=dict)
    triggers: tuple[str, ...] = ("branch:to:work",)
    config: dict[str, Any] | None = None


def one(job: Job) -> dict[str, Any]:
    (payload,) = list(map_debug_tasks([job]))
    return payload


def test_a_payload_names_the_task_and_its_input() -> None:
    job = Job(input={"q": 1}, config=None)
    assert one(job) == {
        "id": "job-1",
        "name": "work",
        "input": {"q": 1},
        "triggers": ("branch:to:work",),
    }


@pytest.mark.parametrize("config", [None, {}, {"metadata": {}}, {"tags": []}])
def test_no_metadata_key_without_user_metadata_or_tags(config: Any) -> None:
    assert "metadata" not in one(Job(config=config))


def test_runtime_keys_are_dropped_and_user_keys_kept() -> None:
    metadata = {
        "owner": "team-a",
        "lc_agent_name": "planner",
        "thread_id": "t",
        "checkpoint_ns": "work:1",
        "checkpoint_id": "c",
        "checkpoint_map": {"": "c"},
        "langgraph_step": 3,
        "langgraph_node": "work",
        "langgraph_path": ("__pregel_pull", "work"),
        "langgraph_triggers": ("branch:to:work",),
        "langgraph_checkpoint_ns": "work:1",
        "langgraph_request_id": "kept: not one the runtime sets per task",
    }
    assert one(Job(config={"metadata": metadata}))["metadata"] == {
        "owner": "team-a",
        "lc_agent_name": "planner",
        "langgraph_request_id": "kept: not one the runtime sets per task",
    }
    only_runtime = {k: metadata[k] for k in ("thread_id", "langgraph_step", "checkpoint_ns")}
    assert "metadata" not in one(Job(config={"metadata": only_runtime}))


def test_tags_join_the_metadata_without_sequence_markers() -> None:
    payload = one(Job(config={"metadata": {"owner": "a"}, "tags": ["seq:step:2", "beta", "x"]}))
    assert payload["metadata"] == {"owner": "a", "tags": ["beta", "x"]}
    assert one(Job(config={"tags": ["gamma"]}))["metadata"] == {"tags": ["gamma"]}
    # only markers: no tags key (and no metadata at all here)
    assert "metadata" not in one(Job(config={"tags": ["seq:step:1"]}))
    kept = one(Job(config={"metadata": {"owner": "a"}, "tags": ["seq:step:1"]}))
    assert kept["metadata"] == {"owner": "a"}


def test_the_payload_holds_a_copy_of_the_metadata() -> None:
    metadata = {"owner": "a"}
    payload = one(Job(config={"metadata": metadata}))
    metadata["owner"] = "changed later"
    assert payload["metadata"] == {"owner": "a"}


def test_hidden_tasks_are_skipped() -> None:
    hidden = Job(id="h", config={"tags": ["langsmith:hidden"]})
    shown = Job(id="s")
    assert [p["id"] for p in map_debug_tasks([hidden, shown])] == ["s"]


def test_task_metadata_helper() -> None:
    assert task_metadata(None, None) is None
    assert task_metadata({"thread_id": 1}, ["seq:step:4"]) is None
    assert task_metadata({"k": 1}, ["t"]) == {"k": 1, "tags": ["t"]}


class S(TypedDict):
    x: int


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_task_events_carry_run_and_node_metadata(mode: str) -> None:
    graph = (
        StateGraph(S)
        .add_node("a", lambda s: {"x": 1}, metadata={"role": "first"})
        .add_node("b", lambda s: {"x": 2})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile()
    )
    config = {"tags": ["run-tag"], "metadata": {"user": "u1"}}

    def starts(cfg: Any) -> list[dict[str, Any]]:
        if mode == "async":

            async def collect() -> list[Any]:
                return [c async for c in graph.astream({"x": 0}, cfg, stream_mode="tasks")]

            chunks = asyncio.run(collect())
        else:
            chunks = list(graph.stream({"x": 0}, cfg, stream_mode="tasks"))
        return [c for c in chunks if "input" in c]

    with_config = starts(config)
    assert [c.get("metadata") for c in with_config] == [
        {"user": "u1", "role": "first", "tags": ["run-tag"]},
        {"user": "u1", "tags": ["run-tag"]},
    ]
    plain = starts(None)
    assert [c.get("metadata") for c in plain] == [{"role": "first"}, None]
