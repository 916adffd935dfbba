"""The seed's approval lab (extract, validate, review with interrupt, submit/reject).

The recorded LangGraph results are reproduced exactly on every saver, sync and async,
and the seed's two-process SQLite restart experiment is replayed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from stategraph.graph import END, START, StateGraph
from stategraph.types import Command, interrupt

RECORDED = {
    "paused_next": ["review"],
    "approved_status": "submitted",
    "denied_status": "rejected",
    "invalid_status": "rejected",
    "review_entries": 4,
    "writes": 1,
}


class State(TypedDict):
    request_id: str
    text: str
    candidate: dict
    status: str
    receipt: str


def build(saver: Any, audit: dict[str, int]) -> Any:
    """The lab graph, as written in the seed."""

    def extract(state: State) -> dict[str, Any]:
        return {
            "candidate": {"action": "add", "person": state["text"].strip()},
            "status": "extracted",
        }

    def validate(state: State) -> dict[str, Any]:
        person = state["candidate"]["person"]
        return {"status": "valid" if person else "invalid"}

    def route(state: State) -> str:
        return "review" if state["status"] == "valid" else "reject"

    def review(state: State) -> Command[Any]:
        audit["review_entries"] += 1
        answer = interrupt({"request_id": state["request_id"], "candidate": state["candidate"]})
        approved = isinstance(answer, dict) and answer.get("approved") is True
        return Command(
            update={"status": "approved" if approved else "rejected"},
            goto="submit" if approved else "reject",
        )

    def submit(state: State) -> dict[str, Any]:
        assert state["status"] == "approved"
        audit["writes"] += 1
        return {"receipt": "DEMO-" + state["request_id"], "status": "submitted"}

    def reject(state: State) -> dict[str, Any]:
        return {"status": "rejected"}

    builder = StateGraph(State)
    for name, fn in [
        ("extract", extract),
        ("validate", validate),
        ("review", review),
        ("submit", submit),
        ("reject", reject),
    ]:
        builder.add_node(name, fn)
    builder.add_edge(START, "extract")
    builder.add_edge("extract", "validate")
    builder.add_conditional_edges("validate", route, {"review": "review", "reject": "reject"})
    builder.add_edge("submit", END)
    builder.add_edge("reject", END)
    return builder.compile(checkpointer=saver)


def run_lab(saver: Any) -> dict[str, Any]:
    """The seed's lab body, synchronous."""
    audit = {"review_entries": 0, "writes": 0}
    graph = build(saver, audit)
    cfg = {"configurable": {"thread_id": "approval-1"}}
    paused = graph.invoke({"request_id": "r1", "text": " Alice "}, cfg)
    assert paused["__interrupt__"] and audit["writes"] == 0
    assert [i.value for i in paused["__interrupt__"]] == [
        {"request_id": "r1", "candidate": {"action": "add", "person": "Alice"}}
    ]
    snapshot = graph.get_state(cfg)
    assert snapshot.next == ("review",)
    final = graph.invoke(Command(resume={"approved": True}), cfg)
    assert final["status"] == "submitted" and audit == {"review_entries": 2, "writes": 1}
    assert final["receipt"] == "DEMO-r1"
    deny_cfg = {"configurable": {"thread_id": "approval-deny"}}
    graph.invoke({"request_id": "r2", "text": "Bob"}, deny_cfg)
    denied = graph.invoke(Command(resume={"approved": False}), deny_cfg)
    assert denied["status"] == "rejected" and audit["writes"] == 1
    invalid = graph.invoke(
        {"request_id": "r3", "text": " "}, {"configurable": {"thread_id": "invalid"}}
    )
    assert invalid["status"] == "rejected" and "__interrupt__" not in invalid
    return {
        "paused_next": list(snapshot.next),
        "approved_status": final["status"],
        "denied_status": denied["status"],
        "invalid_status": invalid["status"],
        "review_entries": audit["review_entries"],
        "writes": audit["writes"],
    }


async def arun_lab(saver: Any) -> dict[str, Any]:
    """The seed's lab body through the async API."""
    audit = {"review_entries": 0, "writes": 0}
    graph = build(saver, audit)
    cfg = {"configurable": {"thread_id": "approval-1"}}
    paused = await graph.ainvoke({"request_id": "r1", "text": " Alice "}, cfg)
    assert paused["__interrupt__"] and audit["writes"] == 0
    snapshot = await graph.aget_state(cfg)
    assert snapshot.next == ("review",)
    final = await graph.ainvoke(Command(resume={"approved": True}), cfg)
    assert final["status"] == "submitted" and audit == {"review_entries": 2, "writes": 1}
    deny_cfg = {"configurable": {"thread_id": "approval-deny"}}
    await graph.ainvoke({"request_id": "r2", "text": "Bob"}, deny_cfg)
    denied = await graph.ainvoke(Command(resume={"approved": False}), deny_cfg)
    assert denied["status"] == "rejected" and audit["writes"] == 1
    invalid = await graph.ainvoke(
        {"request_id": "r3", "text": " "}, {"configurable": {"thread_id": "invalid"}}
    )
    assert invalid["status"] == "rejected" and "__interrupt__" not in invalid
    return {
        "paused_next": list(snapshot.next),
        "approved_status": final["status"],
        "denied_status": denied["status"],
        "invalid_status": invalid["status"],
        "review_entries": audit["review_entries"],
        "writes": audit["writes"],
    }


def test_lab_in_memory_sync() -> None:
    assert run_lab(InMemorySaver()) == RECORDED


async def test_lab_in_memory_async() -> None:
    assert await arun_lab(InMemorySaver()) == RECORDED


def test_lab_sqlite_sync(tmp_path: Path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "lab.sqlite")) as saver:
        assert run_lab(saver) == RECORDED


async def test_lab_sqlite_async(tmp_path: Path) -> None:
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "lab.sqlite")) as saver:
        assert await arun_lab(saver) == RECORDED


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_lab_states_after_approval_on_sqlite(tmp_path: Path, durability: str) -> None:
    audit = {"review_entries": 0, "writes": 0}
    config = {"configurable": {"thread_id": "states"}}
    with SqliteSaver.from_conn_string(str(tmp_path / "states.sqlite")) as saver:
        graph = build(saver, audit)
        graph.invoke({"request_id": "r9", "text": "Eve"}, config, durability=durability)
        pending = graph.get_state(config)
        assert pending.next == ("review",)
        assert pending.values == {
            "request_id": "r9",
            "text": "Eve",
            "candidate": {"action": "add", "person": "Eve"},
            "status": "valid",
        }
        final = graph.invoke(Command(resume={"approved": True}), config, durability=durability)
        assert final == {
            "request_id": "r9",
            "text": "Eve",
            "candidate": {"action": "add", "person": "Eve"},
            "status": "submitted",
            "receipt": "DEMO-r9",
        }
        assert graph.get_state(config).next == ()
    assert audit == {"review_entries": 2, "writes": 1}


async def test_lab_resume_with_a_fresh_async_saver(tmp_path: Path) -> None:
    """Pause with one AsyncSqliteSaver, resume with another on the same file."""
    db = str(tmp_path / "reopen.sqlite")
    audit = {"review_entries": 0, "writes": 0}
    config = {"configurable": {"thread_id": "reopen"}}
    async with AsyncSqliteSaver.from_conn_string(db) as saver:
        paused = await build(saver, audit).ainvoke({"request_id": "r5", "text": "Zoe"}, config)
        assert paused["__interrupt__"]
    async with AsyncSqliteSaver.from_conn_string(db) as saver:
        graph = build(saver, audit)
        assert (await graph.aget_state(config)).next == ("review",)
        final = await graph.ainvoke(Command(resume={"approved": True}), config)
    assert final["status"] == "submitted"
    assert final["receipt"] == "DEMO-r5"
    assert audit == {"review_entries": 2, "writes": 1}


WORKER = textwrap.dedent(
    """
    import json, sys
    from typing_extensions import TypedDict
    from stategraph.graph import StateGraph, START, END
    from stategraph.checkpoint.sqlite import SqliteSaver
    from stategraph.types import interrupt, Command

    class State(TypedDict):
        item: str
        approved: bool

    def review(state):
        return {"approved": interrupt({"item": state["item"]}) is True}

    def worker(db, phase):
        b = StateGraph(State)
        b.add_node("review", review)
        b.add_edge(START, "review")
        b.add_edge("review", END)
        with SqliteSaver.from_conn_string(db) as saver:
            graph = b.compile(checkpointer=saver)
            cfg = {"configurable": {"thread_id": "restart-demo"}}
            if phase == "pause":
                result = graph.invoke({"item": "demo"}, cfg, durability="sync")
                assert result["__interrupt__"]
                return {"phase": "paused", "next": list(graph.get_state(cfg).next)}
            result = graph.invoke(Command(resume=True), cfg, durability="sync")
            assert result["approved"] is True and not graph.get_state(cfg).next
            return {"phase": "resumed", "approved": result["approved"]}

    print(json.dumps(worker(sys.argv[1], sys.argv[2])))
    """
)


def test_separate_processes_pause_and_resume(tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    db = str(tmp_path / "checkpoints.sqlite")
    results = [
        json.loads(
            subprocess.check_output([sys.executable, str(script), db, phase], text=True, timeout=60)
        )
        for phase in ["pause", "resume"]
    ]
    assert results == [
        {"phase": "paused", "next": ["review"]},
        {"phase": "resumed", "approved": True},
    ]
