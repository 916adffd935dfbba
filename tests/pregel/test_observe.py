"""The observation layer: what the shells report about a run, in which order."""

from __future__ import annotations

import asyncio
import logging
import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, StateGraph
from stategraph.observe import (
    Observers,
    RunObserver,
    register_observer,
    unregister_observer,
)
from stategraph.types import Command, RetryPolicy, interrupt


class State(TypedDict):
    trail: Annotated[list[str], operator.add]


class Recorder(RunObserver):
    """Keeps one line per observation: kind, graph namespace, details."""

    def __init__(self) -> None:
        self.lines: list[tuple[Any, ...]] = []

    def run_started(self, run: Any) -> None:
        self.lines.append(("run_started", run.ns, run.nested))

    def run_resumed(self, run: Any) -> None:
        self.lines.append(("run_resumed", run.ns, bool(run.loop.checkpoint_id)))

    def run_finished(self, run: Any, output: Any) -> None:
        self.lines.append(("run_finished", run.ns, output))

    def run_interrupted(self, run: Any, interrupts: Any, status: str) -> None:
        self.lines.append(("run_interrupted", run.ns, [i.value for i in interrupts], status))

    def run_failed(self, run: Any, error: BaseException) -> None:
        self.lines.append(("run_failed", run.ns, type(error).__name__))

    def step_started(self, run: Any, step: int, tasks: Any) -> None:
        self.lines.append(("step_started", run.ns, step, sorted(t.name for t in tasks)))

    def step_finished(self, run: Any, step: int) -> None:
        self.lines.append(("step_finished", run.ns, step))

    def task_started(self, run: Any, task: Any, attempt: int) -> None:
        self.lines.append(("task_started", task.name, attempt))

    def task_finished(self, run: Any, task: Any, output: Any) -> None:
        self.lines.append(("task_finished", task.name, output))

    def task_failed(self, run: Any, task: Any, error: BaseException, retrying: bool) -> None:
        self.lines.append(("task_failed", task.name, type(error).__name__, retrying))

    def checkpoint_saved(self, run: Any, config: Any, checkpoint: Any, metadata: Any) -> None:
        self.lines.append(("checkpoint_saved", run.ns, metadata["source"], metadata["step"]))


@pytest.fixture
def recorder():
    rec = Recorder()
    register_observer(rec)
    try:
        yield rec
    finally:
        unregister_observer(rec)


def _chain() -> Any:
    def first(state: State) -> dict[str, Any]:
        return {"trail": ["first"]}

    def second(state: State) -> dict[str, Any]:
        return {"trail": ["second"]}

    return (
        StateGraph(State)
        .add_node("first", first)
        .add_node("second", second)
        .add_edge(START, "first")
        .add_edge("first", "second")
        .add_edge("second", END)
    )


# the input is written by the graph's hidden __start__ node, in step 0
EXPECTED_CHAIN = [
    ("run_started", "", False),
    ("step_started", "", 0, ["__start__"]),
    ("task_started", "__start__", 1),
    ("task_finished", "__start__", {"trail": []}),
    ("step_finished", "", 0),
    ("step_started", "", 1, ["first"]),
    ("task_started", "first", 1),
    ("task_finished", "first", {"trail": ["first"]}),
    ("step_finished", "", 1),
    ("step_started", "", 2, ["second"]),
    ("task_started", "second", 1),
    ("task_finished", "second", {"trail": ["second"]}),
    ("step_finished", "", 2),
    ("run_finished", "", {"trail": ["first", "second"]}),
]


def test_sync_run_reports_steps_and_tasks_in_order(recorder: Recorder) -> None:
    assert _chain().compile().invoke({"trail": []}) == {"trail": ["first", "second"]}
    assert recorder.lines == EXPECTED_CHAIN


async def test_async_run_reports_the_same_observations(recorder: Recorder) -> None:
    assert await _chain().compile().ainvoke({"trail": []}) == {"trail": ["first", "second"]}
    assert recorder.lines == EXPECTED_CHAIN


def test_streaming_reports_too(recorder: Recorder) -> None:
    chunks = list(_chain().compile().stream({"trail": []}, stream_mode="updates"))
    assert chunks == [{"first": {"trail": ["first"]}}, {"second": {"trail": ["second"]}}]
    assert recorder.lines == EXPECTED_CHAIN


def test_checkpoints_are_reported_with_their_metadata(recorder: Recorder) -> None:
    graph = _chain().compile(checkpointer=InMemorySaver())
    graph.invoke({"trail": []}, {"configurable": {"thread_id": "t"}}, durability="sync")
    saved = [line for line in recorder.lines if line[0] == "checkpoint_saved"]
    assert saved == [
        ("checkpoint_saved", "", "input", -1),
        ("checkpoint_saved", "", "loop", 0),
        ("checkpoint_saved", "", "loop", 1),
        ("checkpoint_saved", "", "loop", 2),
    ]


def test_retried_attempts_are_numbered(recorder: Recorder) -> None:
    calls = {"n": 0}

    def flaky(state: State) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] < 3:
            raise ConnectionError("try again")
        return {"trail": ["ok"]}

    graph = (
        StateGraph(State)
        .add_node(
            "flaky",
            flaky,
            retry_policy=RetryPolicy(initial_interval=0, jitter=False, retry_on=ConnectionError),
        )
        .add_edge(START, "flaky")
        .compile()
    )
    graph.invoke({"trail": []})
    attempts = [line for line in recorder.lines if line[0].startswith("task_")][2:]
    assert attempts == [
        ("task_started", "flaky", 1),
        ("task_failed", "flaky", "ConnectionError", True),
        ("task_started", "flaky", 2),
        ("task_failed", "flaky", "ConnectionError", True),
        ("task_started", "flaky", 3),
        ("task_finished", "flaky", {"trail": ["ok"]}),
    ]


def test_failing_run_reports_task_and_run_failure(recorder: Recorder) -> None:
    def broken(state: State) -> dict[str, Any]:
        raise ValueError("broken node")

    graph = StateGraph(State).add_node("broken", broken).add_edge(START, "broken").compile()
    with pytest.raises(ValueError, match="broken node"):
        graph.invoke({"trail": []})
    assert recorder.lines[-4:] == [
        ("task_started", "broken", 1),
        ("task_failed", "broken", "ValueError", False),
        ("step_finished", "", 1),
        ("run_failed", "", "ValueError"),
    ]


def _asking_graph() -> Any:
    def ask(state: State) -> dict[str, Any]:
        return {"trail": [interrupt("name?")]}

    return (
        StateGraph(State)
        .add_node("ask", ask)
        .add_edge(START, "ask")
        .compile(checkpointer=InMemorySaver())
    )


def test_interrupt_and_resume_are_reported(recorder: Recorder) -> None:
    graph = _asking_graph()
    config = {"configurable": {"thread_id": "hitl"}}
    graph.invoke({"trail": []}, config)
    assert recorder.lines[-3:] == [
        ("task_failed", "ask", "GraphInterrupt", False),
        ("step_finished", "", 1),
        ("run_interrupted", "", ["name?"], "pending"),
    ]
    recorder.lines.clear()
    assert graph.invoke(Command(resume="ada"), config) == {"trail": ["ada"]}
    assert recorder.lines[:2] == [("run_started", "", False), ("run_resumed", "", True)]
    assert recorder.lines[-1] == ("run_finished", "", {"trail": ["ada"]})


def test_static_breakpoint_reports_its_status(recorder: Recorder) -> None:
    graph = _chain().compile(checkpointer=InMemorySaver(), interrupt_before=["second"])
    config = {"configurable": {"thread_id": "bp"}}
    graph.invoke({"trail": []}, config)
    assert recorder.lines[-1] == ("run_interrupted", "", [], "interrupt_before")
    recorder.lines.clear()
    graph.invoke(None, config)
    assert recorder.lines[1] == ("run_resumed", "", True)


def test_resuming_a_finished_thread_still_reports_the_resume(recorder: Recorder) -> None:
    graph = _chain().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "done"}}
    graph.invoke({"trail": []}, config)
    recorder.lines.clear()
    graph.invoke(None, config)
    assert [line[0] for line in recorder.lines] == ["run_started", "run_resumed", "run_finished"]


def test_subgraph_runs_report_to_the_same_observers(recorder: Recorder) -> None:
    inner = _chain().compile()
    outer = StateGraph(State).add_node("inner", inner).add_edge(START, "inner").compile()
    outer.invoke({"trail": []})
    kinds = [(line[0], line[1]) for line in recorder.lines if line[0].startswith("run_")]
    assert kinds[0] == ("run_started", "")
    assert kinds[1][0] == "run_started" and kinds[1][1].startswith("inner:")
    assert kinds[2][0] == "run_finished" and kinds[2][1].startswith("inner:")
    assert kinds[3] == ("run_finished", "")
    nested = [line for line in recorder.lines if line[0] == "run_started"]
    assert nested == [("run_started", "", False), ("run_started", kinds[1][1], True)]


def test_parallel_tasks_each_report(recorder: Recorder) -> None:
    def make(name: str) -> Any:
        def node(state: State) -> dict[str, Any]:
            return {"trail": [name]}

        return node

    builder = StateGraph(State)
    for name in ("a", "b", "c"):
        builder.add_node(name, make(name))
        builder.add_edge(START, name)
    builder.compile().invoke({"trail": []})
    started = sorted(line[1] for line in recorder.lines if line[0] == "task_started")
    finished = sorted(line[1] for line in recorder.lines if line[0] == "task_finished")
    assert started == finished == ["__start__", "a", "b", "c"]
    assert recorder.lines[5] == ("step_started", "", 1, ["a", "b", "c"])


class Broken(RunObserver):
    def __init__(self, raise_error: bool = False) -> None:
        self.raise_error = raise_error
        self.calls = 0

    def task_started(self, run: Any, task: Any, attempt: int) -> None:
        self.calls += 1
        raise RuntimeError("observer is broken")


def test_a_failing_observer_never_fails_the_run_and_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    broken = Broken()
    register_observer(broken)
    try:
        with caplog.at_level(logging.WARNING, logger="stategraph.observe"):
            assert _chain().compile().invoke({"trail": []}) == {"trail": ["first", "second"]}
    finally:
        unregister_observer(broken)
    assert broken.calls == 3  # __start__, first, second
    logged = [r for r in caplog.records if "observer is broken" in str(r.exc_info)]
    assert len(logged) == 1
    assert "Broken" in logged[0].getMessage()


def test_an_observer_with_raise_error_fails_the_run() -> None:
    broken = Broken(raise_error=True)
    register_observer(broken)
    try:
        with pytest.raises(RuntimeError, match="observer is broken"):
            _chain().compile().invoke({"trail": []})
    finally:
        unregister_observer(broken)


class AsyncRecorder(RunObserver):
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def task_started(self, run: Any, task: Any, attempt: int) -> None:
        await asyncio.sleep(0)
        self.seen.append(task.name)


async def test_async_observer_methods_are_awaited_in_async_runs() -> None:
    rec = AsyncRecorder()
    register_observer(rec)
    try:
        await _chain().compile().ainvoke({"trail": []})
    finally:
        unregister_observer(rec)
    assert rec.seen == ["__start__", "first", "second"]


def test_async_observer_methods_run_to_completion_in_sync_runs() -> None:
    rec = AsyncRecorder()
    register_observer(rec)
    try:
        _chain().compile().invoke({"trail": []})
    finally:
        unregister_observer(rec)
    assert rec.seen == ["__start__", "first", "second"]


async def test_sync_run_inside_an_event_loop_still_runs_async_observers() -> None:
    rec = AsyncRecorder()
    register_observer(rec)
    try:
        _chain().compile().invoke({"trail": []})
    finally:
        unregister_observer(rec)
    assert rec.seen == ["__start__", "first", "second"]


def test_no_observer_means_no_fan_out() -> None:
    graph = _chain().compile()
    loop = graph._make_run(
        {"trail": []},
        None,
        context=None,
        modes=frozenset(),
        sink=None,
        output_keys=None,
        interrupt_before=None,
        interrupt_after=None,
        durability=None,
        subgraphs=False,
    )
    assert loop.run.observers is None


def test_fan_out_only_calls_observers_that_override_the_method() -> None:
    class OnlyRuns(RunObserver):
        def __init__(self) -> None:
            self.count = 0

        def run_started(self, run: Any) -> None:
            self.count += 1

    only = OnlyRuns()
    fan = Observers([only, Recorder()])
    assert fan.wants("run_started") and fan.wants("task_started")
    assert not Observers([only]).wants("task_started")
    assert Observers([]).wants("run_started") is False
    assert not Observers([])


@pytest.mark.parametrize("is_async", [False, True])
def test_node_code_finds_its_run_and_task_by_name(is_async: bool) -> None:
    from stategraph.observe import RunAndTask, current_run_and_task

    seen: list[Any] = []

    def look(state: State) -> State:
        seen.append(current_run_and_task())
        return {"trail": ["look"]}

    async def alook(state: State) -> State:
        return look(state)

    graph = (
        StateGraph(State)
        .add_node("look", alook if is_async else look)
        .add_edge(START, "look")
        .compile(name="finder")
    )
    if is_async:
        asyncio.run(graph.ainvoke({"trail": []}))
    else:
        graph.invoke({"trail": []})

    (where,) = seen
    assert isinstance(where, RunAndTask)
    assert where.run.graph.name == "finder"
    assert where.task.name == "look"
    assert where.task.ns == f"look:{where.task.id}"
    run, task = where  # still unpacks as a pair
    assert (run, task) == (where.run, where.task)
    assert current_run_and_task() is None  # outside a run
