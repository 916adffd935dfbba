"""stream_events(version="v3") / astream_events(version="v3"): run objects and projections."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, MessagesState, StateGraph
from stategraph.messages import AIMessage
from stategraph.stream import (
    CustomTransformer,
    StreamChannel,
    StreamTransformer,
    TasksTransformer,
    UpdatesTransformer,
)
from stategraph.types import StreamWriter, interrupt


class State(TypedDict):
    word: str
    seen: Annotated[list[str], operator.add]


def _step(tag: str) -> Any:
    def node(state: State) -> dict[str, Any]:
        return {"word": state["word"] + tag, "seen": [tag]}

    return node


def _pair() -> Any:
    return (
        StateGraph(State)
        .add_node("one", _step("1"))
        .add_node("two", _step("2"))
        .add_edge(START, "one")
        .add_edge("one", "two")
        .add_edge("two", END)
        .compile()
    )


def _nested() -> Any:
    inner = StateGraph(State).add_node("deep", _step("d")).add_edge(START, "deep").compile()
    return (
        StateGraph(State)
        .add_node("first", _step("f"))
        .add_node("inner", inner)
        .add_edge(START, "first")
        .add_edge("first", "inner")
        .compile()
    )


START_STATE = {"word": "w", "seen": []}


def test_values_output_and_raw_events() -> None:
    run = _pair().stream_events(START_STATE, version="v3")
    assert list(run.values)[-1] == {"word": "w12", "seen": ["1", "2"]}
    assert run.output == {"word": "w12", "seen": ["1", "2"]}
    events = list(_pair().stream_events(START_STATE, version="v3"))
    assert [e["method"] for e in events] == ["values", "values", "values"]
    assert [e["seq"] for e in events] == [1, 2, 3]
    assert all(e["type"] == "event" and isinstance(e["params"]["timestamp"], int) for e in events)
    assert events[0]["params"]["interrupts"] == ()


def test_nested_run_reports_lifecycle_and_subgraph_handles() -> None:
    events = list(_nested().stream_events(START_STATE, version="v3"))
    methods = [(e["method"], len(e["params"]["namespace"])) for e in events]
    assert methods == [
        ("values", 0),
        ("values", 0),
        ("values", 1),
        ("lifecycle", 0),
        ("values", 1),
        ("lifecycle", 0),
        ("values", 0),
    ]
    started, completed = (e["params"]["data"] for e in events if e["method"] == "lifecycle")
    assert started["event"] == "started" and started["graph_name"] == "inner"
    assert started["namespace"][0] == "inner:" + started["trigger_call_id"]
    assert completed == {"event": "completed", "namespace": started["namespace"]}

    run = _nested().stream_events(START_STATE, version="v3")
    handles = []
    for handle in run.subgraphs:
        handles.append((handle.graph_name, list(handle.values), handle.status))
    assert handles == [("inner", [{"word": "wfd", "seen": ["f", "d"]}], "completed")]
    assert run.output == {"word": "wfd", "seen": ["f", "f", "d"]}


def test_failing_subgraph_fails_its_handle_and_the_run() -> None:
    def broken(state: State) -> dict[str, Any]:
        raise ValueError("deep failure")

    inner = StateGraph(State).add_node("broken", broken).add_edge(START, "broken").compile()
    graph = StateGraph(State).add_node("inner", inner).add_edge(START, "inner").compile()
    run = graph.stream_events(START_STATE, version="v3")
    handle = next(iter(run.subgraphs))
    with pytest.raises(RuntimeError, match="deep failure"):
        _ = handle.output
    assert handle.status == "failed" and handle.error == "deep failure"
    with pytest.raises(ValueError, match="deep failure"):
        _ = graph.stream_events(START_STATE, version="v3").output


def test_interrupted_run() -> None:
    def ask(state: State) -> dict[str, Any]:
        return {"word": interrupt("ok?")}

    graph = (
        StateGraph(State)
        .add_node("ask", ask)
        .add_edge(START, "ask")
        .compile(checkpointer=InMemorySaver())
    )
    run = graph.stream_events(START_STATE, {"configurable": {"thread_id": "t"}}, version="v3")
    assert run.output == START_STATE
    assert run.interrupted is True
    assert [i.value for i in run.interrupts] == ["ok?"]


def test_custom_events_need_a_transformer_that_asks_for_them() -> None:
    def talk(state: State, *, writer: StreamWriter) -> dict[str, Any]:
        writer("hello")
        return {"seen": ["t"]}

    graph = StateGraph(State).add_node("talk", talk).add_edge(START, "talk").compile()
    assert [
        e for e in graph.stream_events(START_STATE, version="v3") if e["method"] == "custom"
    ] == []
    run = graph.stream_events(START_STATE, version="v3", transformers=[CustomTransformer])
    assert list(run.custom) == ["hello"]


def test_opt_in_projections_interleave_in_arrival_order() -> None:
    run = _pair().stream_events(
        START_STATE, version="v3", transformers=[UpdatesTransformer, TasksTransformer]
    )
    names = [name for name, _ in run.interleave("values", "updates", "tasks")]
    assert names[0] == "values"
    assert names.count("updates") == 2 and names.count("values") == 3
    assert run.extensions["values"]._subscribed is False


class Counter(StreamTransformer):
    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self.channel: StreamChannel[int] = StreamChannel("counter")
        self.count = 0

    def init(self) -> dict[str, Any]:
        return {"counter": self.channel}

    def process(self, event: Any) -> bool:
        if event["method"] == "values":
            self.count += 1
            self.channel.push(self.count)
        return True


def test_custom_transformer_channel_is_projected_and_forwarded() -> None:
    events = list(_pair().stream_events(START_STATE, version="v3", transformers=[Counter]))
    assert [e["params"]["data"] for e in events if e["method"] == "custom:counter"] == [1, 2, 3]
    run = _pair().stream_events(START_STATE, version="v3", transformers=[Counter])
    counts = iter(run.extensions["counter"])
    assert run.output is not None
    assert list(counts) == [1, 2, 3]
    assert not hasattr(run, "counter")  # not native: only in extensions


def test_compile_time_transformers_are_registered_on_every_run() -> None:
    graph = StateGraph(State).add_node("one", _step("1")).add_edge(START, "one")
    compiled = graph.compile(transformers=[Counter])
    run = compiled.stream_events(START_STATE, version="v3")
    assert "counter" in run.extensions


def test_bad_arguments_are_clear_errors() -> None:
    graph = _pair()
    with pytest.raises(TypeError, match="pre-built instance"):
        graph.stream_events(START_STATE, version="v3", transformers=[Counter()])
    with pytest.raises(TypeError, match="stream_mode"):
        graph.stream_events(START_STATE, version="v3", stream_mode="values")
    with pytest.raises(TypeError, match="subgraphs"):
        graph.stream_events(START_STATE, version="v3", subgraphs=True)
    with pytest.raises(ValueError, match="version"):
        graph.stream_events(START_STATE, version="v4")
    run = graph.stream_events(START_STATE, version="v3")
    with pytest.raises(AttributeError, match="registered projections"):
        _ = run.updates
    with pytest.raises(KeyError):
        list(run.interleave("values", "nope"))

    class Clash(StreamTransformer):
        def init(self) -> dict[str, Any]:
            return {"values": StreamChannel()}

    with pytest.raises(ValueError, match=r"conflict.*'values'.*ValuesTransformer"):
        graph.stream_events(START_STATE, version="v3", transformers=[Clash])


def test_projections_are_single_consumer_and_unconsumed_ones_hold_nothing() -> None:
    run = _pair().stream_events(START_STATE, version="v3")
    first = iter(run.values)
    with pytest.raises(RuntimeError, match="already has a subscriber"):
        iter(run.values)
    assert len(list(first)) == 3
    run = _pair().stream_events(START_STATE, version="v3")
    max_buffered = 0
    for _ in run:
        max_buffered = max(max_buffered, len(run._mux._events._items))
    assert max_buffered == 0
    assert len(run.extensions["values"]._items) == 0


def test_messages_projection_turns_ai_messages_into_streams() -> None:
    def reply(state: MessagesState) -> dict[str, Any]:
        return {"messages": AIMessage(content="fixed answer", id="m-1")}

    graph = StateGraph(MessagesState).add_node("reply", reply).add_edge(START, "reply").compile()
    (stream,) = list(graph.stream_events({"messages": []}, version="v3").messages)
    assert stream.message_id == "m-1" and stream.node == "reply" and stream.done
    assert stream.output.text == "fixed answer"
    assert "".join(stream.text) == "fixed answer"
    assert next(e["event"] for e in stream) == "message-start"


def test_abort_ends_the_run() -> None:
    with _pair().stream_events(START_STATE, version="v3") as run:
        assert next(iter(run.values)) == START_STATE
    assert run._exhausted is True
    run.abort()


async def test_async_run_object() -> None:
    run = await _nested().astream_events(START_STATE, version="v3")
    snapshots = [v async for v in run.values]
    assert snapshots[-1] == {"word": "wfd", "seen": ["f", "f", "d"]}
    run = await _pair().astream_events(START_STATE, version="v3")
    assert await run.output() == {"word": "w12", "seen": ["1", "2"]}
    assert await run.interrupted() is False


async def test_async_abort_cancels_the_running_subgraph() -> None:
    class Count(TypedDict):
        n: int

    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def slow(state: Count) -> dict[str, Any]:
        started.set()
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {"n": 1}

    inner = StateGraph(Count).add_node("slow", slow).add_edge(START, "slow").compile()

    async def call(state: Count) -> dict[str, Any]:
        return await inner.ainvoke({"n": 0})

    graph = StateGraph(Count).add_node("call", call).add_edge(START, "call").compile()
    run = await graph.astream_events({"n": 0}, version="v3")

    async def consume() -> None:
        async for _ in run:
            pass

    consumer = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 2)
    await run.abort()
    await asyncio.wait_for(cancelled.wait(), 2)
    # the aborted run closed its event stream, so the consumer ends on its own
    await asyncio.wait_for(consumer, 2)
    assert run._exhausted is True


def test_model_tokens_become_one_stream_per_message() -> None:
    from stategraph.messages import AIMessageChunk, message_chunk_to_message
    from stategraph.observe._model_calls import begin_model_call

    class Words:
        def invoke(self, messages: list[Any]) -> AIMessage:
            call = begin_model_call(self, messages, name="words")
            if call is None or not call.streams:
                return AIMessage("one two")
            reply = None
            for word in ("one ", "two"):
                chunk = call.chunk(AIMessageChunk(word))
                reply = chunk if reply is None else reply + chunk
            return call.end(message_chunk_to_message(reply))

    model = Words()

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState).add_node("agent", agent).add_edge(START, "agent").compile()
    (stream,) = list(graph.stream_events({"messages": []}, version="v3").messages)
    assert stream.node == "agent" and stream.done
    assert list(stream.text) == ["one ", "two"]
    assert stream.output.text == "one two"


async def test_cancelling_the_consumer_is_not_mistaken_for_an_abort() -> None:
    class Count(TypedDict):
        n: int

    started = asyncio.Event()

    async def slow(state: Count) -> dict[str, Any]:
        started.set()
        await asyncio.sleep(5)
        return {"n": 1}

    graph = StateGraph(Count).add_node("slow", slow).add_edge(START, "slow").compile()
    run = await graph.astream_events({"n": 0}, version="v3")

    async def consume() -> None:
        async for _ in run:
            pass

    consumer = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 2)
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(consumer, 2)
    assert consumer.cancelled()
