"""One SQLite commit per step under durability "sync".

The writes of a step's last task are held back by the shell and saved with the step's
checkpoint, in one transaction of the saver (``batch()``), instead of one commit each.
These tests count the COMMIT statements the connection runs, and check that nothing
that was durable before is lost: the writes of a task that finished before a failing
sibling, interrupts, a stream closed early, and savers that cannot batch.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from persistence_helpers import Harness, LogState, Runs, cfg, chain_builder

from stategraph.checkpoint._batched import abatches, batches, perform_batched
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, StateGraph
from stategraph.types import Command, interrupt

SQLITE_COMBOS = [
    pytest.param(("sqlite", "sync"), id="sqlite-sync"),
    pytest.param(("sqlite", "async"), id="sqlite-async"),
    pytest.param(("aiosqlite", "async"), id="aiosqlite-async"),
]


@pytest.fixture(params=SQLITE_COMBOS)
def sh(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    kind, mode = request.param
    harness = Harness(kind, mode, tmp_path)
    try:
        yield harness
    finally:
        harness.close()


def _commits(h: Harness, graph: Any, thread: str, durability: str) -> int:
    """COMMIT statements of one run of ``graph`` on a new thread."""
    seen: list[str] = []
    conn = h.saver.conn  # type: ignore[attr-defined]
    conn.set_trace_callback(seen.append)
    try:
        h.invoke(graph, {"log": ["in"]}, cfg(thread), durability=durability)
    finally:
        conn.set_trace_callback(None)
    return sum(1 for s in seen if s.lstrip().upper().startswith("COMMIT"))


def _chain(saver: Any, runs: Runs, n: int) -> Any:
    return chain_builder(runs, [f"n{i}" for i in range(n)]).compile(checkpointer=saver)


def test_a_chain_commits_once_per_step_under_sync(sh: Harness) -> None:
    runs = Runs()
    _commits(sh, _chain(sh.saver, runs, 2), "warm", "sync")  # tables, first lease
    short = _commits(sh, _chain(sh.saver, runs, 3), "short", "sync")
    long = _commits(sh, _chain(sh.saver, runs, 7), "long", "sync")
    # four more steps, four more commits (each: the task's writes and the checkpoint)
    assert long - short == 4
    snap = sh.get_state(_chain(sh.saver, Runs(), 7), cfg("long"))
    assert snap.values == {"log": ["in", *(f"n{i}" for i in range(7))], "last": "n6"}
    history = sh.history(_chain(sh.saver, Runs(), 7), cfg("long"))
    assert [s.metadata["step"] for s in history] == list(range(7, -2, -1))  # type: ignore[index]


def test_async_and_exit_durability_commit_as_before(sh: Harness) -> None:
    runs = Runs()
    _commits(sh, _chain(sh.saver, runs, 2), "warm", "sync")
    short = _commits(sh, _chain(sh.saver, runs, 3), "e3", "exit")
    long = _commits(sh, _chain(sh.saver, runs, 7), "e7", "exit")
    assert long == short  # one checkpoint at the end, whatever the length
    out = sh.invoke(_chain(sh.saver, runs, 4), {"log": ["in"]}, cfg("a4"), durability="async")
    assert out == {"log": ["in", "n0", "n1", "n2", "n3"], "last": "n3"}
    assert len(sh.history(_chain(sh.saver, Runs(), 4), cfg("a4"))) == 6


def _pair(saver: Any, runs: Runs, fail_first: bool) -> Any:
    """``START -> (ok, bad) -> END``: ``bad`` fails; ``fail_first`` says which of the
    two ends first."""
    bad_done = threading.Event()

    def ok(state: LogState) -> dict[str, Any]:
        runs.hit("ok")
        if fail_first:
            bad_done.wait(5)
            time.sleep(0.2)  # the failure is recorded before this task ends
        return {"log": ["ok"]}

    def bad(state: LogState) -> dict[str, Any]:
        runs.hit("bad")
        if not fail_first:
            time.sleep(0.3)
        if runs.snapshot()["bad"] == 1:
            bad_done.set()
            raise ValueError("bad fails on its first run")
        return {"log": ["bad"]}

    builder = StateGraph(LogState)
    builder.add_node("ok", ok)
    builder.add_node("bad", bad)
    builder.add_edge(START, "ok")
    builder.add_edge(START, "bad")
    builder.add_edge("ok", END)
    builder.add_edge("bad", END)
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("fail_first", [False, True], ids=["ok-ends-first", "bad-ends-first"])
def test_the_writes_of_a_sibling_of_a_failed_task_are_kept(sh: Harness, fail_first: bool) -> None:
    runs = Runs()
    graph = _pair(sh.saver, runs, fail_first)
    with pytest.raises(ValueError, match="first run"):
        sh.invoke(graph, {"log": ["in"]}, cfg("t"), durability="sync")
    assert runs.snapshot() == {"ok": 1, "bad": 1}
    # a new process: a fresh saver on the same file
    graph = _pair(sh.new_saver(), runs, fail_first)
    snap = sh.get_state(graph, cfg("t"))
    assert {t.name: t.error is not None for t in snap.tasks} == {"ok": False, "bad": True}
    out = sh.invoke(graph, None, cfg("t"), durability="sync")
    assert sorted(out["log"]) == ["bad", "in", "ok"]
    if fail_first and sh.mode == "async":
        # (an async run cancels the siblings of a task that failed: ok never ended)
        assert runs.snapshot() == {"ok": 2, "bad": 2}
    else:
        assert runs.snapshot() == {"ok": 1, "bad": 2}  # ok did not run again


def _asking(saver: Any, runs: Runs) -> Any:
    def ask(state: LogState) -> dict[str, Any]:
        runs.hit("ask")
        answer = interrupt("name?")
        return {"log": [f"ask:{answer}"]}

    builder = chain_builder(runs, ["a"])
    builder.add_node("ask", ask)
    builder.add_edge("a", "ask")
    return builder.compile(checkpointer=saver)


def test_an_interrupt_is_saved_and_resumed(sh: Harness) -> None:
    runs = Runs()
    graph = _asking(sh.saver, runs)
    out = sh.invoke(graph, {"log": ["in"]}, cfg("t"), durability="sync")
    assert [i.value for i in out["__interrupt__"]] == ["name?"]
    graph = _asking(sh.new_saver(), runs)
    snap = sh.get_state(graph, cfg("t"))
    assert snap.next == ("ask",)
    assert [i.value for t in snap.tasks for i in t.interrupts] == ["name?"]
    out = sh.invoke(graph, Command(resume="Ann"), cfg("t"), durability="sync")
    assert out == {"log": ["in", "a", "ask:Ann"], "last": "a"}
    assert runs.snapshot() == {"a": 1, "ask": 2}


def test_a_stream_closed_after_a_step_keeps_its_writes(tmp_path: Path) -> None:
    h = Harness("sqlite", "sync", tmp_path)
    try:
        runs = Runs()
        graph = _chain(h.saver, runs, 3)
        for chunk in graph.stream({"log": ["in"]}, cfg("t"), durability="sync"):
            assert chunk == {"n0": {"log": ["n0"], "last": "n0"}}
            break
        graph = _chain(h.new_saver(), runs, 3)
        snap = h.get_state(graph, cfg("t"))
        # the checkpoint of step 0, with n0's saved writes (shown applied: all its
        # tasks have finished)
        assert snap.metadata["step"] == 0  # type: ignore[index]
        assert [(t.name, t.result) for t in snap.tasks] == [("n0", {"log": ["n0"], "last": "n0"})]
        out = h.invoke(graph, None, cfg("t"), durability="sync")
        assert out == {"log": ["in", "n0", "n1", "n2"], "last": "n2"}
        assert runs.snapshot() == {"n0": 1, "n1": 1, "n2": 1}
    finally:
        h.close()


class _Recording(InMemorySaver):
    """An ``InMemorySaver`` logging its calls, and the ``batch()`` blocks if it has one."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[str] = []

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        self.log.append(f"put {metadata['step']}")
        return super().put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        self.log.append("writes " + ",".join(c for c, _ in writes if c == "last"))
        super().put_writes(config, writes, task_id, task_path)


class _Batching(_Recording):
    @contextmanager
    def batch(self) -> Iterator[None]:
        self.log.append("[")
        yield
        self.log.append("]")


def test_a_saver_without_batch_gets_its_calls_one_by_one() -> None:
    saver = _Recording()
    assert not batches(saver) and abatches(saver) is None
    out = _chain(saver, Runs(), 2).invoke({"log": ["in"]}, cfg("t"), durability="sync")
    assert out["last"] == "n1"
    # (the first writes are the input's, by the START task, before the checkpoint of step 0)
    assert saver.log == [
        *("put -1", "writes ", "put 0"),
        *("writes last", "put 1", "writes last", "put 2"),
    ]


def test_a_saver_with_its_own_batch_saves_a_step_in_one_block() -> None:
    saver = _Batching()
    assert batches(saver)
    out = _chain(saver, Runs(), 2).invoke({"log": ["in"]}, cfg("t"), durability="sync")
    assert out["last"] == "n1"
    assert saver.log == [
        *("put -1", "[", "writes ", "put 0", "]"),
        *("[", "writes last", "put 1", "]"),
        *("[", "writes last", "put 2", "]"),
    ]


def test_perform_batched_commits_the_calls_before_a_failing_one() -> None:
    saver = _Batching()
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "x"}}

    def fail(*args: Any) -> None:
        raise OSError("disk full")

    saver.fail = fail  # type: ignore[attr-defined]
    with pytest.raises(OSError, match="disk full"):
        perform_batched(saver, [("put_writes", (config, [("last", 1)], "t1")), ("fail", ())])
    assert saver.log == ["[", "writes last", "]"]
    assert [w[1] for w in saver.writes[("t", "", "x")].values()] == ["last"]
