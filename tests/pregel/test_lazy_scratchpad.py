"""A task builds its interrupt bookkeeping (the scratchpad) only when something uses it.

Most nodes never call ``interrupt()`` nor a ``@task``: preparing their tasks must not
build a scratchpad for each. The one built on first use must be the one an eager build
gave: the task's step and stop, its node name, and the run's resume answers when the
task belongs to the step being resumed.
"""

from __future__ import annotations

from typing import Any, TypedDict

from stategraph._context import CURRENT_TASK
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, StateGraph
from stategraph.types import Command, interrupt


class State(TypedDict):
    seen: list[Any]


def test_a_plain_node_builds_no_scratchpad() -> None:
    built: list[Any] = []

    def plain(state: State) -> dict[str, Any]:
        ctx = CURRENT_TASK.get()
        assert ctx is not None
        built.append(ctx.built_scratchpad)
        return {"seen": [*state["seen"], "plain"]}

    builder = StateGraph(State)
    builder.add_node("plain", plain)
    builder.add_edge(START, "plain")
    builder.add_edge("plain", END)
    assert builder.compile().invoke({"seen": []}) == {"seen": ["plain"]}
    assert built == [None]


def test_the_scratchpad_built_on_first_use_has_the_tasks_step_and_answers() -> None:
    pads: list[tuple[int, int, str]] = []
    expected: list[tuple[int, int, str]] = []

    def first(state: State) -> dict[str, Any]:
        return {"seen": [*state["seen"], "first"]}

    def ask(state: State) -> dict[str, Any]:
        ctx = CURRENT_TASK.get()
        assert ctx is not None
        if not pads:
            # (resumed, the task has saved writes: its pad is rebuilt from them)
            assert ctx.built_scratchpad is None
        pad = ctx.scratchpad  # built here, on first use
        assert ctx.built_scratchpad is pad
        pads.append((pad.step, pad.stop, pad.node))
        loop = ctx.run[0].loop
        expected.append((ctx.config["metadata"]["langgraph_step"], loop.stop, "ask"))
        answer = interrupt("name?")
        return {"seen": [*state["seen"], answer]}

    builder = StateGraph(State)
    builder.add_node("first", first)
    builder.add_node("ask", ask)
    builder.add_edge(START, "first")
    builder.add_edge("first", "ask")
    builder.add_edge("ask", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}, "recursion_limit": 7}
    out = graph.invoke({"seen": []}, config)
    assert [i.value for i in out["__interrupt__"]] == ["name?"]
    # the answer reaches the task of the resumed step through the lazily built pad
    assert graph.invoke(Command(resume="ada"), config) == {"seen": ["first", "ada"]}
    # the step the task runs in, the run's last allowed step, the node's name
    assert pads == expected
    assert [p[0] for p in pads] == [2, 2]


def test_threads_asking_at_once_get_one_scratchpad() -> None:
    import sys
    import threading

    from stategraph.pregel._task import Task

    task = Task(
        "t1",
        "n",
        ("__pregel_pull", "n"),
        None,
        None,
        (),
        "",
        None,
        (),
        pad_seed=(3, 9, None, False),
    )  # type: ignore[arg-type]
    seen: list[Any] = []
    start = threading.Barrier(8)

    def ask() -> None:
        start.wait()
        seen.append(task.scratchpad)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=ask) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert len({id(p) for p in seen}) == 1
    assert seen[0] is task.scratchpad
    assert (seen[0].step, seen[0].stop) == (3, 9)
