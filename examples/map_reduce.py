"""Map-reduce with ``Send``: one task per item, in parallel, then one summary.

Run it with ``python examples/map_reduce.py``. ``plan`` splits a text into chunks,
a conditional edge sends each chunk to ``count_words`` (one task per ``Send``, all in
the same super-step), the results meet in a reducer key, and ``summarize`` runs once
every task of the step has finished.
"""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from stategraph.graph import END, START, StateGraph
from stategraph.types import Send


class State(TypedDict, total=False):
    text: str
    chunks: list[str]
    counts: Annotated[list[dict[str, Any]], operator.add]  # parallel writes are concatenated
    summary: dict[str, Any]


class Chunk(TypedDict):
    """What one mapped task receives (not the whole state: the Send's payload)."""

    index: int
    chunk: str


def plan(state: State) -> dict[str, Any]:
    paragraphs = [p.strip() for p in state["text"].split("\n\n") if p.strip()]
    return {"chunks": paragraphs}


def fan_out(state: State) -> list[Send]:
    """One ``Send`` per chunk: each becomes its own ``count_words`` task."""
    return [Send("count_words", {"index": i, "chunk": c}) for i, c in enumerate(state["chunks"])]


def count_words(payload: Chunk) -> dict[str, Any]:
    words = payload["chunk"].split()
    return {"counts": [{"index": payload["index"], "words": len(words)}]}


def summarize(state: State) -> dict[str, Any]:
    counts = sorted(state["counts"], key=lambda c: c["index"])
    return {"summary": {"chunks": len(counts), "words": sum(c["words"] for c in counts)}}


def build() -> Any:
    builder = StateGraph(State)
    builder.add_node("plan", plan)
    builder.add_node("count_words", count_words)
    builder.add_node("summarize", summarize)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", fan_out, ["count_words"])
    builder.add_edge("count_words", "summarize")
    builder.add_edge("summarize", END)
    return builder.compile()


TEXT = """Graphs run in super-steps.

Every node that was triggered runs, then their writes are applied together.

A Send starts one task per packet."""


def main() -> dict[str, Any]:
    graph = build()
    # one "updates" chunk per finished task: three count_words tasks ran in one step
    ran = [node for chunk in graph.stream({"text": TEXT}, stream_mode="updates") for node in chunk]
    result = graph.invoke({"text": TEXT})
    report = {"summary": result["summary"], "tasks": ran}
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
