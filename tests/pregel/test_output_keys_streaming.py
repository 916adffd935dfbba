"""``output_keys=`` narrows what ``values`` and ``updates`` chunks show.

Expected chunks were checked black-box against LangGraph 1.2: a list of keys gives
dicts of those keys, one key (a str) the bare value; a ``values`` chunk appears only
for a step that changed one of the keys, an ``updates`` chunk shows ``None`` for a
node that wrote none of them.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.func import entrypoint
from stategraph.graph import END, START, StateGraph
from stategraph.types import Command, interrupt


class Ledger(TypedDict):
    count: int
    notes: Annotated[list[str], operator.add]
    verdict: str


class Verdict(TypedDict):
    verdict: str


def _pipeline(*, ask: bool = False, output_schema: Any = None) -> Any:
    """START -> bump -> judge -> END; ``judge`` may pause with ``interrupt``."""

    def bump(s: Ledger) -> dict[str, Any]:
        return {"count": s["count"] + 5, "notes": ["bumped"]}

    def judge(s: Ledger) -> dict[str, Any]:
        verdict = interrupt("verdict?") if ask else "fine"
        return {"verdict": verdict, "notes": ["judged"]}

    g = StateGraph(Ledger, output_schema=output_schema)
    g.add_node("bump", bump)
    g.add_node("judge", judge)
    g.add_edge(START, "bump")
    g.add_edge("bump", "judge")
    g.add_edge("judge", END)
    return g.compile(checkpointer=InMemorySaver() if ask else None)


START_STATE = {"count": 0, "notes": [], "verdict": ""}


def test_values_chunks_show_listed_keys_for_steps_that_change_them(runner: Any) -> None:
    app = _pipeline()
    assert runner.stream(app, START_STATE, stream_mode="values", output_keys=["count"]) == [
        {"count": 0},
        {"count": 5},
    ]
    assert runner.stream(
        app, START_STATE, stream_mode="values", output_keys=["count", "verdict"]
    ) == [
        {"count": 0, "verdict": ""},
        {"count": 5, "verdict": ""},
        {"count": 5, "verdict": "fine"},
    ]


def test_values_chunks_with_one_key_are_bare_values(runner: Any) -> None:
    app = _pipeline()
    assert runner.stream(app, START_STATE, stream_mode="values", output_keys="verdict") == [
        "",
        "fine",
    ]


def test_updates_show_only_the_listed_keys(runner: Any) -> None:
    app = _pipeline()
    assert runner.stream(app, START_STATE, stream_mode="updates", output_keys=["notes"]) == [
        {"bump": {"notes": ["bumped"]}},
        {"judge": {"notes": ["judged"]}},
    ]
    # a node that wrote none of the keys shows None
    assert runner.stream(app, START_STATE, stream_mode="updates", output_keys=["count"]) == [
        {"bump": {"count": 5}},
        {"judge": None},
    ]
    assert runner.stream(app, START_STATE, stream_mode="updates", output_keys="count") == [
        {"bump": 5},
        {"judge": None},
    ]


def test_several_modes_are_filtered_alike(runner: Any) -> None:
    app = _pipeline()
    chunks = runner.stream(
        app, START_STATE, stream_mode=["updates", "values"], output_keys="verdict"
    )
    assert chunks == [
        ("values", ""),
        ("updates", {"bump": None}),
        ("updates", {"judge": "fine"}),
        ("values", "fine"),
    ]


def test_without_output_keys_everything_is_shown(runner: Any) -> None:
    app = _pipeline()
    assert runner.stream(app, START_STATE, stream_mode="updates") == [
        {"bump": {"count": 5, "notes": ["bumped"]}},
        {"judge": {"verdict": "fine", "notes": ["judged"]}},
    ]
    assert runner.stream(app, START_STATE, stream_mode="values")[-1] == {
        "count": 5,
        "notes": ["bumped", "judged"],
        "verdict": "fine",
    }


def test_checkpoint_values_are_not_filtered(runner: Any) -> None:
    app = _pipeline(ask=True)
    cfg = {"configurable": {"thread_id": "filtered-checkpoints"}}
    runner.stream(app, START_STATE, cfg)
    payloads = runner.stream(
        app, Command(resume="fine"), cfg, stream_mode="checkpoints", output_keys="count"
    )
    assert payloads[-1]["values"] == {
        "count": 5,
        "notes": ["bumped", "judged"],
        "verdict": "fine",
    }


def test_invoke_in_updates_mode_defaults_to_the_output_schema(runner: Any) -> None:
    app = _pipeline(output_schema=Verdict)
    assert runner.invoke(app, START_STATE, stream_mode="updates") == [
        {"bump": None},
        {"judge": {"verdict": "fine"}},
    ]
    # an explicit choice wins over the output schema
    assert runner.invoke(app, START_STATE, stream_mode="updates", output_keys="count") == [
        {"bump": 5},
        {"judge": None},
    ]
    # stream() keeps showing the whole update
    assert runner.stream(app, START_STATE, stream_mode="updates")[0] == {
        "bump": {"count": 5, "notes": ["bumped"]}
    }


def test_interrupt_values_chunk_with_filtered_keys(runner: Any) -> None:
    app = _pipeline(ask=True)
    cfg = {"configurable": {"thread_id": "filtered-pause"}}
    chunks = runner.stream(app, START_STATE, cfg, stream_mode="values", output_keys="count")
    assert chunks[:2] == [0, 5]
    # one key: the paused chunk carries only the interrupts
    assert list(chunks[2]) == ["__interrupt__"]
    assert chunks[2]["__interrupt__"][0].value == "verdict?"
    assert len(chunks) == 3
    # resuming shows the current value first; the step that answers does not touch it
    resumed = runner.stream(
        app, Command(resume="ok"), cfg, stream_mode="values", output_keys=["count"]
    )
    assert resumed == [{"count": 5}]
    assert runner.get_state(app, cfg).values["verdict"] == "ok"


def test_paused_keys_without_a_value_show_only_the_interrupts(runner: Any) -> None:
    app = _pipeline(ask=True)
    cfg = {"configurable": {"thread_id": "filtered-empty"}}
    chunks = runner.stream(app, {"count": 1}, cfg, stream_mode="values", output_keys=["verdict"])
    assert len(chunks) == 1
    assert list(chunks[0]) == ["__interrupt__"]


def test_functional_interrupt_values_chunk_carries_the_interrupts(runner: Any) -> None:
    @entrypoint(checkpointer=InMemorySaver())
    def flow(n: int) -> int:
        return n + interrupt("more?")

    cfg = {"configurable": {"thread_id": "fn-pause"}}
    chunks = runner.stream(flow, 1, cfg, stream_mode="values")
    assert len(chunks) == 1
    assert chunks[0]["__interrupt__"][0].value == "more?"
    assert runner.stream(flow, Command(resume=2), cfg, stream_mode="values") == [None, 3]


@pytest.mark.parametrize("keys", ["missing", ["count", "missing"]])
def test_unknown_output_key_is_refused_before_the_run(runner: Any, keys: Any) -> None:
    calls: list[str] = []

    def node(s: Ledger) -> dict[str, Any]:
        calls.append("ran")
        return {"count": 1}

    g = StateGraph(Ledger)
    g.add_node("node", node)
    g.add_edge(START, "node")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "bad-keys"}}
    with pytest.raises(ValueError, match="output_keys names 'missing'"):
        runner.stream(app, {"count": 0}, cfg, output_keys=keys)
    with pytest.raises(ValueError, match="'missing'"):
        runner.invoke(app, {"count": 0}, cfg, output_keys=keys)
    assert calls == []
    assert runner.get_state(app, cfg).values == {}
