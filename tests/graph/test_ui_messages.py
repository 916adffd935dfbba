"""Generative UI messages (``stategraph.graph.ui``): pushed from a node, streamed on
``custom`` and kept in the state by ``ui_message_reducer``. Behaviour checked against
LangGraph 1.2 as a black box."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.graph import START, StateGraph
from stategraph.graph.ui import (
    AnyUIMessage,
    delete_ui_message,
    push_ui_message,
    ui_message_reducer,
)
from stategraph.messages import AIMessage


class Screen(TypedDict):
    ui: Annotated[Sequence[AnyUIMessage], ui_message_reducer]
    step: int


def _show(state: Screen) -> dict[str, Any]:
    push_ui_message("card", {"title": "a"}, id="c1", message=AIMessage("hi", id="m1"))
    push_ui_message("banner", {"text": "b"}, id="b1")
    return {"step": 1}


def _edit(state: Screen) -> dict[str, Any]:
    push_ui_message("card", {"body": "z"}, id="c1", merge=True)
    delete_ui_message("b1")
    return {"step": 2}


def test_ui_messages_stream_and_accumulate_in_the_state() -> None:
    builder = StateGraph(Screen)
    builder.add_node("show", _show)
    builder.add_node("edit", _edit)
    builder.add_edge(START, "show")
    builder.add_edge("show", "edit")
    chunks = list(builder.compile().stream({"ui": [], "step": 0}, stream_mode=["custom", "values"]))
    custom = [c for mode, c in chunks if mode == "custom"]
    assert [(c["type"], c["id"]) for c in custom] == [
        ("ui", "c1"),
        ("ui", "b1"),
        ("ui", "c1"),
        ("remove-ui", "b1"),
    ]
    assert custom[0]["metadata"]["message_id"] == "m1"
    assert custom[0]["metadata"]["merge"] is False
    final = chunks[-1][1]
    assert final["step"] == 2
    assert [(m["id"], m["props"]) for m in final["ui"]] == [("c1", {"title": "a", "body": "z"})]


def test_reducer_replaces_merges_and_removes_by_id() -> None:
    card = {"type": "ui", "id": "x", "name": "n", "props": {"a": 1}, "metadata": {}}
    newer = {**card, "props": {"b": 2}}
    assert ui_message_reducer([card], newer) == [newer]
    merged = {**card, "props": {"b": 2}, "metadata": {"merge": True}}
    assert ui_message_reducer(card, merged)[0]["props"] == {"a": 1, "b": 2}
    assert ui_message_reducer([card], {"type": "remove-ui", "id": "x"}) == []
    with pytest.raises(ValueError, match="'x'"):
        ui_message_reducer([], {"type": "remove-ui", "id": "x"})


def test_push_outside_a_node_says_so() -> None:
    with pytest.raises(RuntimeError, match="push_ui_message"):
        push_ui_message("card", {})
