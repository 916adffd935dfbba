"""Run details: step_timeout, failures and cancellation, live streaming, bad settings."""

from __future__ import annotations

import asyncio
import operator
import threading
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.channels import UntrackedValue
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.errors import NodeCancelledError, ParentCommand
from stategraph.graph import START, StateGraph
from stategraph.types import Command, Send, StreamWriter, TimeoutPolicy


class Box(TypedDict, total=False):
    items: Annotated[list[str], operator.add]


def _fan_out(**nodes: Any) -> Any:
    b = StateGraph(Box)
    for name, fn in nodes.items():
        b.add_node(name, fn)
        b.add_edge(START, name)
    return b.compile()


async def test_async_failure_cancels_running_siblings_at_once() -> None:
    cancelled = asyncio.Event()

    async def slow(state: Box) -> Box:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {"items": ["slow"]}

    async def bad(state: Box) -> Box:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        await asyncio.wait_for(_fan_out(slow=slow, bad=bad).ainvoke({"items": []}), 10)
    assert cancelled.is_set()


async def test_node_raising_cancelled_error_fails_the_run_naming_it() -> None:
    async def quits(state: Box) -> Box:
        raise asyncio.CancelledError("gave up")

    async def fine(state: Box) -> Box:
        return {"items": ["fine"]}

    with pytest.raises(NodeCancelledError) as info:
        await _fan_out(quits=quits, fine=fine).ainvoke({"items": []})
    assert info.value.node == "quits"
    assert isinstance(info.value.__cause__, asyncio.CancelledError)


async def test_caller_cancellation_still_cancels_the_run() -> None:
    started = asyncio.Event()

    async def forever(state: Box) -> Box:
        started.set()
        await asyncio.sleep(30)
        return {}

    run = asyncio.ensure_future(_fan_out(forever=forever).ainvoke({"items": []}))
    await started.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run


async def test_step_timeout_cancels_the_step_even_while_the_caller_lingers() -> None:
    cancelled = asyncio.Event()

    async def long(state: Box) -> Box:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {"items": ["long"]}

    async def short(state: Box) -> Box:
        return {"items": ["short"]}

    graph = _fan_out(long=long, short=short)
    graph.step_timeout = 0.3
    with pytest.raises(asyncio.TimeoutError, match="step_timeout"):
        async for chunk in graph.astream({"items": []}, stream_mode="updates"):
            assert chunk == {"short": {"items": ["short"]}}
            await asyncio.sleep(0.5)  # the consumer is slower than the limit
    assert cancelled.is_set()


def test_step_timeout_in_the_sync_shell() -> None:
    release = threading.Event()

    def stuck(state: Box) -> Box:
        release.wait(10)
        return {}

    graph = _fan_out(stuck=stuck)
    graph.step_timeout = 0.1
    try:
        with pytest.raises(TimeoutError, match="still running: stuck"):
            graph.invoke({"items": []})
    finally:
        release.set()


def test_custom_chunks_of_a_sync_node_reach_the_caller_while_it_runs() -> None:
    seen_first = threading.Event()

    def talks(state: Box, writer: StreamWriter) -> Box:
        writer("before")
        # True only if the caller got "before" while this node is still running
        return {"items": [str(seen_first.wait(10))]}

    graph = (
        StateGraph(Box)
        .add_node("talks", talks)
        .add_edge(START, "talks")
        .compile(checkpointer=InMemorySaver())
    )
    out = []
    for mode, chunk in graph.stream(
        {"items": []}, {"configurable": {"thread_id": "s"}}, stream_mode=["custom", "values"]
    ):
        out.append((mode, chunk))
        if chunk == "before":
            seen_first.set()
    assert out[-1] == ("values", {"items": ["True"]})


@pytest.mark.parametrize("is_async", [False, True])
async def test_parent_command_at_the_top_level_raises_parent_command(is_async: bool) -> None:
    def jumps(state: Box) -> Command[Any]:
        return Command(graph=Command.PARENT, goto="elsewhere", update={"items": ["x"]})

    graph = StateGraph(Box).add_node("jumps", jumps).add_edge(START, "jumps").compile()
    with pytest.raises(ParentCommand) as info:
        if is_async:
            await graph.ainvoke({"items": []})
        else:
            graph.invoke({"items": []})
    command = info.value.args[0]
    assert command.goto == "elsewhere" and command.update == {"items": ["x"]}
    assert "no parent graph" in "".join(getattr(info.value, "__notes__", []))


class Lock:
    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.Lock()  # cannot be serialized


class S(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    handle: Annotated[Lock, UntrackedValue]


def test_untracked_values_inside_send_packets_are_not_saved() -> None:
    def open_handle(state: S) -> S:
        return {"log": ["opened"], "handle": Lock("h1")}

    def use(state: S) -> S:
        return {"log": [f"used {state['handle'].name}"], "handle": Lock("h2")}

    graph = (
        StateGraph(S)
        .add_node("open", open_handle)
        .add_node("use", use)
        .add_edge(START, "open")
        .add_conditional_edges("open", lambda s: [Send("use", s)])
        .compile(checkpointer=InMemorySaver())
    )
    cfg = {"configurable": {"thread_id": "u"}}
    out = graph.invoke({}, cfg)
    assert out["log"] == ["opened", "used h1"] and out["handle"].name == "h2"
    assert graph.get_state(cfg).values == {"log": ["opened", "used h1"]}


@pytest.mark.parametrize("bad", [0, -2, 1.5, "4", True])
async def test_bad_max_concurrency_is_rejected_before_the_run(bad: Any) -> None:
    ran: list[str] = []
    graph = _fan_out(a=lambda s: ran.append("a") or {}, b=lambda s: ran.append("b") or {})
    with pytest.raises(ValueError, match="max_concurrency must be a positive integer"):
        graph.invoke({"items": []}, {"max_concurrency": bad})
    with pytest.raises(ValueError, match="max_concurrency"):
        await graph.ainvoke({"items": []}, {"max_concurrency": bad})
    assert ran == []


async def test_max_concurrency_one_runs_every_task() -> None:
    graph = _fan_out(a=lambda s: {"items": ["a"]}, b=lambda s: {"items": ["b"]})
    assert graph.invoke({"items": []}, {"max_concurrency": 1}) == {"items": ["a", "b"]}
    assert await graph.ainvoke({"items": []}, {"max_concurrency": 1}) == {"items": ["a", "b"]}


def test_checkpointer_must_be_a_saver() -> None:
    builder = StateGraph(Box).add_node("a", lambda s: {}).add_edge(START, "a")
    with pytest.raises(TypeError, match="Invalid checkpointer provided"):
        builder.compile(checkpointer=object())


def test_savers_without_task_path_still_receive_writes() -> None:
    calls: list[tuple[Any, ...]] = []

    class OldSaver(InMemorySaver):
        def put_writes(self, config: Any, writes: Any, task_id: str) -> None:  # type: ignore[override]
            calls.append((task_id, [c for c, _ in writes]))
            super().put_writes(config, writes, task_id)

    graph = _fan_out(a=lambda s: {"items": ["a"]}, b=lambda s: {"items": ["b"]})
    graph = graph.copy(checkpointer=OldSaver())
    out = graph.invoke({"items": []}, {"configurable": {"thread_id": "old"}}, durability="sync")
    assert out == {"items": ["a", "b"]}
    assert any("items" in chans for _, chans in calls)


async def test_send_timeout_overrides_the_node_timeout() -> None:
    async def slow(state: dict[str, Any]) -> Box:
        await asyncio.sleep(1)
        return {"items": ["late"]}

    graph = (
        StateGraph(Box)
        .add_node("slow", slow, timeout=TimeoutPolicy(run_timeout=30))
        .add_conditional_edges(
            START, lambda s: [Send("slow", s, timeout=TimeoutPolicy(idle_timeout=0.05))]
        )
        .compile()
    )
    from stategraph.errors import NodeTimeoutError

    with pytest.raises(NodeTimeoutError) as info:
        await graph.ainvoke({"items": []})
    assert info.value.kind == "idle" and info.value.idle_timeout == 0.05


def test_send_timeout_to_a_sync_node_is_refused() -> None:
    graph = (
        StateGraph(Box)
        .add_node("plain", lambda s: {"items": ["x"]})
        .add_conditional_edges(START, lambda s: [Send("plain", s, timeout=1)])
        .compile()
    )
    with pytest.raises(ValueError, match="only supported for async nodes"):
        graph.invoke({"items": []})


def test_send_with_a_timeout_survives_the_serializer() -> None:
    from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer()
    packet = Send("worker", {"x": 1}, timeout=TimeoutPolicy(run_timeout=1, idle_timeout=2))
    back = serde.loads_typed(serde.dumps_typed(packet))
    assert back == packet and back.timeout == TimeoutPolicy(run_timeout=1, idle_timeout=2)
    plain = Send("worker", 3)
    assert serde.loads_typed(serde.dumps_typed(plain)) == plain
    assert Send("w", 1) != Send("w", 1, timeout=5)


@pytest.mark.parametrize("mode", ["tasks", "debug"])
def test_failed_task_result_is_streamed_before_the_error(mode: str) -> None:
    def broken(state: Box) -> Box:
        raise KeyError("missing")

    graph = StateGraph(Box).add_node("broken", broken).add_edge(START, "broken").compile()
    errors = []
    with pytest.raises(KeyError):
        for chunk in graph.stream({"items": []}, stream_mode=mode):
            payload = chunk["payload"] if mode == "debug" else chunk
            if "error" in payload:
                errors.append(payload["error"])
    assert [type(e) for e in errors] == [KeyError]


def test_a_key_written_twice_by_one_task_shows_every_value() -> None:
    class Joined(TypedDict, total=False):
        text: Annotated[str, lambda a, b: f"{a}+{b}" if a else b]

    def twice(state: Joined) -> Command[Any]:
        return Command(update=[("text", "x"), ("text", "y")])

    graph = StateGraph(Joined).add_node("twice", twice).add_edge(START, "twice").compile()
    results = [
        c["result"] for c in graph.stream({"text": ""}, stream_mode="tasks") if "result" in c
    ]
    assert results == [{"text": {"$writes": ["x", "y"]}}]


def test_task_calls_appear_in_the_tasks_stream() -> None:
    from stategraph.func import entrypoint, task

    @task
    def nothing() -> bool:
        return False

    @entrypoint()
    def flow(x: int) -> int:
        nothing().result()
        return x

    chunks = list(flow.stream(1, stream_mode="tasks"))
    call_start = next(c for c in chunks if c["name"] == "nothing" and "input" in c)
    call_result = next(c for c in chunks if c["name"] == "nothing" and "result" in c)
    assert call_start["input"] == ((), {}) and call_start["triggers"] == ("__pregel_push",)
    assert call_result["id"] == call_start["id"]
    assert call_result["result"] == {"__return__": False} and call_result["error"] is None


async def test_a_cancelled_run_still_saves_its_exit_checkpoint() -> None:
    log: list[str] = []
    started = asyncio.Event()

    class SlowPut(InMemorySaver):
        async def aput(self, *args: Any) -> Any:
            log.append("put start")
            await asyncio.sleep(0.1)
            result = await super().aput(*args)
            log.append("put end")
            return result

    async def forever(state: Box) -> Box:
        started.set()
        await asyncio.sleep(30)
        return {}

    graph = (
        StateGraph(Box)
        .add_node("forever", forever)
        .add_edge(START, "forever")
        .compile(checkpointer=SlowPut())
    )
    cfg = {"configurable": {"thread_id": "cancel-exit"}}
    run = asyncio.ensure_future(graph.ainvoke({"items": ["in"]}, cfg, durability="exit"))
    await started.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert log == ["put start", "put end"]
    state = await graph.aget_state(cfg)
    assert state.values == {"items": ["in"]} and state.next == ("forever",)


def test_a_timed_out_sync_step_still_saves_its_exit_checkpoint() -> None:
    release = threading.Event()

    def stuck(state: Box) -> Box:
        release.wait(10)
        return {}

    graph = (
        StateGraph(Box)
        .add_node("stuck", stuck)
        .add_edge(START, "stuck")
        .compile(checkpointer=InMemorySaver())
    )
    graph.step_timeout = 0.1
    cfg = {"configurable": {"thread_id": "timeout-exit"}}
    try:
        with pytest.raises(TimeoutError):
            graph.invoke({"items": ["in"]}, cfg, durability="exit")
    finally:
        release.set()
    assert graph.get_state(cfg).next == ("stuck",)


def test_state_history_shows_every_value_of_a_key_written_twice() -> None:
    class Joined(TypedDict, total=False):
        text: Annotated[str, lambda a, b: f"{a}+{b}" if a else b]

    def twice(state: Joined) -> Command[Any]:
        return Command(update=[("text", "x"), ("text", "y")])

    graph = (
        StateGraph(Joined)
        .add_node("twice", twice)
        .add_node("after", lambda s: {})
        .add_edge(START, "twice")
        .add_edge("twice", "after")
        .compile(checkpointer=InMemorySaver())
    )
    cfg = {"configurable": {"thread_id": "w2"}}
    graph.invoke({"text": ""}, cfg)
    results = [t.result for s in graph.get_state_history(cfg) for t in s.tasks if t.name == "twice"]
    assert results == [{"text": {"$writes": ["x", "y"]}}]
