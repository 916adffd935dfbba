"""Seed 003's cross-process worker: pause a graph in one Python process and resume it
in another, through one SQLite file (used by ``test_cross_process.py``; the user-facing
version of this scenario is ``examples/approval.py``).

Run it with no arguments::

    python tests/persistence/restart_worker.py

It starts this script twice as separate processes against a temporary database:
the first runs the graph until the ``review`` node asks for approval with
``interrupt()`` and exits; the second answers with ``Command(resume=True)`` and finishes
the run. Nothing is shared between them but the database file and the thread id. It
prints::

    {
      "separate_processes": [
        {"phase": "paused", "next": ["review"]},
        {"phase": "resumed", "approved": true}
      ]
    }

(indented over more lines). ``python tests/persistence/restart_worker.py DB PHASE`` runs one
phase (``pause`` or ``resume``) against the database file ``DB`` and prints its result
as one JSON line.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from typing_extensions import TypedDict

from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.graph import END, START, StateGraph
from stategraph.types import Command, interrupt

THREAD = {"configurable": {"thread_id": "restart-demo"}}


class State(TypedDict, total=False):
    """The item under review and the reviewer's decision."""

    item: str
    approved: bool


def review(state: State) -> dict[str, Any]:
    """Ask a human to approve ``item``; the answer given on resume is the decision."""
    answer = interrupt({"item": state["item"]})
    return {"approved": answer is True}


def build() -> StateGraph[State, None, State, State]:
    """``START -> review -> END``."""
    builder: StateGraph[State, None, State, State] = StateGraph(State)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder


def worker(db: str, phase: str) -> dict[str, Any]:
    """Run one phase against the SQLite file ``db`` and describe the outcome."""
    with SqliteSaver.from_conn_string(db) as saver:
        graph = build().compile(checkpointer=saver)
        if phase == "pause":
            result = graph.invoke({"item": "demo"}, THREAD, durability="sync")
            if not result.get("__interrupt__"):
                raise RuntimeError(f"expected the run to pause at review, got {result!r}")
            return {"phase": "paused", "next": list(graph.get_state(THREAD).next)}
        if phase == "resume":
            result = graph.invoke(Command(resume=True), THREAD, durability="sync")
            if result.get("approved") is not True or graph.get_state(THREAD).next:
                raise RuntimeError(f"expected an approved, finished run, got {result!r}")
            return {"phase": "resumed", "approved": result["approved"]}
    raise ValueError(f"unknown phase {phase!r}: use 'pause' or 'resume'")


def main(argv: list[str]) -> int:
    """Run one phase (``DB PHASE``) or, with no arguments, both in separate processes."""
    if len(argv) == 2:
        print(json.dumps(worker(argv[0], argv[1])))
        return 0
    if argv:
        print(f"usage: {Path(__file__).name} [DB PHASE]", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="stategraph-restart-") as folder:
        db = str(Path(folder) / "checkpoints.sqlite")
        results = [
            json.loads(subprocess.check_output([sys.executable, __file__, db, phase], text=True))
            for phase in ("pause", "resume")
        ]
    print(json.dumps({"separate_processes": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
