"""The worker threads of parallel sync steps (step_pool.Crew): what a task that raises a
BaseException, a fork under a running step and interpreter exit do to a run."""

from __future__ import annotations

import operator
import os
import queue
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from typing import Annotated, Any, TypedDict

import pytest
from tests.pregel.forked_child import wait_for_child

from stategraph.graph import START, StateGraph
from stategraph.pregel import _step_pool as step_pool
from stategraph.pregel import _sync_shell as sync_shell


class _State(TypedDict):
    seen: Annotated[list[str], operator.add]


def _pair(first: Any, second: Any) -> Any:
    """START fans out to "a" (run by the caller) and "b" (run on the crew)."""
    builder = StateGraph(_State)
    builder.add_node("a", first)
    builder.add_node("b", second)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    return builder.compile()


class _Gate:
    """A job that waits for ``gate`` (when given), then records that it ran."""

    def __init__(self, ran: list[str], name: str, gate: threading.Event | None = None):
        self.ran, self.name, self.gate = ran, name, gate

    def run(self) -> None:
        if self.gate is not None:
            self.gate.wait(10)
        self.ran.append(self.name)


@pytest.mark.parametrize(
    "exc", [KeyboardInterrupt("stop"), SystemExit(3), GeneratorExit()], ids=type
)
def test_a_base_exception_in_a_pooled_task_ends_the_run_and_the_crew_serves_on(
    exc: BaseException,
) -> None:
    threads: dict[str, threading.Thread] = {}

    def a(state: _State) -> dict[str, Any]:
        threads["a"] = threading.current_thread()
        return {"seen": ["a"]}

    def b(state: _State) -> dict[str, Any]:
        threads["b"] = threading.current_thread()
        raise exc

    with pytest.raises(type(exc)) as info:
        _pair(a, b).invoke({"seen": []})
    assert info.value is exc
    assert threads["b"] is not threading.main_thread()
    # the thread that ran "b" survived it: the next run uses the same crew
    assert threads["b"].is_alive()
    ok = _pair(lambda s: {"seen": ["a"]}, lambda s: {"seen": ["b"]})
    assert sorted(ok.invoke({"seen": []})["seen"]) == ["a", "b"]


def test_a_crew_starts_threads_only_for_jobs_not_known_to_have_ended() -> None:
    crew = step_pool.Crew(4)
    ran: list[str] = []
    try:
        for i in range(3):
            done: queue.SimpleQueue[str] = queue.SimpleQueue()
            crew.submit(_Done(done, str(i)), 1)  # one unfinished job at a time
            assert done.get(timeout=5) == str(i)
        assert len(crew.threads) == 1
        gate = threading.Event()
        for i in range(6):
            crew.submit(_Gate(ran, f"g{i}", gate), i + 1)
        assert len(crew.threads) == 4  # its size, not one per job
        gate.set()
    finally:
        crew.stop(wait=True)
    assert sorted(ran) == [f"g{i}" for i in range(6)]  # stop(wait=True) ran every job
    assert not any(t.is_alive() for t in crew.threads)


class _Done:
    def __init__(self, done: queue.SimpleQueue[str], name: str) -> None:
        self.done, self.name = done, name

    def run(self) -> None:
        self.done.put(self.name)


def test_stopping_without_waiting_drops_the_jobs_not_started() -> None:
    crew = step_pool.Crew(1)
    ran: list[str] = []
    gate = threading.Event()
    crew.submit(_Gate(ran, "running", gate), 1)
    deadline = time.monotonic() + 5
    while not crew.inbox.empty() and time.monotonic() < deadline:
        time.sleep(0.01)  # the thread took the first job
    crew.submit(_Gate(ran, "queued"), 2)
    crew.stop(wait=False)
    gate.set()
    crew.threads[0].join(5)
    assert ran == ["running"]
    with pytest.raises(RuntimeError, match="stopped"):
        crew.submit(_Gate(ran, "late"), 1)


def test_a_crew_that_cannot_start_a_thread_runs_the_job_on_the_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Python 3.12+ refuses new threads once the main thread has ended
    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't create new thread at interpreter shutdown")

    ran_on: list[int] = []

    class Job:
        def run(self) -> None:
            ran_on.append(threading.get_ident())

    crew = step_pool.Crew(2)
    monkeypatch.setattr(threading.Thread, "start", refuse)
    crew.submit(Job(), 1)
    assert ran_on == [threading.get_ident()]  # ran before submit returned, here
    assert crew.threads == []
    assert crew.inbox.empty()  # nothing left queued for a thread that never came


def test_a_crew_needs_a_thread() -> None:
    with pytest.raises(ValueError, match="at least one thread"):
        step_pool.Crew(0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_child_forked_during_a_step_stops_instead_of_waiting_for_its_parents_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The caller's own task forks while "b" runs on a crew thread: the child goes on
    with the run, and the thread running "b" does not exist there."""
    monkeypatch.setattr(sync_shell, "_PROBE", 0.05)
    parent = os.getpid()
    b_running = threading.Event()
    release_b = threading.Event()
    read, write = os.pipe()
    child: list[int] = []

    def a(state: _State) -> dict[str, Any]:
        assert b_running.wait(10)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # a fork with threads
            pid = os.fork()
        if pid:
            child.append(pid)
            release_b.set()
        return {"seen": ["a"]}

    def b(state: _State) -> dict[str, Any]:
        b_running.set()
        release_b.wait(10)
        return {"seen": ["b"]}

    try:
        outcome = f"finished {sorted(_pair(a, b).invoke({'seen': []})['seen'])}"
    except BaseException as exc:
        outcome = f"{type(exc).__name__}: {exc}"
    if os.getpid() != parent:  # pragma: no cover - the child
        try:
            os.write(write, outcome.encode())
        finally:
            os._exit(0)
    os.close(write)
    assert outcome == "finished ['a', 'b']"  # the parent's run is unaffected
    (pid,) = child
    code = wait_for_child(pid, "the forked child waited for ever for a thread it does not have")
    with os.fdopen(read) as f:
        report = f.read()
    assert code == 0
    assert report.startswith("RuntimeError: Run "), report
    assert "'b'" in report and "stopped before finishing them" in report


def _run_script(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
    )


_GRAPH = """
import operator, threading, time
from typing import Annotated, TypedDict
from stategraph.config import get_stream_writer
from stategraph.graph import START, StateGraph

class S(TypedDict):
    seen: Annotated[list, operator.add]

def talks(s):
    get_stream_writer()("hello")
    return {"seen": ["talks"]}

def slow(s):
    time.sleep(0.3)
    print("slow done", flush=True)
    return {"seen": ["slow"]}

g = StateGraph(S)
g.add_node("talks", talks)
g.add_node("slow", slow)
g.add_edge(START, "talks")
g.add_edge(START, "slow")
app = g.compile()
"""


def test_the_interpreter_exits_with_a_run_suspended_mid_step() -> None:
    proc = _run_script(
        _GRAPH
        + """
stream = app.stream({"seen": []}, stream_mode="custom")
print(next(stream), flush=True)
# the script ends with the run suspended and "slow" handed to the crew
"""
    )
    assert proc.returncode == 0, proc.stderr
    # the task handed over ran to its end before the interpreter went down
    assert proc.stdout.splitlines() == ["hello", "slow done"]


def test_a_parallel_run_on_a_thread_that_outlives_the_main_thread_completes() -> None:
    proc = _run_script(
        _GRAPH
        + """
def late():
    time.sleep(0.3)  # the main thread has ended by now: the interpreter is shutting down
    print(sorted(app.invoke({"seen": []})["seen"]), flush=True)

threading.Thread(target=late).start()
"""
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["slow done", "['slow', 'talks']"]
    assert proc.stderr == ""
