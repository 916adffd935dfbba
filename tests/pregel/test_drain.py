"""Graceful drain: RunControl.request_drain stops a run at a step boundary, resumably."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.errors import GraphBubbleUp, GraphDrained
from stategraph.graph import END, START, StateGraph
from stategraph.runtime import RunControl, Runtime, SignalDrain


class Steps(TypedDict, total=False):
    done: list[str]


def _pipeline(stops_after: str | None = None, control: RunControl | None = None) -> Any:
    """a -> b -> c; the node named ``stops_after`` asks for a drain while it runs."""

    def step(name: str) -> Any:
        def node(state: Steps, runtime: Runtime[Any]) -> Steps:
            if name == stops_after:
                assert runtime.control is not None
                (control or runtime.control).request_drain("deploy")
            return {"done": [*state.get("done", []), name]}

        return node

    b = StateGraph(Steps)
    for n in "abc":
        b.add_node(n, step(n))
    b.add_edge(START, "a").add_edge("a", "b").add_edge("b", "c").add_edge("c", END)
    return b


def test_drain_stops_before_the_next_step_and_resume_finishes() -> None:
    graph = _pipeline(stops_after="a").compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "d1"}}
    with pytest.raises(GraphDrained, match="deploy") as info:
        graph.invoke({"done": []}, cfg, control=RunControl())
    assert info.value.reason == "deploy"
    assert isinstance(info.value, GraphBubbleUp)
    state = graph.get_state(cfg)
    assert state.values == {"done": ["a"]} and state.next == ("b",)
    assert graph.invoke(None, cfg) == {"done": ["a", "b", "c"]}


async def test_drain_stops_before_the_next_step_and_resume_finishes_async() -> None:
    graph = _pipeline(stops_after="b").compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "d2"}}
    with pytest.raises(GraphDrained, match="deploy"):
        await graph.ainvoke({"done": []}, cfg, control=RunControl())
    assert (await graph.aget_state(cfg)).next == ("c",)
    assert await graph.ainvoke(None, cfg) == {"done": ["a", "b", "c"]}


def test_drain_in_the_last_step_lets_the_run_finish() -> None:
    control = RunControl()
    graph = _pipeline(stops_after="c", control=control).compile()
    assert graph.invoke({"done": []}, control=control) == {"done": ["a", "b", "c"]}
    assert control.drain_requested and control.drain_reason == "deploy"


def test_a_control_drained_before_the_run_starts_runs_nothing() -> None:
    ran: list[str] = []
    b = StateGraph(Steps).add_node("a", lambda s: ran.append("a") or {})
    graph = b.add_edge(START, "a").compile()
    control = RunControl()
    control.request_drain()
    with pytest.raises(GraphDrained, match="shutdown"):
        graph.invoke({"done": []}, control=control)
    assert ran == []
    with pytest.raises(GraphDrained):
        list(graph.stream({"done": []}, control=control))


def test_first_reason_is_kept() -> None:
    control = RunControl()
    assert not control.drain_requested and control.drain_reason is None
    control.request_drain("sigterm")
    control.request_drain("other")
    assert control.drain_reason == "sigterm"


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_drain_saves_progress_whatever_the_durability(durability: str) -> None:
    graph = _pipeline(stops_after="a").compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": f"dur-{durability}"}}
    with pytest.raises(GraphDrained):
        graph.invoke({"done": []}, cfg, durability=durability, control=RunControl())
    assert graph.invoke(None, cfg, durability=durability) == {"done": ["a", "b", "c"]}


def test_breakpoint_before_the_next_step_wins_over_the_drain() -> None:
    graph = _pipeline(stops_after="a").compile(checkpointer=InMemorySaver(), interrupt_before=["b"])
    cfg = {"configurable": {"thread_id": "bp"}}
    assert graph.invoke({"done": []}, cfg, control=RunControl()) == {"done": ["a"]}
    assert graph.get_state(cfg).next == ("b",)
    assert graph.invoke(None, cfg, interrupt_before=[]) == {"done": ["a", "b", "c"]}


def test_drain_requested_inside_a_subgraph_stops_the_parent() -> None:
    control = RunControl()
    child = _pipeline(stops_after="a", control=control).compile(checkpointer=True)
    parent = (
        StateGraph(Steps)
        .add_node("child", child)
        .add_node("after", lambda s: {"done": [*s["done"], "after"]})
        .add_edge(START, "child")
        .add_edge("child", "after")
        .compile(checkpointer=InMemorySaver())
    )
    cfg = {"configurable": {"thread_id": "sub"}}
    with pytest.raises(GraphDrained, match="deploy"):
        parent.invoke({"done": []}, cfg, control=control)
    assert parent.get_state(cfg).next == ("child",)
    assert parent.invoke(None, cfg) == {"done": ["a", "b", "c", "after"]}


def test_drain_from_another_thread_while_a_node_runs() -> None:
    started = threading.Event()
    release = threading.Event()

    def slow(state: Steps) -> Steps:
        started.set()
        assert release.wait(5)
        return {"done": ["slow"]}

    graph = (
        StateGraph(Steps)
        .add_node("slow", slow)
        .add_node("next", lambda s: {"done": [*s["done"], "next"]})
        .add_edge(START, "slow")
        .add_edge("slow", "next")
        .compile(checkpointer=InMemorySaver())
    )
    control = RunControl()
    cfg = {"configurable": {"thread_id": "ext"}}
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            graph.invoke({"done": []}, cfg, control=control)
        except GraphDrained as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    assert started.wait(5)
    control.request_drain("sigterm")
    release.set()
    worker.join(10)
    assert [type(e) for e in outcome] == [GraphDrained]
    # the running node finished and was saved; the next one did not start
    assert graph.get_state(cfg).values == {"done": ["slow"]}


async def test_drain_from_another_task_while_an_async_node_runs() -> None:
    started = asyncio.Event()

    async def slow(state: Steps) -> Steps:
        started.set()
        await asyncio.sleep(0.05)
        return {"done": ["slow"]}

    graph = (
        StateGraph(Steps)
        .add_node("slow", slow)
        .add_node("next", lambda s: {"done": [*s["done"], "next"]})
        .add_edge(START, "slow")
        .add_edge("slow", "next")
        .compile()
    )
    control = RunControl()

    async def drain_soon() -> None:
        await started.wait()
        control.request_drain("sigterm")

    helper = asyncio.create_task(drain_soon())
    with pytest.raises(GraphDrained, match="sigterm"):
        await graph.ainvoke({"done": []}, control=control)
    await helper


def test_control_must_be_a_run_control() -> None:
    graph = _pipeline().compile()
    with pytest.raises(TypeError, match="control must be a RunControl"):
        graph.invoke({"done": []}, control="stop")  # type: ignore[arg-type]


def test_runtime_merge_keeps_the_control() -> None:
    control = RunControl()
    assert Runtime(control=control).merge(Runtime()).control is control


def test_signal_drain_controls_follow_the_signal_in_process() -> None:
    with SignalDrain(signals=[signal.SIGUSR1]) as drain:
        before = drain.control()
        assert not before.drain_requested
        os.kill(os.getpid(), signal.SIGUSR1)
        assert drain.received == "SIGUSR1"
        assert before.drain_requested and before.drain_reason == "SIGUSR1"
        after = drain.control()
        assert after.drain_requested
    assert signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL


def test_signal_drain_needs_the_main_thread() -> None:
    errors: list[BaseException] = []

    def install() -> None:
        try:
            SignalDrain().install()
        except RuntimeError as exc:
            errors.append(exc)

    t = threading.Thread(target=install)
    t.start()
    t.join()
    assert len(errors) == 1 and "main thread" in str(errors[0])


_WORKER = textwrap.dedent(
    """
    import sys, time
    from typing_extensions import TypedDict
    from stategraph.checkpoint.sqlite import SqliteSaver
    from stategraph.errors import GraphDrained
    from stategraph.graph import START, StateGraph
    from stategraph.runtime import SignalDrain

    class S(TypedDict, total=False):
        done: list

    def step(name):
        def node(state):
            if name == "a":
                print("ready", flush=True)
                time.sleep(1.0)  # SIGTERM arrives while this node runs
            return {"done": [*state.get("done", []), name]}
        return node

    b = StateGraph(S)
    for n in "abc":
        b.add_node(n, step(n))
    b.add_edge(START, "a").add_edge("a", "b").add_edge("b", "c")
    with SqliteSaver.from_conn_string(sys.argv[1]) as saver:
        graph = b.compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": "job-1"}}
        with SignalDrain() as drain:
            try:
                graph.invoke({"done": []}, cfg, control=drain.control())
                print("finished", flush=True)
            except GraphDrained as exc:
                print("drained", exc.reason, flush=True)
                sys.exit(3)
    """
)


@pytest.mark.slow
def test_sigterm_drains_a_worker_process_and_another_process_resumes(tmp_path: Path) -> None:
    db = str(tmp_path / "drain.sqlite")
    script = tmp_path / "worker.py"
    script.write_text(_WORKER)
    proc = subprocess.Popen(
        [sys.executable, str(script), db],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    assert out.strip() == "drained SIGTERM"

    from stategraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(db) as saver:
        graph = _pipeline().compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": "job-1"}}
        state = graph.get_state(cfg)
        assert state.values == {"done": ["a"]} and state.next == ("b",)
        assert graph.invoke(None, cfg) == {"done": ["a", "b", "c"]}


@pytest.mark.parametrize("drain", [False, True])
def test_a_subgraph_breakpoint_stops_the_parent_and_resume_continues_it(drain: bool) -> None:
    child = _pipeline(stops_after="a" if drain else None).compile(interrupt_before=["b"])
    parent = (
        StateGraph(Steps)
        .add_node("child", child)
        .add_edge(START, "child")
        .compile(checkpointer=InMemorySaver())
    )
    cfg = {"configurable": {"thread_id": f"sub-bp-{drain}"}}
    parent.invoke({"done": []}, cfg, control=RunControl())
    state = parent.get_state(cfg, subgraphs=True)
    assert state.next == ("child",)
    assert state.tasks[0].state.next == ("b",)
    assert parent.invoke(None, cfg) == {"done": ["a", "b", "c"]}
