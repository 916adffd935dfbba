"""Subgraphs: namespaces, their checkpoints, interrupts at depth, Command.PARENT.

Expected results were taken from LangGraph 1.x run as a black box on the same graphs.
"""

from __future__ import annotations

import asyncio
from typing import Any

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, StateGraph
from stategraph.types import Command, Interrupt, StateSnapshot, interrupt

from ._support import LogState, Runner, cfg, chain, recorder, shape, xxh


def namespaces(saver: InMemorySaver, thread: str) -> set[str]:
    """The checkpoint namespaces the saver holds for ``thread``."""
    return {t.config["configurable"]["checkpoint_ns"] for t in saver.list(cfg(thread))}


def two_level(calls: list[str]) -> tuple[Any, InMemorySaver]:
    """parent: p1 -> sub -> p2; sub: s1 -> inner -> s2; inner: i1 -> i2 (asks) -> i3."""
    inner = chain(["i1", "i2", "i3"], calls, ask="i2").compile()
    sub = chain(["s1", "inner", "s2"], calls, nodes={"inner": inner}).compile()
    saver = InMemorySaver()
    parent = chain(["p1", "sub", "p2"], calls, nodes={"sub": sub}).compile(checkpointer=saver)
    return parent, saver


def test_subgraph_interrupt_uses_subgraph_namespace(runner: Runner) -> None:
    calls: list[str] = []
    sub = chain(["s1", "s2"], calls, ask="s2").compile()
    saver = InMemorySaver()
    parent = chain(["p1", "sub", "p2"], calls, nodes={"sub": sub}).compile(checkpointer=saver)
    config = cfg("one-level")
    paused = runner.invoke(parent, {"log": []}, config)

    top = runner.get_state(parent, config)
    assert top.next == ("sub",)
    sub_ns = f"sub:{top.tasks[0].id}"
    # without subgraphs=True the task's state is the config to fetch the subgraph's state
    assert top.tasks[0].state == {
        "configurable": {"thread_id": "one-level", "checkpoint_ns": sub_ns}
    }
    assert namespaces(saver, "one-level") == {"", sub_ns}

    deep = runner.get_state(parent, config, subgraphs=True)
    sub_state = deep.tasks[0].state
    assert isinstance(sub_state, StateSnapshot)
    assert sub_state.values == {"log": ["p1", "s1"]}
    assert sub_state.next == ("s2",)
    assert sub_state.config["configurable"]["checkpoint_ns"] == sub_ns
    s2_task = sub_state.tasks[0]
    expected = Interrupt(value="s2?", id=xxh(f"{sub_ns}|s2:{s2_task.id}"))
    assert s2_task.interrupts == (expected,)
    assert paused == {"log": ["p1"], "__interrupt__": [expected]}
    assert top.interrupts == (expected,)
    assert calls == ["p1", "s1", "s2"]

    calls.clear()
    final = runner.invoke(parent, Command(resume="S"), config)
    # s1 is not re-run: the subgraph resumes from its own checkpoint
    assert calls == ["s2", "p2"]
    assert final == {"log": ["p1", "p1", "s1", "s2=S", "p2"]}


def test_two_level_interrupt_surfaces_and_resumes_from_inner_checkpoint(runner: Runner) -> None:
    calls: list[str] = []
    parent, saver = two_level(calls)
    config = cfg("two-level")
    paused = runner.invoke(parent, {"log": []}, config)
    assert calls == ["p1", "s1", "i1", "i2"]

    deep = runner.get_state(parent, config, subgraphs=True)
    sub_ns = f"sub:{deep.tasks[0].id}"
    sub_state = deep.tasks[0].state
    assert sub_state.values == {"log": ["p1", "s1"]}
    assert sub_state.next == ("inner",)
    inner_task = sub_state.tasks[0]
    inner_ns = f"{sub_ns}|inner:{inner_task.id}"
    inner_state = inner_task.state
    assert isinstance(inner_state, StateSnapshot)
    assert inner_state.config["configurable"]["checkpoint_ns"] == inner_ns
    assert inner_state.values == {"log": ["p1", "s1", "i1"]}
    assert inner_state.next == ("i2",)
    expected = Interrupt(value="i2?", id=xxh(f"{inner_ns}|i2:{inner_state.tasks[0].id}"))
    assert paused == {"log": ["p1"], "__interrupt__": [expected]}
    assert namespaces(saver, "two-level") == {"", sub_ns, inner_ns}

    calls.clear()
    chunks = runner.stream(parent, Command(resume="X"), config, subgraphs=True)
    assert calls == ["i2", "i3", "s2", "p2"]
    sub_t, inner_t = (sub_ns,), (sub_ns, inner_ns.split("|")[1])
    assert chunks == [
        (inner_t, {"i2": {"log": ["i2=X"]}}),
        (inner_t, {"i3": {"log": ["i3"]}}),
        (sub_t, {"inner": {"log": ["p1", "s1", "i1", "i2=X", "i3"]}}),
        (sub_t, {"s2": {"log": ["s2"]}}),
        ((), {"sub": {"log": ["p1", "s1", "p1", "s1", "i1", "i2=X", "i3", "s2"]}}),
        ((), {"p2": {"log": ["p2"]}}),
    ]
    assert runner.get_state(parent, config).next == ()


def test_stream_subgraphs_first_run_prefixes_namespaces(runner: Runner) -> None:
    calls: list[str] = []
    parent, _ = two_level(calls)
    config = cfg("stream-first")
    chunks = runner.stream(parent, {"log": []}, config, subgraphs=True)
    deep = runner.get_state(parent, config, subgraphs=True)
    sub_ns = f"sub:{deep.tasks[0].id}"
    inner_part = f"inner:{deep.tasks[0].state.tasks[0].id}"
    interrupt_id = deep.tasks[0].state.tasks[0].state.tasks[0].interrupts[0].id
    pending = (Interrupt(value="i2?", id=interrupt_id),)
    assert chunks == [
        ((), {"p1": {"log": ["p1"]}}),
        ((sub_ns,), {"s1": {"log": ["s1"]}}),
        ((sub_ns, inner_part), {"i1": {"log": ["i1"]}}),
        # each level the interrupt passes through reports it
        ((sub_ns, inner_part), {"__interrupt__": pending}),
        ((sub_ns,), {"__interrupt__": pending}),
        ((), {"__interrupt__": pending}),
    ]


def test_get_subgraphs_lists_nested_graphs() -> None:
    parent, _ = two_level([])
    assert [name for name, _ in parent.get_subgraphs()] == ["sub"]
    nested = dict(parent.get_subgraphs(recurse=True))
    assert list(nested) == ["sub", "sub|inner"]
    assert [name for name, _ in nested["sub"].get_subgraphs()] == ["inner"]
    assert [name for name, _ in parent.get_subgraphs(namespace="sub")] == ["sub"]
    assert list(parent.get_subgraphs(namespace="p1")) == []


class CountState(LogState, total=False):
    n: int


def _counter_sub(checkpointer: Any, calls: list[str]) -> Any:
    def s1(state: CountState) -> dict[str, Any]:
        calls.append("s1")
        return {"log": ["s1"], "n": state.get("n", 0) + 1}

    builder = StateGraph(CountState)
    builder.add_node("s1", s1)
    builder.add_edge(START, "s1")
    return builder.compile(checkpointer=checkpointer)


def _counter_parent(sub: Any, saver: InMemorySaver) -> Any:
    builder = StateGraph(CountState)
    builder.add_node("sub", sub)
    builder.add_edge(START, "sub")
    return builder.compile(checkpointer=saver)


def _sub_checkpoints(saver: InMemorySaver, thread: str) -> list[tuple[str, int, Any]]:
    return [
        (
            t.config["configurable"]["checkpoint_ns"],
            t.metadata["step"],
            t.checkpoint["channel_values"].get("n"),
        )
        for t in saver.list(cfg(thread))
        if t.config["configurable"]["checkpoint_ns"]
    ]


def test_subgraph_checkpointer_none_inherits_per_task_namespace(runner: Runner) -> None:
    saver = InMemorySaver()
    parent = _counter_parent(_counter_sub(None, []), saver)
    config = cfg("inherit")
    assert runner.invoke(parent, {"log": [], "n": 0}, config) == {"log": ["s1"], "n": 1}
    assert runner.invoke(parent, {"log": []}, config) == {"log": ["s1", "s1", "s1"], "n": 2}
    subs = _sub_checkpoints(saver, "inherit")
    per_ns: dict[str, list[int]] = {}
    for ns, step, _ in subs:
        per_ns.setdefault(ns, []).append(step)
    # one fresh namespace per parent task, each a complete short history
    assert len(per_ns) == 2
    assert all(ns.startswith("sub:") and len(ns) == len("sub:") + 36 for ns in per_ns)
    assert all(steps == [1, 0, -1] for steps in per_ns.values())
    assert sorted(n for _, step, n in subs if step == 1) == [1, 2]


def test_subgraph_checkpointer_true_keeps_own_history_across_runs(runner: Runner) -> None:
    saver = InMemorySaver()
    sub = _counter_sub(True, [])
    parent = _counter_parent(sub, saver)
    config = cfg("own")
    assert runner.invoke(parent, {"log": [], "n": 0}, config) == {"log": ["s1"], "n": 1}
    # the subgraph continues its own thread: its log already holds the first run
    assert runner.invoke(parent, {"log": []}, config) == {"log": ["s1", "s1", "s1", "s1"], "n": 2}
    assert namespaces(saver, "own") == {"", "sub"}
    assert [(ns, step) for ns, step, _ in _sub_checkpoints(saver, "own")] == [
        ("sub", 4),
        ("sub", 3),
        ("sub", 2),
        ("sub", 1),
        ("sub", 0),
        ("sub", -1),
    ]


def test_subgraph_checkpointer_true_saved_values(runner: Runner) -> None:
    saver = InMemorySaver()
    parent = _counter_parent(_counter_sub(True, []), saver)
    config = cfg("own-values")
    runner.invoke(parent, {"log": [], "n": 0}, config)
    runner.invoke(parent, {"log": []}, config)
    assert [(step, n) for _, step, n in _sub_checkpoints(saver, "own-values")] == [
        (4, 2),
        (3, 1),
        (2, 1),
        (1, 1),
        (0, 0),
        (-1, None),
    ]


def test_subgraph_checkpointer_false_saves_nothing(runner: Runner) -> None:
    saver = InMemorySaver()
    parent = _counter_parent(_counter_sub(False, []), saver)
    config = cfg("none-saved")
    assert runner.invoke(parent, {"log": [], "n": 0}, config) == {"log": ["s1"], "n": 1}
    assert runner.invoke(parent, {"log": []}, config) == {"log": ["s1", "s1", "s1"], "n": 2}
    assert namespaces(saver, "none-saved") == {""}


def test_subgraph_with_own_checkpointer_interrupts_and_resumes(runner: Runner) -> None:
    calls: list[str] = []
    sub = chain(["s1", "s2"], calls, ask="s2").compile(checkpointer=True)
    saver = InMemorySaver()
    parent = chain(["p1", "sub"], calls, nodes={"sub": sub}).compile(checkpointer=saver)
    config = cfg("own-interrupt")
    paused = runner.invoke(parent, {"log": []}, config)
    assert [i.value for i in paused["__interrupt__"]] == ["s2?"]
    assert namespaces(saver, "own-interrupt") == {"", "sub"}
    calls.clear()
    final = runner.invoke(parent, Command(resume="ok"), config)
    assert calls == ["s2"]
    assert final == {"log": ["p1", "p1", "s1", "s2=ok"]}


def test_command_parent_navigates_the_parent_graph(runner: Runner) -> None:
    calls: list[str] = []

    def child(state: LogState) -> Command[Any]:
        calls.append("child")
        return Command(graph=Command.PARENT, goto="target", update={"log": ["from-child"]})

    sub_builder = StateGraph(LogState)
    sub_builder.add_node("child", child)
    sub_builder.add_node("after_child", recorder("after_child", calls))
    sub_builder.add_edge(START, "child")
    sub_builder.add_edge("child", "after_child")
    sub = sub_builder.compile()

    builder = StateGraph(LogState)
    builder.add_node("sub", sub, destinations=("target",))
    builder.add_node("target", recorder("target", calls))
    builder.add_node("other", recorder("other", calls))
    builder.add_edge(START, "sub")
    builder.add_edge("target", END)
    parent = builder.compile(checkpointer=InMemorySaver())
    config = cfg("parent-cmd")
    assert runner.invoke(parent, {"log": []}, config) == {"log": ["from-child", "target"]}
    assert calls == ["child", "target"]
    assert shape(runner.history(parent, config)) == [
        ("loop", 2, ()),
        ("loop", 1, ("target",)),
        ("loop", 0, ("sub",)),
        ("input", -1, ("__start__",)),
    ]


def test_command_parent_after_interrupt_in_subgraph(runner: Runner) -> None:
    calls: list[str] = []

    def decide(state: LogState) -> Command[Any]:
        calls.append("decide")
        where = interrupt("where?")
        return Command(graph=Command.PARENT, goto=where, update={"log": [f"chose {where}"]})

    sub_builder = StateGraph(LogState)
    sub_builder.add_node("decide", decide)
    sub_builder.add_edge(START, "decide")
    builder = StateGraph(LogState)
    builder.add_node("sub", sub_builder.compile(), destinations=("left", "right"))
    builder.add_node("left", recorder("left", calls))
    builder.add_node("right", recorder("right", calls))
    builder.add_edge(START, "sub")
    parent = builder.compile(checkpointer=InMemorySaver())
    config = cfg("parent-after-interrupt")
    paused = runner.invoke(parent, {"log": []}, config)
    assert [i.value for i in paused["__interrupt__"]] == ["where?"]
    final = runner.invoke(parent, Command(resume="right"), config)
    assert final == {"log": ["chose right", "right"]}
    assert calls == ["decide", "decide", "right"]


def test_graph_called_inside_a_node_function_interrupts_and_resumes(runner: Runner) -> None:
    calls: list[str] = []
    inner = chain(["i1", "i2"], calls, ask="i2").compile()

    def caller(state: LogState) -> dict[str, list[str]]:
        calls.append("caller")
        out = inner.invoke({"log": ["x"]})
        return {"log": out["log"]}

    builder = StateGraph(LogState)
    builder.add_node("caller", caller)
    builder.add_edge(START, "caller")
    saver = InMemorySaver()
    graph = builder.compile(checkpointer=saver)
    config = cfg("called")
    paused = runner.invoke(graph, {"log": []}, config)
    assert calls == ["caller", "i1", "i2"]
    top = runner.get_state(graph, config)
    assert top.next == ("caller",)
    caller_ns = f"caller:{top.tasks[0].id}"
    assert namespaces(saver, "called") == {"", caller_ns}
    assert paused["log"] == []
    assert [i.value for i in paused["__interrupt__"]] == ["i2?"]

    calls.clear()
    final = runner.invoke(graph, Command(resume="Y"), config)
    # the inner graph resumes from its checkpoint: i1 is not re-run
    assert calls == ["caller", "i2"]
    assert final == {"log": ["x", "i1", "i2=Y"]}


async def test_graph_awaited_inside_async_node_interrupts_and_resumes() -> None:
    calls: list[str] = []
    inner = chain(["i1", "i2"], calls, ask="i2").compile()

    async def caller(state: LogState) -> dict[str, list[str]]:
        calls.append("caller")
        await asyncio.sleep(0)
        out = await inner.ainvoke({"log": ["x"]})
        return {"log": out["log"]}

    builder = StateGraph(LogState)
    builder.add_node("caller", caller)
    builder.add_edge(START, "caller")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("awaited")
    paused = await graph.ainvoke({"log": []}, config)
    assert [i.value for i in paused["__interrupt__"]] == ["i2?"]
    calls.clear()
    assert await graph.ainvoke(Command(resume="Z"), config) == {"log": ["x", "i1", "i2=Z"]}
    assert calls == ["caller", "i2"]


async def test_async_subgraph_nodes_interrupt_at_depth() -> None:
    calls: list[str] = []

    def make(name: str, ask: bool = False) -> Any:
        async def node(state: LogState) -> dict[str, list[str]]:
            calls.append(name)
            await asyncio.sleep(0)
            if ask:
                return {"log": [f"{name}={interrupt(name + '?')}"]}
            return {"log": [name]}

        return node

    inner_b = StateGraph(LogState)
    inner_b.add_node("i1", make("i1"))
    inner_b.add_node("i2", make("i2", ask=True))
    inner_b.add_edge(START, "i1")
    inner_b.add_edge("i1", "i2")
    sub_b = StateGraph(LogState)
    sub_b.add_node("s1", make("s1"))
    sub_b.add_node("inner", inner_b.compile())
    sub_b.add_edge(START, "s1")
    sub_b.add_edge("s1", "inner")
    parent_b = StateGraph(LogState)
    parent_b.add_node("sub", sub_b.compile())
    parent_b.add_edge(START, "sub")
    parent = parent_b.compile(checkpointer=InMemorySaver())
    config = cfg("async-depth")
    paused = await parent.ainvoke({"log": []}, config)
    assert [i.value for i in paused["__interrupt__"]] == ["i2?"]
    deep = await parent.aget_state(config, subgraphs=True)
    assert deep.tasks[0].state.tasks[0].state.next == ("i2",)
    calls.clear()
    final = await parent.ainvoke(Command(resume="deep"), config)
    assert calls == ["i2"]
    assert final == {"log": ["s1", "s1", "i1", "i2=deep"]}


def test_parallel_subgraphs_interrupt_and_resume_by_id(runner: Runner) -> None:
    calls: list[str] = []
    left = chain(["l1", "l2"], calls, ask="l2").compile()
    right = chain(["r1"], calls, ask="r1").compile()
    builder = StateGraph(LogState)
    builder.add_node("left", left)
    builder.add_node("right", right)
    builder.add_edge(START, "left")
    builder.add_edge(START, "right")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("parallel-subs")
    paused = runner.invoke(graph, {"log": []}, config)
    ids = {i.value: i.id for i in paused["__interrupt__"]}
    assert set(ids) == {"l2?", "r1?"}
    calls.clear()
    after_right = runner.invoke(graph, Command(resume={ids["r1?"]: "R"}), config)
    assert after_right["log"] == ["r1=R"]
    assert [i.value for i in after_right["__interrupt__"]] == ["l2?"]
    assert "l1" not in calls
    calls.clear()
    final = runner.invoke(graph, Command(resume={ids["l2?"]: "L"}), config)
    assert calls == ["l2"]
    assert final == {"log": ["l1", "l2=L", "r1=R"]}
