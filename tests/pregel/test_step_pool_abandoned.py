"""A run abandoned part-way never leaves a broken thread pool behind.

The hang these tests guard against: a synchronous run that borrowed a step pool was
dropped mid-stream, the cyclic garbage collector cleared the pool's weak references
(its worker threads exited) before finalizing the run, and the run's ``finally`` gave
the dead pool back; the next run with a single-task step submitted its task to it and
waited for ever.
"""

from __future__ import annotations

import gc
import operator
import queue
import subprocess
import sys
import textwrap
import threading
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, StateGraph
from stategraph.pregel import _step_pool as step_pool
from stategraph.pregel import _sync_shell as sync_shell

REPRO = textwrap.dedent(
    """
    import gc
    from typing_extensions import TypedDict
    from stategraph.checkpoint.memory import InMemorySaver
    from stategraph.graph import END, START, StateGraph

    class S(TypedDict):
        x: int

    b = StateGraph(S)
    b.add_node("first", lambda s: {"x": s["x"] + 1})
    b.add_node("second", lambda s: {"x": s["x"] * 2})
    b.add_edge(START, "first")
    b.add_edge("first", "second")
    b.add_edge("second", END)
    graph = b.compile(checkpointer=InMemorySaver())

    gc.disable()  # collect at a moment of our choosing
    run = graph.stream_events({"x": 1}, {"configurable": {"thread_id": "a"}}, version="v3")
    values = iter(run.values)
    print(next(values), next(values))
    del values, run
    gc.collect()
    again = graph.stream_events(
        {"x": 1}, {"configurable": {"thread_id": "b"}}, version="v3",
        interrupt_before=["second"],
    )
    print(list(again.values))
    """
)


def test_run_after_an_abandoned_v3_stream_is_collected_completes() -> None:
    proc = subprocess.run([sys.executable, "-c", REPRO], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines == ["{'x': 1} {'x': 2}", "[{'x': 1}, {'x': 2}]"]


class _Fan(TypedDict):
    x: int
    seen: Annotated[list[str], operator.add]


class _Seen(TypedDict):
    seen: Annotated[list[str], operator.add]


def _fan_graph() -> object:
    b = StateGraph(_Fan)
    b.add_node("a", lambda s: {"seen": ["a"]})
    b.add_node("b", lambda s: {"seen": ["b"]})
    b.add_node("c", lambda s: {"x": s["x"] + 1})
    b.add_edge(START, "a")
    b.add_edge(START, "b")
    b.add_edge(["a", "b"], "c")
    b.add_edge("c", END)
    return b.compile(checkpointer=InMemorySaver())


def test_lent_pools_are_held_until_given_back() -> None:
    graph = _fan_graph()
    before = step_pool.lent_pools()
    stream = graph.stream({"x": 0, "seen": []}, {"configurable": {"thread_id": "t"}})  # type: ignore[attr-defined]
    next(stream)  # the first chunk: the two parallel tasks ran on a borrowed pool
    assert step_pool.lent_pools() == before + 1
    stream.close()
    assert step_pool.lent_pools() == before


class _Note:
    """A job that only reports that it ran."""

    def __init__(self, done: queue.SimpleQueue[object]) -> None:
        self.done = done

    def run(self) -> None:
        self.done.put(self)


def test_a_pool_whose_threads_died_is_not_lent_again() -> None:
    crew = step_pool.borrow(3)
    done: queue.SimpleQueue[object] = queue.SimpleQueue()
    note = _Note(done)
    crew.submit(note, 1)
    assert done.get(timeout=5) is note
    step_pool.give_back(crew)
    # its threads end (as the parent's threads are absent in a forked child)
    for _ in crew.threads:
        crew.inbox.put(None)
    for thread in crew.threads:
        thread.join(5)
    assert crew.threads and not crew.serving()
    assert step_pool.borrow(3) is not crew


def test_a_shut_down_pool_is_not_kept() -> None:
    crew = step_pool.borrow(5)
    crew.stop(wait=True)
    idle = step_pool.idle_pools()
    step_pool.give_back(crew)
    assert step_pool.idle_pools() == idle


def test_a_dropped_run_collected_by_the_gc_does_not_wait_for_its_tasks() -> None:
    """The garbage collector may finalize a dropped run on any thread: it shuts the
    run's pool down without joining its threads (an explicit close waits)."""
    release = threading.Event()
    started = threading.Event()

    def slow(s: _Seen) -> dict[str, list[str]]:
        started.set()
        release.wait(10)
        return {"seen": ["slow"]}

    def quick(s: _Seen) -> dict[str, list[str]]:
        return {"seen": ["quick"]}

    b = StateGraph(_Seen)
    b.add_node("slow", slow)
    b.add_node("quick", quick)
    b.add_edge(START, "slow")
    b.add_edge(START, "quick")
    b.add_edge("slow", END)
    b.add_edge("quick", END)
    graph = b.compile()
    stream = graph.stream({"seen": []}, stream_mode="updates")
    assert next(stream) == {"quick": {"seen": ["quick"]}}
    assert started.wait(5)
    lent = step_pool.lent_pools()
    cycle: list[object] = [stream]
    cycle.append(cycle)
    del stream, cycle
    collector = threading.Thread(target=gc.collect)
    try:
        collector.start()
        collector.join(5)
        assert not collector.is_alive(), "the collector waited for a running task"
        assert step_pool.lent_pools() == lent - 1
    finally:
        release.set()
        collector.join(10)


def test_a_task_whose_thread_died_is_an_error_naming_run_step_and_task(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def dies(inbox: object) -> None:
        """A worker thread that ends at once: the state a dead thread leaves."""

    monkeypatch.setattr(sync_shell, "_PROBE", 0.05)
    monkeypatch.setattr(step_pool, "_serve", dies)
    monkeypatch.setattr(step_pool, "_idle", [])  # a new crew, whose threads die
    graph = _fan_graph()
    with pytest.raises(RuntimeError) as info:
        graph.invoke(  # type: ignore[attr-defined]
            {"x": 0, "seen": []}, {"configurable": {"thread_id": "lost"}, "run_id": "r-1"}
        )
    message = str(info.value)
    assert message.startswith("Run r-1: step 1: ")
    # the caller ran 'a' itself: only 'b' went to the crew
    assert "'b'" in message and "'a'" not in message
    assert "stopped before finishing them" in message
    # the last checkpoint is intact: the input step was saved, with the writes 'a'
    # left before the run stopped
    state = graph.get_state({"configurable": {"thread_id": "lost"}})  # type: ignore[attr-defined]
    assert state.values == {"x": 0, "seen": ["a"]}
    assert set(state.next) == {"b"}


def test_drain_passes_chunks_and_skips_finished_task_notes() -> None:
    q: queue.SimpleQueue[object] = queue.SimpleQueue()
    note = sync_shell._Job(object(), object(), q)  # type: ignore[arg-type]
    q.put(("updates", {"a": 1}))
    q.put(note)
    q.put(("values", {"x": 1}))
    assert list(sync_shell._drain(q)) == [("updates", {"a": 1}), ("values", {"x": 1})]


FORK_CHILD_FINALIZES = textwrap.dedent(
    """
    import gc, os, sys, threading
    from typing_extensions import TypedDict
    from stategraph.checkpoint.memory import InMemorySaver
    from stategraph.graph import END, START, StateGraph

    class S(TypedDict):
        x: int

    gate = threading.Event()

    class SlowSaver(InMemorySaver):
        def put(self, *args, **kwargs):
            gate.wait(30)  # a write still in flight on the run's saver thread
            return super().put(*args, **kwargs)

    b = StateGraph(S)
    b.add_node("a", lambda s: {"x": s["x"] + 1})
    b.add_node("b", lambda s: {"x": s["x"] + 1})
    b.add_edge(START, "a")
    b.add_edge("a", "b")
    b.add_edge("b", END)
    graph = b.compile(checkpointer=SlowSaver())

    gc.disable()
    stream = graph.stream({"x": 0}, {"configurable": {"thread_id": "t"}}, durability="async")
    next(stream)
    cycle = [stream, None]
    cycle[1] = cycle
    del stream, cycle
    pid = os.fork()
    if pid == 0:
        # the child inherits the abandoned run and its queued write, not its threads
        gc.collect()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    gate.set()
    gc.enable()
    gc.collect()
    print("child", os.waitstatus_to_exitcode(status))
    """
)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_finalizing_an_inherited_run_does_not_wait_for_its_writes() -> None:
    proc = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", FORK_CHILD_FINALIZES],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "child 0"
