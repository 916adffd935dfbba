"""The async shell's step alone in place: a single task awaited in the driving coroutine.

It must behave as if the task ran in an asyncio task of its own: context variables
isolated, cancellation and failures as before, step timeouts honoured, no thread hops
for the library's own bits (a graph's ``__start__``), stream chunks in order.
"""

from __future__ import annotations

import asyncio
import contextvars
import operator
import sys
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.config import get_stream_writer
from stategraph.graph import END, START, StateGraph
from stategraph.pregel._async_context import await_in_context
from stategraph.types import RetryPolicy, Send

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("sg_test_in_place", default="unset")


class S(TypedDict, total=False):
    seen: Annotated[list, operator.add]
    n: int


def _chain(*funcs: Any, **kwargs: Any) -> Any:
    b = StateGraph(S)
    prev = START
    for f in funcs:
        b.add_node(f.__name__, f, **kwargs)
        b.add_edge(prev, f.__name__)
        prev = f.__name__
    return b


async def one(state: S) -> dict[str, Any]:
    seen = VAR.get()
    VAR.set("one")
    return {"seen": [f"one saw {seen}"]}


async def two(state: S) -> dict[str, Any]:
    seen = VAR.get()
    VAR.set("two")
    await asyncio.sleep(0)  # the value set before an await is still there after it
    return {"seen": [f"two saw {seen} then {VAR.get()}"]}


async def three(state: S) -> dict[str, Any]:
    return {"seen": [f"three saw {VAR.get()}"]}


EXPECTED = ["one saw caller", "two saw caller then two", "three saw caller"]


async def test_a_node_sees_the_callers_context_and_keeps_its_own_changes() -> None:
    graph = _chain(one, two, three).compile()
    token = VAR.set("caller")
    try:
        assert (await graph.ainvoke({"seen": []}))["seen"] == EXPECTED
        assert VAR.get() == "caller"
        chunks = [c async for c in graph.astream({"seen": []}, stream_mode="updates")]
        assert [u for c in chunks for u in next(iter(c.values()))["seen"]] == EXPECTED
        assert VAR.get() == "caller"
    finally:
        VAR.reset(token)


async def test_a_routing_function_keeps_its_context_changes_too() -> None:
    async def route(state: S) -> str:
        VAR.set("router")
        return "three"

    b = StateGraph(S)
    b.add_node("one", one)
    b.add_node("three", three)
    b.add_edge(START, "one")
    b.add_conditional_edges("one", route, ["three"])
    token = VAR.set("caller")
    try:
        out = await b.compile().ainvoke({"seen": []})
    finally:
        VAR.reset(token)
    assert out["seen"] == ["one saw caller", "three saw caller"]


async def test_the_single_task_still_sees_its_task_context() -> None:
    # get_stream_writer() reads the task context the shell enters for the attempt
    async def talk(state: S) -> dict[str, Any]:
        get_stream_writer()({"from": "talk"})
        return {"n": 1}

    graph = _chain(talk).compile()
    assert [c async for c in graph.astream({}, stream_mode="custom")] == [{"from": "talk"}]


async def test_an_error_in_the_single_task_names_the_node_and_is_retried() -> None:
    calls: list[int] = []

    async def flaky(state: S) -> dict[str, Any]:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("down")
        return {"n": len(calls)}

    graph = _chain(flaky, retry_policy=RetryPolicy(initial_interval=0.001, jitter=False))
    assert await graph.compile().ainvoke({}) == {"seen": [], "n": 3}

    async def broken(state: S) -> dict[str, Any]:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input") as info:
        await _chain(broken).compile().ainvoke({})
    assert any("task with name 'broken'" in note for note in info.value.__notes__)


async def test_cancelling_ainvoke_cancels_the_single_task_and_saves_nothing_new() -> None:
    started = asyncio.Event()
    stopped: list[str] = []
    attempts: list[int] = []

    async def wait_forever(state: S) -> dict[str, Any]:
        attempts.append(1)
        started.set()
        try:
            await asyncio.sleep(60)
        finally:
            stopped.append("wait_forever")
        return {"n": 1}

    saver = InMemorySaver()
    graph = _chain(one, wait_forever, retry_policy=RetryPolicy(retry_on=Exception)).compile(
        checkpointer=saver
    )
    config = {"configurable": {"thread_id": "cancelled"}}
    run = asyncio.ensure_future(graph.ainvoke({"seen": []}, config, durability="sync"))
    await asyncio.wait_for(started.wait(), 5)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert stopped == ["wait_forever"] and attempts == [1]  # cancelled, not retried
    state = await graph.aget_state(config)
    assert state.values["seen"] == ["one saw unset"] and state.next == ("wait_forever",)


@pytest.mark.skipif(
    sys.version_info < (3, 11),
    reason="3.10 has no Task.cancelling(): a CancelledError raised by a node alone in its "
    "step cannot be told from a cancellation of the caller, and cancels the run",
)
async def test_a_node_raising_cancelled_error_itself_is_a_node_failure() -> None:
    from stategraph.errors import NodeCancelledError

    async def gives_up(state: S) -> dict[str, Any]:
        raise asyncio.CancelledError()

    with pytest.raises(NodeCancelledError):
        await _chain(gives_up).compile().ainvoke({})


async def test_step_timeout_stops_a_single_slow_task() -> None:
    stopped: list[str] = []

    async def slow(state: S) -> dict[str, Any]:
        try:
            await asyncio.sleep(30)
        finally:
            stopped.append("slow")
        return {"n": 1}

    graph = _chain(slow).compile()
    graph.step_timeout = 0.1
    with pytest.raises(asyncio.TimeoutError, match=r"step_timeout=0\.1s \(cancelled: slow\)"):
        await graph.ainvoke({})
    assert stopped == ["slow"]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.timeout is new in 3.11")
async def test_asyncio_timeout_inside_a_node_in_place() -> None:
    async def guarded(state: S) -> dict[str, Any]:
        try:
            async with asyncio.timeout(0.01):  # type: ignore[attr-defined]
                await asyncio.sleep(10)
        except TimeoutError:
            return {"n": -1}
        return {"n": 1}

    assert (await _chain(guarded).compile().ainvoke({}))["n"] == -1


async def test_no_thread_hop_for_start_nodes_of_graph_and_subgraphs() -> None:
    class Inner(TypedDict, total=False):
        subject: str
        jokes: Annotated[list, operator.add]

    async def joke(state: Inner) -> dict[str, Any]:
        return {"jokes": [f"joke about {state['subject']}"]}

    sub = StateGraph(Inner)
    sub.add_node("joke", joke)
    sub.add_edge(START, "joke")
    sub.add_edge("joke", END)

    class Outer(TypedDict, total=False):
        subjects: list
        jokes: Annotated[list, operator.add]

    async def fan(state: Outer) -> list[Send]:
        return [Send("sub", {"subject": s}) for s in state["subjects"]]

    b = StateGraph(Outer)
    b.add_node("sub", sub.compile())
    b.add_conditional_edges(START, fan)
    b.add_edge("sub", END)
    graph = b.compile()

    aloop = asyncio.get_running_loop()
    hops: list[Any] = []
    plain = aloop.run_in_executor

    def counting(executor: Any, func: Any, *args: Any) -> Any:
        hops.append(args)
        return plain(executor, func, *args)

    aloop.run_in_executor = counting  # type: ignore[method-assign]
    try:
        out = await graph.ainvoke({"subjects": ["cats", "dogs", "owls"]})
        chunks = [c async for c in graph.astream({"subjects": ["bats"]})]
    finally:
        del aloop.run_in_executor
    assert sorted(out["jokes"]) == ["joke about cats", "joke about dogs", "joke about owls"]
    assert chunks[-1] == {"sub": {"jokes": ["joke about bats"]}}
    assert hops == []


async def test_sync_nodes_still_run_in_worker_threads() -> None:
    import threading

    loop_thread = threading.get_ident()
    seen: list[bool] = []

    def blocking(state: S) -> dict[str, Any]:
        seen.append(threading.get_ident() == loop_thread)
        return {"n": 1}

    assert (await _chain(blocking).compile().ainvoke({}))["n"] == 1
    assert seen == [False]


async def test_parallel_tasks_stream_every_chunk_in_order() -> None:
    async def talker(state: dict[str, Any]) -> dict[str, Any]:
        write = get_stream_writer()
        for i in range(3):
            write((state["who"], i))
            await asyncio.sleep(0)
        return {"seen": [state["who"]]}

    async def fan(state: S) -> list[Send]:
        return [Send("talker", {"who": w}) for w in ("a", "b", "c")]

    b = StateGraph(S)
    b.add_node("talker", talker)
    b.add_conditional_edges(START, fan)
    chunks = [c async for c in b.compile().astream({}, stream_mode=["custom", "updates"])]
    custom = [p for mode, p in chunks if mode == "custom"]
    assert sorted(custom) == [(w, i) for w in "abc" for i in range(3)]
    for w in "abc":
        assert [i for who, i in custom if who == w] == [0, 1, 2]
    updates = [p for mode, p in chunks if mode == "updates"]
    assert sorted(u["talker"]["seen"][0] for u in updates) == ["a", "b", "c"]
    # each task's update comes after every chunk it wrote
    for w in "abc":
        last_custom = max(i for i, (m, p) in enumerate(chunks) if m == "custom" and p[0] == w)
        update_at = next(
            i for i, (m, p) in enumerate(chunks) if m == "updates" and p["talker"]["seen"] == [w]
        )
        assert last_custom < update_at


# --- await_in_context on its own ---------------------------------------------------


async def test_await_in_context_runs_every_step_in_the_context() -> None:
    async def body() -> list[str]:
        got = [VAR.get()]
        VAR.set("inside")
        await asyncio.sleep(0)
        got.append(VAR.get())
        await asyncio.sleep(0.001)
        got.append(VAR.get())
        return got

    ctx = contextvars.copy_context()
    assert await await_in_context(ctx, body()) == ["unset", "inside", "inside"]
    assert VAR.get() == "unset" and ctx[VAR] == "inside"


async def test_await_in_context_forwards_cancellation_and_errors() -> None:
    caught: list[str] = []

    async def body() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            caught.append(VAR.get())
            raise

    async def outer() -> None:
        VAR.set("outer")
        await await_in_context(contextvars.copy_context(), body())

    task = asyncio.ensure_future(outer())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert caught == ["outer"]

    async def fails() -> None:
        await asyncio.sleep(0)
        raise KeyError("k")

    with pytest.raises(KeyError):
        await await_in_context(contextvars.copy_context(), fails())

    async def recovers() -> str:
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(fut.set_exception, OSError("late"))
        try:
            return await fut
        except OSError as exc:
            return f"recovered from {exc}"

    assert await await_in_context(contextvars.copy_context(), recovers()) == ("recovered from late")


def test_await_in_context_closes_the_inner_coroutine_when_closed() -> None:
    closed: list[bool] = []
    loop = asyncio.new_event_loop()
    waited: asyncio.Future[None] = loop.create_future()

    async def body() -> None:
        try:
            await waited
        finally:
            closed.append(True)

    async def outer() -> None:
        await await_in_context(contextvars.copy_context(), body())

    try:
        coro = outer()
        # advance the coroutine to its first wait (it hands over the inner future)
        assert coro.send(None) is waited
        coro.close()
    finally:
        loop.close()
    assert closed == [True]
