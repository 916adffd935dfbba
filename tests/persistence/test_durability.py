"""``durability="sync" | "async" | "exit"`` and pending writes, through real graphs.

History lengths were recorded with LangGraph 1.2 (``/work/lgvenv``, black box) for
the same graphs: a 3-node chain leaves 5 checkpoints with ``sync``/``async`` and 1
with ``exit``; with ``exit`` no saver call happens until the run ends. The
``pending_writes`` scenario is seed 003's lab (A once, B twice).
"""

from __future__ import annotations

import operator
import threading
from typing import Annotated, Any

import pytest
from persistence_helpers import (
    DURABILITIES,
    Call,
    Harness,
    LogState,
    Runs,
    SpySaver,
    cfg,
    chain_builder,
    cp_id,
    shape,
)
from typing_extensions import TypedDict

from stategraph.graph import END, START, StateGraph
from stategraph.types import Command, interrupt

FIRST = {"log": ["in"], "last": "in"}
DONE = {"log": ["in", "a", "b", "c"], "last": "c"}


def _who(call: Call) -> str:
    """The node a put_writes call came from (each node logs its own name)."""
    for chan, val in call.values:
        if chan in ("log", "done"):
            return "+".join(val)
    return "?"


def _summary(spy: SpySaver) -> list[tuple[str, Any]]:
    return [
        ("put", (c.source, c.step)) if c.method == "put" else ("writes", _who(c)) for c in spy.calls
    ]


# ---------------------------------------------------------------------- history


@pytest.mark.parametrize(
    ("durability", "expected"),
    [
        ("sync", [("loop", 3), ("loop", 2), ("loop", 1), ("loop", 0), ("input", -1)]),
        ("async", [("loop", 3), ("loop", 2), ("loop", 1), ("loop", 0), ("input", -1)]),
        ("exit", [("loop", 3)]),
    ],
)
def test_history_length_per_durability(
    h: Harness, durability: str, expected: list[tuple[str, int]]
) -> None:
    graph = chain_builder(Runs()).compile(checkpointer=h.saver)
    assert h.invoke(graph, FIRST, cfg("t"), durability=durability) == DONE
    history = h.history(graph, cfg("t"))
    assert [(s.metadata["source"], s.metadata["step"]) for s in history] == expected  # type: ignore[index]
    assert history[0].values == DONE
    assert history[0].next == ()
    assert history[-1].parent_config is None
    # a fresh saver on the same storage reads the same thing
    fresh = chain_builder(Runs()).compile(checkpointer=h.new_saver())
    assert h.get_state(fresh, cfg("t")).values == DONE


def test_durability_is_taken_from_the_config_too(h: Harness) -> None:
    graph = chain_builder(Runs()).compile(checkpointer=h.saver)
    h.invoke(graph, FIRST, {**cfg("t"), "durability": "exit"})
    assert shape(h.history(graph, cfg("t"))) == [("loop", 3, ())]


# ---------------------------------------------------------------------- saver calls


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_every_step_is_saved_and_each_task_writes_first(h: Harness, durability: str) -> None:
    spy = SpySaver(h.saver)
    graph = chain_builder(Runs()).compile(checkpointer=spy)
    assert h.invoke(graph, FIRST, cfg("t"), durability=durability) == DONE
    assert _summary(spy) == [
        ("put", ("input", -1)),
        ("writes", "in"),
        ("put", ("loop", 0)),
        ("writes", "a"),
        ("put", ("loop", 1)),
        ("writes", "b"),
        ("put", ("loop", 2)),
        ("writes", "c"),
        ("put", ("loop", 3)),
    ]
    # each task's writes belong to the checkpoint its step started from, and each
    # checkpoint's parent is the one before it
    puts = [c for c in spy.calls if c.method == "put"]
    writes = [c for c in spy.calls if c.method == "put_writes"]
    assert [w.parent_id for w in writes] == [p.checkpoint_id for p in puts[:-1]]
    assert [p.parent_id for p in puts] == [None] + [p.checkpoint_id for p in puts[:-1]]


def test_exit_durability_saves_only_when_the_run_ends(h: Harness) -> None:
    seen_during_run: list[int] = []
    spy = SpySaver(h.saver)
    runs = Runs()

    def watch(name: str) -> Any:
        def node(state: LogState) -> dict[str, Any]:
            runs.hit(name)
            seen_during_run.append(len(spy.calls))
            return {"log": [name], "last": name}

        return node

    builder = StateGraph(LogState)
    for name in "abc":
        builder.add_node(name, watch(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    builder.add_edge("c", END)
    graph = builder.compile(checkpointer=spy)
    assert h.invoke(graph, FIRST, cfg("t"), durability="exit") == DONE
    assert seen_during_run == [0, 0, 0]
    assert _summary(spy) == [("put", ("loop", 3))]
    assert spy.calls[0].parent_id is None
    # the final checkpoint carries no stale pending writes of earlier steps
    saved = h.get_tuple(h.saver, cfg("t"))
    assert saved is not None
    assert saved.pending_writes == []


class Done(TypedDict):
    done: Annotated[list[str], operator.add]


def _parallel(saver: Any, on_fast_saved: threading.Event, waited: list[bool]) -> Any:
    def fast(state: Done) -> dict[str, Any]:
        return {"done": ["fast"]}

    def slow(state: Done) -> dict[str, Any]:
        # proceeds only once fast's writes reached the saver (or gives up)
        waited.append(on_fast_saved.wait(timeout=5))
        return {"done": ["slow"]}

    builder = StateGraph(Done)
    builder.add_node("fast", fast)
    builder.add_node("slow", slow)
    builder.add_edge(START, "fast")
    builder.add_edge(START, "slow")
    builder.add_edge("fast", END)
    builder.add_edge("slow", END)
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_a_finished_task_is_saved_while_its_sibling_still_runs(h: Harness, durability: str) -> None:
    event = threading.Event()
    waited: list[bool] = []

    def on_call(call: Call) -> None:
        if call.method == "put_writes" and ("done", ["fast"]) in call.values:
            event.set()

    spy = SpySaver(h.saver, on_call=on_call)
    graph = _parallel(spy, event, waited)
    out = h.invoke(graph, {"done": []}, cfg("t"), durability=durability)
    assert sorted(out["done"]) == ["fast", "slow"]
    assert waited == [True]
    summary = _summary(spy)
    assert summary.index(("writes", "fast")) < summary.index(("writes", "slow"))


# ---------------------------------------------------------------------- seed lab


def _seed_graph(saver: Any, calls: dict[str, int]) -> Any:
    """Seed 003 ``pending_writes``: a and b run in one step; b fails the first time."""

    a_finished = threading.Event()

    def a(state: Done) -> dict[str, Any]:
        calls["a"] += 1
        a_finished.set()
        return {"done": ["A"]}

    def b(state: Done) -> dict[str, Any]:
        calls["b"] += 1
        if calls["b"] == 1:
            # fail only once a has finished: a failure cancels the step's
            # unfinished siblings, and this test is about a finished one
            a_finished.wait(timeout=5)
            raise ValueError("simulated failure")
        return {"done": ["B"]}

    builder = StateGraph(Done)
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge("a", END)
    builder.add_edge("b", END)
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("durability", DURABILITIES)
def test_seed_pending_writes_resume_reruns_only_the_failed_task(
    h: Harness, durability: str
) -> None:
    calls = {"a": 0, "b": 0}
    graph = _seed_graph(h.saver, calls)
    with pytest.raises(ValueError, match="simulated failure"):
        h.invoke(graph, {"done": []}, cfg("pending"), durability=durability)
    assert calls == {"a": 1, "b": 1}
    # the failed step: a's result is kept, b is still to run
    snap = h.get_state(graph, cfg("pending"))
    assert snap.values == {"done": ["A"]}
    assert snap.next == ("b",)
    assert snap.metadata == {"source": "loop", "step": 0, "parents": {}}
    by_name = {t.name: t for t in snap.tasks}
    assert sorted(by_name) == ["a", "b"]
    assert by_name["a"].error is None
    assert by_name["a"].result == {"done": ["A"]}
    assert by_name["b"].error is not None
    assert "simulated failure" in str(by_name["b"].error)
    # resume in a "new process": a fresh graph on a fresh saver over the same storage
    spy = SpySaver(h.new_saver())
    resumed = _seed_graph(spy, calls)
    result = h.invoke(resumed, None, cfg("pending"), durability=durability)
    assert sorted(result["done"]) == ["A", "B"]
    assert calls == {"a": 1, "b": 2}
    summary = _summary(spy)
    assert ("writes", "A") not in summary  # a's saved writes were reused, not redone
    assert [c for c in summary if c[0] == "put"] == [("put", ("loop", 1))]
    if durability != "exit":
        assert summary == [("writes", "B"), ("put", ("loop", 1))]
    history = h.history(resumed, cfg("pending"))
    expected = [("loop", 1, ()), ("loop", 0, ("a", "b"))]
    if durability != "exit":
        expected.append(("input", -1, ("__start__",)))
    assert shape(history) == expected
    assert sorted(history[0].values["done"]) == ["A", "B"]


# ---------------------------------------------------------------------- Command writes


def _review(saver: Any, runs: Runs) -> Any:
    def a(state: LogState) -> dict[str, Any]:
        runs.hit("a")
        return {"log": ["a"]}

    def review(state: LogState) -> dict[str, Any]:
        runs.hit("review")
        return {"log": [f"review:{interrupt('ok?')}"]}

    builder = StateGraph(LogState)
    builder.add_node("a", a)
    builder.add_node("review", review)
    builder.add_edge(START, "a")
    builder.add_edge("a", "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("durability", DURABILITIES)
def test_command_update_on_resume_is_applied_exactly_once(h: Harness, durability: str) -> None:
    runs = Runs()
    graph = _review(h.saver, runs)
    paused = h.invoke(graph, {"log": ["in"]}, cfg("t"), durability=durability)
    assert paused["log"] == ["in", "a"]
    final = h.invoke(
        graph, Command(resume="yes", update={"log": ["U"]}), cfg("t"), durability=durability
    )
    assert final == {"log": ["in", "a", "U", "review:yes"]}
    # the finished thread has nothing left to do: running it again changes nothing
    again = h.invoke(graph, None, cfg("t"), durability=durability)
    assert again == final
    assert h.get_state(graph, cfg("t")).values == final
    assert runs.snapshot() == {"a": 1, "review": 2}


# ---------------------------------------------------------------------- visibility


def test_sync_durability_saves_each_step_before_the_next_starts(h: Harness) -> None:
    seen: dict[str, Any] = {}
    reader = h.new_saver()

    def probe(name: str) -> Any:
        def node(state: LogState) -> dict[str, Any]:
            saved = reader.get_tuple(cfg("t"))  # nodes run outside the event loop
            seen[name] = None if saved is None else saved.metadata["step"]
            return {"log": [name], "last": name}

        return node

    builder = StateGraph(LogState)
    for name in "abc":
        builder.add_node(name, probe(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    builder.add_edge("c", END)
    graph = builder.compile(checkpointer=h.saver)
    assert h.invoke(graph, FIRST, cfg("t"), durability="sync") == DONE
    # node "a" runs in step 1: checkpoint 0 is durable by then; and so on
    assert seen == {"a": 0, "b": 1, "c": 2}
    history = h.history(graph, cfg("t"))
    assert [cp_id(s.parent_config) for s in history[:-1]] == [cp_id(s.config) for s in history[1:]]


# ---------------------------------------------------------------------- failed saves


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("durability", ["sync", "async"])
def test_a_failed_save_is_reported_and_nothing_is_saved_on_top_of_it(
    h: Harness, durability: str
) -> None:
    """The 3rd saver call (``put`` of checkpoint 0) fails once with ``OSError`` (later
    calls would succeed). The run reports it, and no later checkpoint or write refers
    to the missing one, even with background (``async``) saving."""
    runs = Runs()
    spy = SpySaver(h.saver, crash_at=3, error=OSError, only_once=True)
    graph = chain_builder(runs).compile(checkpointer=spy)
    with pytest.raises(OSError, match="simulated failure of saver call 3"):
        h.invoke(graph, FIRST, cfg("t"), durability=durability)
    if durability == "sync":
        assert runs.snapshot() == {}  # step 1 never started: checkpoint 0 was not durable
    assert _summary(spy) == [("put", ("input", -1)), ("writes", "in")]
    reader = chain_builder(Runs()).compile(checkpointer=h.new_saver())
    assert shape(h.history(reader, cfg("t"))) == [("input", -1, ("__start__",))]
    # the thread resumes from what was saved
    runs.clear()
    assert h.invoke(reader, None, cfg("t"), durability=durability) == DONE
