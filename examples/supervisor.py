"""A supervisor with subgraph workers that hand control back with ``Command.PARENT``.

Run it with ``python examples/supervisor.py``. The supervisor routes a task to a
worker team; each team is its own compiled graph (a subgraph node). When a team is
done, its last node returns ``Command(graph=Command.PARENT, goto="supervisor",
update=...)``: the update is applied to the *parent's* state and the parent continues
at the supervisor, which decides what comes next.
"""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any, Literal

from typing_extensions import TypedDict

from stategraph.graph import END, START, StateGraph
from stategraph.types import Command


class State(TypedDict, total=False):
    task: str
    log: Annotated[list[str], operator.add]
    done: Annotated[list[str], operator.add]


def supervisor(state: State) -> Command[Literal["research_team", "writing_team", "__end__"]]:
    """Research first, then writing, then stop."""
    done = state.get("done", [])
    if "research" not in done:
        return Command(goto="research_team", update={"log": ["supervisor -> research"]})
    if "writing" not in done:
        return Command(goto="writing_team", update={"log": ["supervisor -> writing"]})
    return Command(goto=END, update={"log": ["supervisor -> done"]})


class TeamState(State, total=False):
    """A team sees the parent's keys plus its private notes (never copied back)."""

    notes: Annotated[list[str], operator.add]


def team(name: str, steps: list[str]) -> Any:
    """A worker team: its steps in sequence, then hand back to the supervisor."""

    def step(label: str) -> Any:
        def run(state: TeamState) -> dict[str, Any]:
            return {"notes": [label]}

        return run

    def report(state: TeamState) -> Command[Any]:
        # the update goes to the parent's state; the parent continues at "supervisor"
        return Command(
            graph=Command.PARENT,
            goto="supervisor",
            update={"log": [f"{name}: {', '.join(state['notes'])}"], "done": [name]},
        )

    builder = StateGraph(TeamState)
    builder.add_sequence([(label, step(label)) for label in steps])
    builder.add_node("report", report)
    builder.add_edge(START, steps[0])
    builder.add_edge(steps[-1], "report")
    return builder.compile()


def build() -> Any:
    builder = StateGraph(State)
    builder.add_node("supervisor", supervisor)
    builder.add_node("research_team", team("research", ["search", "read"]))
    builder.add_node("writing_team", team("writing", ["outline", "draft"]))
    builder.add_edge(START, "supervisor")
    return builder.compile()


def main() -> dict[str, Any]:
    graph = build()
    result = graph.invoke({"task": "a short report on graphs", "log": [], "done": []})
    report = {"log": result["log"], "done": result["done"]}
    print(json.dumps(report, indent=2))
    print(graph.get_graph(xray=True).draw_ascii())
    return report


if __name__ == "__main__":
    main()
