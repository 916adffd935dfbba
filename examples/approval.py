"""Approval demo: a graph pauses for a human decision and resumes in another process.

Run it with ``make demo`` (or ``python examples/approval.py``). It

1. extracts a candidate action from a request and validates it,
2. pauses in ``review`` with ``interrupt()``: the pending request is saved to SQLite,
3. starts a *separate Python process* that answers the interrupt with
   ``Command(resume={"approved": True})`` against the same SQLite file,
4. prints the final state: the request is submitted exactly once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Literal

from typing_extensions import TypedDict

from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.graph import END, START, StateGraph
from stategraph.types import Command, interrupt


class State(TypedDict, total=False):
    request_id: str
    text: str
    candidate: dict[str, Any]
    status: str
    receipt: str


def extract(state: State) -> dict[str, Any]:
    """Turn the request text into a candidate action (fixed rules, no model)."""
    return {"candidate": {"action": "add", "person": state["text"].strip()}, "status": "extracted"}


def validate(state: State) -> dict[str, Any]:
    """Rule check: a candidate without a person is invalid."""
    return {"status": "valid" if state["candidate"]["person"] else "invalid"}


def route(state: State) -> str:
    """Valid candidates go to human review, the rest are rejected."""
    return "review" if state["status"] == "valid" else "reject"


def review(state: State) -> Command[Literal["submit", "reject"]]:
    """Pause until a human approves or denies the candidate."""
    answer = interrupt({"request_id": state["request_id"], "candidate": state["candidate"]})
    approved = isinstance(answer, dict) and answer.get("approved") is True
    return Command(
        update={"status": "approved" if approved else "rejected"},
        goto="submit" if approved else "reject",
    )


def submit(state: State) -> dict[str, Any]:
    """The only node with a business side effect; runs only after approval."""
    return {"receipt": "DEMO-" + state["request_id"], "status": "submitted"}


def reject(state: State) -> dict[str, Any]:
    """Terminal node for denied or invalid requests."""
    return {"status": "rejected"}


def build(saver: SqliteSaver) -> Any:
    """Compile the approval graph on ``saver``."""
    builder = StateGraph(State)
    builder.add_sequence([("extract", extract), ("validate", validate)])
    builder.add_node("review", review)
    builder.add_node("submit", submit)
    builder.add_node("reject", reject)
    builder.add_edge(START, "extract")
    builder.add_conditional_edges("validate", route, ["review", "reject"])
    builder.add_edge("submit", END)
    builder.add_edge("reject", END)
    return builder.compile(checkpointer=saver)


CONFIG = {"configurable": {"thread_id": "approval-demo"}}


def pause(db: str) -> dict[str, Any]:
    """Phase 1: run until the graph waits for review."""
    with SqliteSaver.from_conn_string(db) as saver:
        graph = build(saver)
        result = graph.invoke({"request_id": "r1", "text": " Alice "}, CONFIG, durability="sync")
        pending = result["__interrupt__"][0]
        return {
            "phase": "paused",
            "pid": os.getpid(),
            "next": list(graph.get_state(CONFIG).next),
            "pending_request": pending.value,
            "interrupt_id": pending.id,
        }


def resume(db: str) -> dict[str, Any]:
    """Phase 2 (another process): approve and run to the end."""
    with SqliteSaver.from_conn_string(db) as saver:
        graph = build(saver)
        result = graph.invoke(Command(resume={"approved": True}), CONFIG, durability="sync")
        return {
            "phase": "resumed",
            "pid": os.getpid(),
            "status": result["status"],
            "receipt": result["receipt"],
            "next": list(graph.get_state(CONFIG).next),
        }


def main() -> None:
    """Pause here, resume in a child process, print both phases."""
    if len(sys.argv) == 3:
        phase = pause if sys.argv[2] == "pause" else resume
        print(json.dumps(phase(sys.argv[1])))
        return
    with tempfile.TemporaryDirectory(prefix="stategraph-approval-") as folder:
        db = str(Path(folder) / "checkpoints.sqlite")
        paused = pause(db)
        print("Paused, waiting for review:")
        print(json.dumps(paused, indent=2))
        out = subprocess.check_output([sys.executable, __file__, db, "resume"], text=True)
        resumed = json.loads(out)
        print("Resumed in a separate process, approved:")
        print(json.dumps(resumed, indent=2))
        assert resumed["pid"] != paused["pid"]
        assert resumed["status"] == "submitted" and resumed["next"] == []


if __name__ == "__main__":
    main()
