"""``bulk_update_state``: the updates of one superstep apply in the order given.

Expected values recorded from LangGraph 1.2.24 (same code, import prefix changed).
"""

from __future__ import annotations

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.types import StateUpdate

from ._support import Log, Runner, cfg, step


@pytest.mark.parametrize(
    ("updates", "expected_tail"),
    [
        ([("1", "b"), ("2", "a")], ["1", "2"]),
        ([("1", "a"), ("2", "b")], ["1", "2"]),
        ([("1", "z"), ("2", "a"), ("3", "b")], ["1", "2", "3"]),
    ],
)
def test_updates_of_a_superstep_apply_in_given_order(
    runner: Runner, updates: list[tuple[str, str]], expected_tail: list[str]
) -> None:
    builder = StateGraph(Log)
    for name in ("a", "b", "z"):
        builder.add_node(name, step(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "z")
    graph = builder.compile(checkpointer=InMemorySaver())
    runner.invoke(graph, {"log": ["in"]}, cfg())
    runner.bulk_update_state(
        graph, cfg(), [[StateUpdate({"log": [value]}, node) for value, node in updates]]
    )
    state = runner.get_state(graph, cfg())
    # LangGraph 1.2.24: e.g. [("1", "b"), ("2", "a")] -> log ends with '1', '2'.
    assert state.values == {"log": ["in", "a", "b", "z", *expected_tail]}
    assert state.next == ("b", "z")
