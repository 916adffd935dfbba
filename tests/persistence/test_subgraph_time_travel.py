"""Time travel through subgraphs: replays and forks of the parent, and of a subgraph.

A replay re-runs the past, so a subgraph that keeps state across runs
(``checkpointer=True``) must start from the state it had at that point of the thread,
and a subgraph's own checkpoint config (from ``get_state(config, subgraphs=True)``)
must replay the parent and every level at the checkpoints it names. Every test runs
on each saver kind through the sync and async API; the expected behaviour was checked
against LangGraph 1.2 run as a black box on equivalent graphs.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from persistence_helpers import Harness, cfg
from typing_extensions import TypedDict

from stategraph.graph import END, START, StateGraph
from stategraph.types import Command, interrupt


class Memo(TypedDict):
    """State of the subgraphs."""

    memo: Annotated[list[str], operator.add]


class Outer(TypedDict, total=False):
    """State of the parents: a round counter and an append-only trail."""

    round: int
    trail: Annotated[list[str], operator.add]


def remembering(seen: list[list[str]], checkpointer: Any = True) -> Any:
    """A subgraph that records the memo it starts with, then adds one entry."""

    def recall(state: Memo) -> dict[str, list[str]]:
        seen.append(list(state.get("memo", [])))
        return {"memo": ["m"]}

    return (
        StateGraph(Memo)
        .add_node("recall", recall)
        .add_edge(START, "recall")
        .compile(checkpointer=checkpointer)
    )


def looping_parent(h: Harness, sub: Any) -> Any:
    """``bump`` -> ``sub`` -> back to ``bump`` until two rounds are done."""

    def bump(state: Outer) -> dict[str, Any]:
        return {"round": state.get("round", 0) + 1, "trail": [f"r{state.get('round', 0)}"]}

    return (
        StateGraph(Outer)
        .add_node("bump", bump)
        .add_node("sub", sub)
        .add_edge(START, "bump")
        .add_edge("bump", "sub")
        .add_conditional_edges("sub", lambda s: "bump" if s["round"] < 2 else END)
        .compile(checkpointer=h.saver)
    )


def pick(h: Harness, graph: Any, config: Any, next_: tuple[str, ...], round_: int) -> Any:
    """The newest checkpoint whose next task is ``next_`` at round ``round_``."""
    return next(
        s
        for s in h.history(graph, config)
        if s.next == next_ and s.values.get("round", 0) == round_
    )


def test_replay_hands_a_stateful_subgraph_its_state_of_that_time(h: Harness) -> None:
    seen: list[list[str]] = []
    graph = looping_parent(h, remembering(seen))
    config = cfg("replay-loop")
    h.invoke(graph, {"round": 0, "trail": []}, config)
    h.invoke(graph, {"round": 0, "trail": []}, config)
    assert seen == [[], ["m"], ["m", "m"], ["m", "m", "m"]]

    # the start of the second run: the subgraph then held two entries
    seen.clear()
    h.invoke(graph, None, pick(h, graph, config, ("bump",), 0).config)
    # its second call in the replay continues from what the replay's first call saved
    assert seen == [["m", "m"], ["m", "m", "m"]]

    # the middle of the second run: one more entry had been saved by then
    seen.clear()
    before = pick(h, graph, config, ("bump",), 1)
    h.invoke(graph, None, before.config)
    assert seen == [["m", "m", "m"]]

    # a new run continues from the latest state, the one the last replay left
    seen.clear()
    h.invoke(graph, {"round": 1, "trail": []}, config)
    assert seen == [["m", "m", "m", "m"]]


def test_replaying_the_first_run_starts_the_subgraph_empty(h: Harness) -> None:
    seen: list[list[str]] = []
    graph = looping_parent(h, remembering(seen))
    config = cfg("replay-first")
    h.invoke(graph, {"round": 0, "trail": []}, config)
    h.invoke(graph, {"round": 0, "trail": []}, config)
    oldest = [s for s in h.history(graph, config) if s.next == ("sub",)][-1]
    seen.clear()
    h.invoke(graph, None, oldest.config)
    assert seen[0] == []


def test_a_forked_checkpoint_gives_the_subgraph_its_state_of_the_fork_point(
    h: Harness,
) -> None:
    seen: list[list[str]] = []
    graph = looping_parent(h, remembering(seen))
    config = cfg("fork")
    for _ in range(3):
        h.invoke(graph, {"round": 1, "trail": []}, config)
    assert seen == [[], ["m"], ["m", "m"]]
    second_start = [s for s in h.history(graph, config) if s.next == ("bump",)][1]

    fork = h.update_state(graph, second_start.config, {"trail": ["edited"]})
    seen.clear()
    h.invoke(graph, None, fork)
    assert seen == [["m"]]  # as at the start of the second run

    # a fork of that fork starts from the state as it was when the first fork was
    # made: after the three runs, before the fork's own run added an entry
    fork_again = h.update_state(graph, fork, {"trail": ["again"]})
    seen.clear()
    h.invoke(graph, None, fork_again)
    assert seen == [["m", "m", "m"]]


def test_a_subgraph_without_checkpointer_true_replays_from_scratch(h: Harness) -> None:
    seen: list[list[str]] = []
    graph = looping_parent(h, remembering(seen, checkpointer=None))
    config = cfg("fresh")
    h.invoke(graph, {"round": 1, "trail": []}, config)
    h.invoke(graph, {"round": 1, "trail": []}, config)
    seen.clear()
    h.invoke(graph, None, pick(h, graph, config, ("sub",), 2).config)
    assert seen == [[]]


def test_resume_after_an_interrupted_replay_uses_the_latest_subgraph_state(
    h: Harness,
) -> None:
    seen: list[list[str]] = []

    def gate(state: Outer) -> dict[str, list[str]]:
        return {"trail": [interrupt("go?")]}

    graph = (
        StateGraph(Outer)
        .add_node("gate", gate)
        .add_node("sub", remembering(seen))
        .add_edge(START, "gate")
        .add_edge("gate", "sub")
        .compile(checkpointer=h.saver)
    )
    config = cfg("replay-resume")
    for answer in ("a", "b"):
        h.invoke(graph, {"trail": []}, config)
        h.invoke(graph, Command(resume=answer), config)
    assert seen == [[], ["m"]]
    start = next(s for s in h.history(graph, config) if s.next == ("gate",))
    paused = h.invoke(graph, None, start.config)
    assert [i.value for i in paused["__interrupt__"]] == ["go?"]
    # resuming is not a replay: the subgraph continues from its latest state
    h.invoke(graph, Command(resume="c"), config)
    assert seen == [[], ["m"], ["m", "m"]]


class Steps(TypedDict):
    """State shared by the graphs of the subgraph-config tests."""

    steps: Annotated[list[str], operator.add]


def questions(calls: list[str], checkpointer: Any = True) -> Any:
    """``prepare`` -> ``q1`` (asks) -> ``q2`` (asks)."""

    def node(name: str, asks: bool) -> Any:
        def run(state: Steps) -> dict[str, list[str]]:
            calls.append(name)
            if asks:
                return {"steps": [f"{name}={interrupt(name)}"]}
            return {"steps": [name]}

        return run

    return (
        StateGraph(Steps)
        .add_node("prepare", node("prepare", False))
        .add_node("q1", node("q1", True))
        .add_node("q2", node("q2", True))
        .add_edge(START, "prepare")
        .add_edge("prepare", "q1")
        .add_edge("q1", "q2")
        .compile(checkpointer=checkpointer)
    )


def with_parent(h: Harness, sub: Any, calls: list[str]) -> Any:
    """``route`` -> ``ask`` (the subgraph) -> ``wrap``."""

    def route(state: Steps) -> dict[str, list[str]]:
        calls.append("route")
        return {"steps": ["route"]}

    def wrap(state: Steps) -> dict[str, list[str]]:
        calls.append("wrap")
        return {"steps": ["wrap"]}

    return (
        StateGraph(Steps)
        .add_node("route", route)
        .add_node("ask", sub)
        .add_node("wrap", wrap)
        .add_edge(START, "route")
        .add_edge("route", "ask")
        .add_edge("ask", "wrap")
        .compile(checkpointer=h.saver)
    )


def sources(h: Harness, graph: Any, config: Any) -> list[tuple[str, tuple[str, ...]]]:
    return [(s.metadata["source"], s.next) for s in h.history(graph, config)]


def test_a_subgraph_checkpoint_config_replays_every_level(h: Harness) -> None:
    calls: list[str] = []
    graph = with_parent(h, questions(calls), calls)
    config = cfg("sub-replay")
    h.invoke(graph, {"steps": []}, config)
    at_q1 = h.get_state(graph, config, subgraphs=True).tasks[0].state.config
    h.invoke(graph, Command(resume="one"), config)
    h.invoke(graph, Command(resume="two"), config)
    assert sources(h, graph, config) == [
        ("loop", ()),
        ("loop", ("wrap",)),
        ("loop", ("ask",)),
        ("loop", ("route",)),
        ("input", ("__start__",)),
    ]

    calls.clear()
    paused = h.invoke(graph, None, at_q1)
    assert [i.value for i in paused["__interrupt__"]] == ["q1"]
    assert calls == ["q1"]  # the parent's route and the subgraph's prepare stay done
    # both levels were forked: the old branches are intact
    assert sources(h, graph, config)[0] == ("fork", ("ask",))
    sub_sources = [
        s.metadata["source"] for s in h.history(graph, cfg("sub-replay", checkpoint_ns="ask"))
    ]
    assert sub_sources[0] == "fork"

    calls.clear()
    h.invoke(graph, Command(resume="uno"), config)
    done = h.invoke(graph, Command(resume="dos"), config)
    assert calls == ["q1", "q2", "q2", "wrap"]  # q2 asks, then runs with its answer
    assert done == {"steps": ["route", "route", "prepare", "q1=uno", "q2=dos", "wrap"]}


def test_an_update_on_a_subgraph_config_forks_it_and_resumes_from_there(
    h: Harness,
) -> None:
    calls: list[str] = []
    graph = with_parent(h, questions(calls), calls)
    config = cfg("sub-fork")
    h.invoke(graph, {"steps": []}, config)
    at_q1 = h.get_state(graph, config, subgraphs=True).tasks[0].state.config

    fork = h.update_state(graph, at_q1, {"steps": ["edited"]})
    calls.clear()
    paused = h.invoke(graph, None, fork)
    assert [i.value for i in paused["__interrupt__"]] == ["q1"]
    assert calls == ["q1"]

    calls.clear()
    h.invoke(graph, Command(resume="one"), fork)
    done = h.invoke(graph, Command(resume="two"), config)
    assert calls == ["q1", "q2", "q2", "wrap"]  # q2 asks, then runs with its answer
    assert done["steps"][-4:] == ["edited", "q1=one", "q2=two", "wrap"]


def test_a_subgraph_level_with_task_ids_starts_over_in_a_replay(h: Harness) -> None:
    calls: list[str] = []
    graph = with_parent(h, questions(calls, checkpointer=None), calls)
    config = cfg("task-ns")
    h.invoke(graph, {"steps": []}, config)
    at_q1 = h.get_state(graph, config, subgraphs=True).tasks[0].state.config
    assert at_q1["configurable"]["checkpoint_ns"].startswith("ask:")

    calls.clear()
    paused = h.invoke(graph, None, at_q1)
    # the parent step is forked and runs a new task: the subgraph runs from its start
    assert calls == ["prepare", "q1"]
    assert [i.value for i in paused["__interrupt__"]] == ["q1"]


def test_a_subgraph_config_without_checkpoint_map_finds_its_parents(h: Harness) -> None:
    calls: list[str] = []
    graph = with_parent(h, questions(calls), calls)
    config = cfg("no-map")
    h.invoke(graph, {"steps": []}, config)
    h.invoke(graph, Command(resume="one"), config)
    at_q2 = h.get_state(graph, config, subgraphs=True).tasks[0].state.config
    bare = dict(at_q2["configurable"])
    del bare["checkpoint_map"]

    calls.clear()
    paused = h.invoke(graph, None, {"configurable": bare})
    assert [i.value for i in paused["__interrupt__"]] == ["q2"]
    assert calls == ["q2"]


def test_three_levels_replay_from_the_innermost_config(h: Harness) -> None:
    calls: list[str] = []
    inner = questions(calls)
    middle = (
        StateGraph(Steps)
        .add_node("inner", inner)
        .add_edge(START, "inner")
        .compile(checkpointer=True)
    )
    graph = (
        StateGraph(Steps)
        .add_node("outer", middle)
        .add_edge(START, "outer")
        .compile(checkpointer=h.saver)
    )
    config = cfg("three")
    h.invoke(graph, {"steps": []}, config)
    h.invoke(graph, Command(resume="one"), config)
    mid = h.get_state(graph, config, subgraphs=True).tasks[0].state
    innermost = mid.tasks[0].state.config
    assert innermost["configurable"]["checkpoint_ns"] == "outer|inner"
    assert set(innermost["configurable"]["checkpoint_map"]) == {"", "outer", "outer|inner"}
    h.invoke(graph, Command(resume="two"), config)

    calls.clear()
    paused = h.invoke(graph, None, innermost)
    assert [i.value for i in paused["__interrupt__"]] == ["q2"]
    assert calls == ["q2"]

    fork = h.update_state(graph, innermost, {"steps": ["edited"]})
    calls.clear()
    paused = h.invoke(graph, None, fork)
    assert [i.value for i in paused["__interrupt__"]] == ["q2"]
    assert calls == ["q2"]
