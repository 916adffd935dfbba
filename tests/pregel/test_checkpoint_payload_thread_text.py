"""A thread id given as a ``uuid.UUID`` is named as text in the configs that the
``checkpoints`` and ``debug`` streams carry (their ``config`` and ``parent_config``), as
a saver names it and as LangGraph 1.2 streams it (checked black-box), with every
durability; the functional API's payloads included."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.func import entrypoint, task
from stategraph.graph import START, StateGraph
from stategraph.types import interrupt


class _State(TypedDict):
    x: int


def _configs(chunks: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for mode, chunk in chunks:
        payload = chunk if mode == "checkpoints" else chunk["payload"]
        if mode == "debug" and chunk["type"] != "checkpoint":
            continue
        found.append(payload["config"])
        if payload["parent_config"] is not None:
            found.append(payload["parent_config"])
    return found


@pytest.mark.parametrize("durability", ["exit", "async", "sync"])
def test_a_uuid_thread_is_text_in_checkpoint_payloads(durability: str) -> None:
    builder = StateGraph(_State)
    builder.add_node("bump", lambda s: {"x": s["x"] + 1})
    builder.add_edge(START, "bump")
    graph = builder.compile(checkpointer=InMemorySaver())
    thread = uuid.uuid4()
    config: Any = {"configurable": {"thread_id": thread}}
    chunks = list(
        graph.stream({"x": 0}, config, stream_mode=["checkpoints", "debug"], durability=durability)
    )
    configs = _configs(chunks)
    # input and step checkpoints, each in both modes, and parents when chained
    assert len(configs) >= 4
    assert {c["configurable"]["thread_id"] for c in configs} == {str(thread)}
    assert graph.get_state(config).values == {"x": 1}


def test_entrypoint_debug_checkpoints_name_a_uuid_thread_as_text() -> None:
    @task
    def falsy() -> bool:
        return False

    @entrypoint(checkpointer=InMemorySaver())
    def flow(value: dict[str, int]) -> None:
        falsy().result()
        interrupt("go on?")

    thread = uuid.uuid4()
    config: Any = {"configurable": {"thread_id": thread}}
    chunks = [("debug", c) for c in flow.stream({"a": 5}, config, stream_mode="debug")]
    configs = _configs(chunks)
    assert configs
    assert {c["configurable"]["thread_id"] for c in configs} == {str(thread)}
    results = [c["payload"] for _, c in chunks if c["type"] == "task_result"]
    assert results[0]["name"] == "falsy"
    assert results[0]["result"] == {"__return__": False}
