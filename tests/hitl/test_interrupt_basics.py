"""interrupt() inside nodes: how it surfaces, its ids, and resuming with Command."""

from __future__ import annotations

import asyncio
import contextvars
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.errors import GraphInterrupt
from stategraph.graph import START, StateGraph
from stategraph.types import Command, Interrupt, interrupt

from ._support import Runner, cfg, shape, xxh

# the same assertions on threads, a local Ray and a local Dask cluster
pytestmark = pytest.mark.executors


class AB(TypedDict, total=False):
    a: str
    b: str


def ask_graph(calls: list[Any], *, checkpointer: Any = True) -> Any:
    """START -> ask (interrupts "q1", writes a) -> after (appends to b)."""

    def ask(state: AB) -> dict[str, str]:
        calls.append(("ask", dict(state)))
        return {"a": interrupt("q1")}

    def after(state: AB) -> dict[str, str]:
        calls.append(("after", dict(state)))
        return {"b": state.get("b", "") + "+after"}

    def other(state: AB) -> dict[str, str]:
        calls.append(("other", dict(state)))
        return {"b": state.get("b", "") + "+other"}

    builder = StateGraph(AB)
    builder.add_node("ask", ask)
    builder.add_node("after", after)
    builder.add_node("other", other)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "after")
    saver = InMemorySaver() if checkpointer is True else checkpointer
    return builder.compile(checkpointer=saver)


def test_first_interrupt_surfaces_in_result_with_task_ns_id(runner: Runner) -> None:
    calls: list[Any] = runner.log()
    graph = ask_graph(calls)
    config = cfg("basic")
    result = runner.invoke(graph, {"a": "0"}, config)

    snapshot = runner.get_state(graph, config)
    assert snapshot.next == ("ask",)
    task_id = snapshot.tasks[0].id
    expected = Interrupt(value="q1", id=xxh(f"ask:{task_id}"))
    assert set(result) == {"a", "__interrupt__"}
    assert result["a"] == "0"
    assert list(result["__interrupt__"]) == [expected]
    assert snapshot.interrupts == (expected,)
    assert snapshot.tasks[0].name == "ask"
    assert snapshot.tasks[0].interrupts == (expected,)
    assert snapshot.values == {"a": "0"}
    assert calls == [("ask", {"a": "0"})]


def test_interrupt_raises_graph_interrupt_on_first_call(runner: Runner) -> None:
    seen: list[GraphInterrupt] = runner.log()

    def ask(state: AB) -> dict[str, str]:
        try:
            answer = interrupt({"question": "name?"})
        except GraphInterrupt as exc:
            seen.append(exc)
            raise
        return {"a": answer}

    builder = StateGraph(AB)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("raises")
    result = runner.invoke(graph, {"a": "0"}, config)
    assert len(seen) == 1
    carried = list(seen[0].args[0])
    assert [i.value for i in carried] == [{"question": "name?"}]
    assert list(result["__interrupt__"]) == carried

    final = runner.invoke(graph, Command(resume="Ada"), config)
    assert final == {"a": "Ada"}
    assert len(seen) == 1


async def test_async_node_interrupt_and_resume() -> None:
    runs: list[str] = []

    async def ask(state: AB) -> dict[str, str]:
        runs.append("ask")
        await asyncio.sleep(0)
        answer = interrupt("async?")
        await asyncio.sleep(0)
        return {"a": f"got {answer}"}

    builder = StateGraph(AB)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("async-node")

    paused = await graph.ainvoke({"a": "0"}, config)
    snapshot = await graph.aget_state(config)
    expected = Interrupt(value="async?", id=xxh(f"ask:{snapshot.tasks[0].id}"))
    assert paused == {"a": "0", "__interrupt__": [expected]}

    chunks = [c async for c in graph.astream(Command(resume="yes"), config)]
    assert chunks == [{"ask": {"a": "got yes"}}]
    assert runs == ["ask", "ask"]
    assert (await graph.aget_state(config)).next == ()


def _threaded_ask(calls: list[Any]) -> Any:
    """A node that calls interrupt() from a worker thread running a copied context."""

    def ask(state: AB) -> dict[str, str]:
        calls.append("ask")
        ctx = contextvars.copy_context()
        with ThreadPoolExecutor(max_workers=1) as pool:
            answer = pool.submit(ctx.run, interrupt, "from thread").result()
        return {"a": answer}

    builder = StateGraph(AB)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    return builder.compile(checkpointer=InMemorySaver())


def test_interrupt_inside_thread_with_copied_context(runner: Runner) -> None:
    calls: list[Any] = runner.log()
    graph = _threaded_ask(calls)
    config = cfg("threaded")
    paused = runner.invoke(graph, {"a": "0"}, config)
    snapshot = runner.get_state(graph, config)
    expected = Interrupt(value="from thread", id=xxh(f"ask:{snapshot.tasks[0].id}"))
    assert paused == {"a": "0", "__interrupt__": [expected]}

    final = runner.invoke(graph, Command(resume="thread answer"), config)
    assert final == {"a": "thread answer"}
    assert calls == ["ask", "ask"]


async def test_interrupt_inside_executor_from_async_node() -> None:
    async def ask(state: AB) -> dict[str, str]:
        ctx = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        answer = await loop.run_in_executor(None, ctx.run, interrupt, "exec?")
        return {"a": answer}

    builder = StateGraph(AB)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("executor")
    paused = await graph.ainvoke({"a": "0"}, config)
    assert [i.value for i in paused["__interrupt__"]] == ["exec?"]
    assert await graph.ainvoke(Command(resume="ok"), config) == {"a": "ok"}


def test_stream_updates_yields_interrupt_tuple(runner: Runner) -> None:
    graph = ask_graph([])
    config = cfg("stream-updates")
    chunks = runner.stream(graph, {"a": "0"}, config)
    task_id = runner.get_state(graph, config).tasks[0].id
    assert chunks == [{"__interrupt__": (Interrupt(value="q1", id=xxh(f"ask:{task_id}")),)}]
    assert isinstance(chunks[0]["__interrupt__"], tuple)

    resumed = runner.stream(graph, Command(resume="A"), config)
    assert resumed == [{"ask": {"a": "A"}}, {"after": {"b": "+after"}}]


def test_stream_values_ends_with_interrupt_chunk(runner: Runner) -> None:
    graph = ask_graph([])
    config = cfg("stream-values")
    chunks = runner.stream(graph, {"a": "0"}, config, stream_mode="values")
    task_id = runner.get_state(graph, config).tasks[0].id
    expected = Interrupt(value="q1", id=xxh(f"ask:{task_id}"))
    # as in LangGraph: the input state, then the state with the pending interrupts
    assert chunks == [{"a": "0"}, {"a": "0", "__interrupt__": (expected,)}]


def test_stream_several_modes_report_interrupt_in_updates_and_values(runner: Runner) -> None:
    graph = ask_graph([])
    config = cfg("stream-multi")
    chunks = runner.stream(graph, {"a": "0"}, config, stream_mode=["updates", "values"])
    task_id = runner.get_state(graph, config).tasks[0].id
    interrupts = (Interrupt(value="q1", id=xxh(f"ask:{task_id}")),)
    assert chunks == [
        ("values", {"a": "0"}),
        ("updates", {"__interrupt__": interrupts}),
        ("values", {"a": "0", "__interrupt__": interrupts}),
    ]


def test_resume_reruns_node_from_start(runner: Runner) -> None:
    calls: list[Any] = runner.log()
    graph = ask_graph(calls)
    config = cfg("rerun")
    runner.invoke(graph, {"a": "0"}, config)
    final = runner.invoke(graph, Command(resume="A"), config)
    assert final == {"a": "A", "b": "+after"}
    assert calls == [
        ("ask", {"a": "0"}),
        ("ask", {"a": "0"}),
        ("after", {"a": "A"}),
    ]
    snapshot = runner.get_state(graph, config)
    assert snapshot.next == ()
    assert snapshot.interrupts == ()
    assert snapshot.tasks == ()


def test_three_interrupts_answered_one_invoke_at_a_time(runner: Runner) -> None:
    seen: list[list[str]] = runner.log()

    def form(state: AB) -> dict[str, str]:
        answers: list[str] = []
        try:
            answers.append(interrupt("name?"))
            answers.append(interrupt("age?"))
            answers.append(interrupt("email?"))
        finally:
            # what this run of the node had received when it stopped
            seen.append(list(answers))
        return {"a": "/".join(answers)}

    builder = StateGraph(AB)
    builder.add_node("form", form)
    builder.add_edge(START, "form")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("three")

    first = runner.invoke(graph, {"a": "0"}, config)
    task_id = runner.get_state(graph, config).tasks[0].id
    ns = f"form:{task_id}"
    assert first == {"a": "0", "__interrupt__": [Interrupt(value="name?", id=xxh(ns))]}

    second = runner.invoke(graph, Command(resume="Ada"), config)
    assert runner.get_state(graph, config).tasks[0].id == task_id
    assert second == {"a": "0", "__interrupt__": [Interrupt(value="age?", id=xxh(f"{ns}|1"))]}

    third = runner.invoke(graph, Command(resume="36"), config)
    assert third == {"a": "0", "__interrupt__": [Interrupt(value="email?", id=xxh(f"{ns}|2"))]}
    assert runner.get_state(graph, config).interrupts == (
        Interrupt(value="email?", id=xxh(f"{ns}|2")),
    )

    final = runner.invoke(graph, Command(resume="ada@example.org"), config)
    assert final == {"a": "Ada/36/ada@example.org"}
    assert seen == [[], ["Ada"], ["Ada", "36"], ["Ada", "36", "ada@example.org"]]


def test_ids_of_distinct_tasks_differ_and_match_their_namespaces(runner: Runner) -> None:
    graph = ask_graph([])
    ids = []
    for thread in ("t-one", "t-two"):
        config = cfg(thread)
        result = runner.invoke(graph, {"a": "0"}, config)
        task_id = runner.get_state(graph, config).tasks[0].id
        assert result["__interrupt__"][0].id == xxh(f"ask:{task_id}")
        ids.append(result["__interrupt__"][0].id)
    assert ids[0] != ids[1]


def test_without_checkpointer_interrupt_surfaces_but_cannot_resume(runner: Runner) -> None:
    calls: list[Any] = runner.log()
    graph = ask_graph(calls, checkpointer=None)
    result = runner.invoke(graph, {"a": "0"})
    assert result["a"] == "0"
    assert [i.value for i in result["__interrupt__"]] == ["q1"]
    assert len(result["__interrupt__"][0].id) == 32

    for config in (None, cfg("no-saver")):
        with pytest.raises(RuntimeError) as info:
            runner.invoke(graph, Command(resume="A"), config)
        message = str(info.value)
        assert "checkpointer" in message
        assert "thread_id" in message
    assert calls == [("ask", {"a": "0"})]


def test_interrupt_outside_a_node_is_a_clear_error() -> None:
    with pytest.raises(RuntimeError, match=r"interrupt\(\)"):
        interrupt("nobody is listening")


def test_command_update_and_goto_as_input_on_interrupted_thread(runner: Runner) -> None:
    calls: list[Any] = runner.log()
    graph = ask_graph(calls)
    config = cfg("update-goto")
    runner.invoke(graph, {"a": "0"}, config)
    calls.clear()

    # LangGraph: the update applies, "other" runs, the interrupted node asks again
    result = runner.invoke(graph, Command(update={"b": "upd"}, goto="other"), config)
    assert result["a"] == "0"
    assert result["b"] == "upd+other"
    assert [i.value for i in result["__interrupt__"]] == ["q1"]
    # ask and other run in the same step, in no defined order
    assert sorted(calls) == [("ask", {"a": "0", "b": "upd"}), ("other", {"a": "0", "b": "upd"})]
    assert runner.get_state(graph, config).next == ("ask",)

    calls.clear()
    final = runner.invoke(graph, Command(resume="Z"), config)
    assert final == {"a": "Z", "b": "upd+other+after"}
    assert calls == [("ask", {"a": "0", "b": "upd"}), ("after", {"a": "Z", "b": "upd+other"})]


def test_command_update_with_resume(runner: Runner) -> None:
    calls: list[Any] = runner.log()
    graph = ask_graph(calls)
    config = cfg("update-resume")
    runner.invoke(graph, {"a": "0"}, config)
    calls.clear()
    final = runner.invoke(graph, Command(update={"b": "upd"}, resume="R"), config)
    assert final == {"a": "R", "b": "upd+after"}
    assert calls == [("ask", {"a": "0", "b": "upd"}), ("after", {"a": "R", "b": "upd"})]
    history = runner.history(graph, config)
    assert shape(history) == [
        ("loop", 2, ()),
        ("loop", 1, ("after",)),
        ("loop", 0, ("ask",)),
        ("input", -1, ("__start__",)),
    ]
    assert history[1].values == {"a": "R", "b": "upd"}


def test_command_goto_with_resume(runner: Runner) -> None:
    calls: list[Any] = runner.log()
    graph = ask_graph(calls)
    config = cfg("goto-resume")
    runner.invoke(graph, {"a": "0"}, config)
    calls.clear()
    final = runner.invoke(graph, Command(goto="other", resume="R"), config)
    assert final == {"a": "R", "b": "+other+after"}
    # ask and other run in the same step, in no defined order
    assert sorted(calls[:2]) == [("ask", {"a": "0"}), ("other", {"a": "0"})]
    assert calls[2:] == [("after", {"a": "R", "b": "+other"})]


def test_command_update_only_keeps_interrupt_and_shows_update(runner: Runner) -> None:
    calls: list[Any] = runner.log()
    graph = ask_graph(calls)
    config = cfg("update-only")
    runner.invoke(graph, {"a": "0"}, config)
    calls.clear()
    result = runner.invoke(graph, Command(update={"b": "upd"}), config)
    assert result["a"] == "0"
    assert result["b"] == "upd"
    assert [i.value for i in result["__interrupt__"]] == ["q1"]
    assert calls == [("ask", {"a": "0", "b": "upd"})]
    snapshot = runner.get_state(graph, config)
    assert snapshot.next == ("ask",)
    assert snapshot.values == {"a": "0", "b": "upd"}

    calls.clear()
    assert runner.invoke(graph, Command(resume="Z"), config) == {"a": "Z", "b": "upd+after"}
    assert calls == [("ask", {"a": "0", "b": "upd"}), ("after", {"a": "Z", "b": "upd"})]


def test_plain_input_on_interrupted_thread_starts_a_new_run(runner: Runner) -> None:
    calls: list[Any] = runner.log()

    def ask(state: AB) -> dict[str, str]:
        calls.append(dict(state))
        return {"b": interrupt("q:" + state["a"])}

    builder = StateGraph(AB)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("new-run")

    first = runner.invoke(graph, {"a": "first"}, config)
    second = runner.invoke(graph, {"a": "second"}, config)
    assert [i.value for i in first["__interrupt__"]] == ["q:first"]
    # the unfinished task is discarded; the node runs again on the new input
    assert second["a"] == "second"
    assert [i.value for i in second["__interrupt__"]] == ["q:second"]
    assert second["__interrupt__"][0].id != first["__interrupt__"][0].id
    assert calls == [{"a": "first"}, {"a": "second"}]
    history = runner.history(graph, config)
    assert shape(history) == [
        ("loop", 2, ("ask",)),
        ("input", 1, ("__start__",)),
        ("loop", 0, ("ask",)),
        ("input", -1, ("__start__",)),
    ]
    assert [s.values for s in history] == [
        {"a": "second"},
        {"a": "first"},
        {"a": "first"},
        {},
    ]

    calls.clear()
    final = runner.invoke(graph, Command(resume="R"), config)
    assert final == {"a": "second", "b": "R"}
    assert calls == [{"a": "second"}]


def test_replay_from_past_checkpoint_forks_and_asks_again(runner: Runner) -> None:
    calls: list[Any] = runner.log()

    def ask(state: AB) -> dict[str, str]:
        calls.append(dict(state))
        return {"a": interrupt("q")}

    builder = StateGraph(AB)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("replay")
    first = runner.invoke(graph, {"a": "0"}, config)["__interrupt__"][0]
    assert runner.invoke(graph, Command(resume="A"), config) == {"a": "A"}

    before_ask = [s for s in runner.history(graph, config) if s.next == ("ask",)]
    assert len(before_ask) == 1
    replayed = runner.invoke(graph, None, before_ask[0].config)
    # the replay runs in a new (forked) checkpoint: a new task, so a new interrupt id
    assert replayed["a"] == "0"
    assert [i.value for i in replayed["__interrupt__"]] == ["q"]
    assert replayed["__interrupt__"][0].id != first.id
    task_id = runner.get_state(graph, config).tasks[0].id
    assert replayed["__interrupt__"][0].id == xxh(f"ask:{task_id}")

    assert runner.invoke(graph, Command(resume="B"), config) == {"a": "B"}
    assert shape(runner.history(graph, config)) == [
        ("loop", 2, ()),
        ("fork", 1, ("ask",)),
        ("loop", 1, ()),
        ("loop", 0, ("ask",)),
        ("input", -1, ("__start__",)),
    ]
