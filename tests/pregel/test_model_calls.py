"""The model-call hook and the ``messages`` stream mode built on it.

The model here talks to the hook directly (no adapter), so these tests pin the
hook's contract: who is told what, with which metadata, in which order.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.graph.message import MessagesState
from stategraph.messages import AIMessage, AIMessageChunk, HumanMessage, message_chunk_to_message
from stategraph.observe._model_calls import (
    ModelCall,
    ModelCallHandler,
    begin_model_call,
    run_wants_model_calls,
)


class TokenModel:
    """Replies with ``text``, one chunk per word, through the model-call hook."""

    def __init__(self, text: str, *, tags: tuple[str, ...] = (), reply_id: str | None = None):
        self.text = text
        self.tags = tags
        self.reply_id = reply_id
        self.streamed = 0
        self.on_chunk: Any = None

    def invoke(self, messages: list[Any]) -> AIMessage:
        call = begin_model_call(
            self, messages, name="token-model", tags=self.tags, metadata={"ls_provider": "t"}
        )
        if call is None:
            return AIMessage(self.text, id=self.reply_id)
        if not call.streams:
            return call.end(AIMessage(self.text, id=self.reply_id))
        reply = None
        words = self.text.split(" ")
        for i, word in enumerate(words):
            piece = word if i == len(words) - 1 else word + " "
            chunk = call.chunk(AIMessageChunk(piece, id=self.reply_id))
            self.streamed += 1
            if self.on_chunk is not None:
                self.on_chunk(chunk)
            reply = chunk if reply is None else reply + chunk
        return call.end(message_chunk_to_message(reply))


def chat_graph(model: TokenModel, **node_options: Any) -> Any:
    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent, **node_options)
    builder.add_edge(START, "agent")
    return builder.compile(checkpointer=InMemorySaver())


CONFIG = {"configurable": {"thread_id": "t1"}}


def test_no_handler_means_no_call_object() -> None:
    model = TokenModel("a b")
    assert begin_model_call(model, []) is None  # outside any graph
    seen: list[bool] = []

    def node(state: MessagesState) -> dict[str, Any]:
        seen.append(run_wants_model_calls())
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    graph = builder.compile()
    out = graph.invoke({"messages": [HumanMessage("hi")]})
    list(graph.stream({"messages": [HumanMessage("hi")]}, stream_mode="updates"))
    assert seen == [False, False]
    assert model.streamed == 0
    assert out["messages"][-1].content == "a b"


def test_tokens_reach_the_messages_stream_with_langgraph_metadata() -> None:
    model = TokenModel("hello there world", reply_id="r1")
    graph = chat_graph(model, metadata={"team": "x"})
    chunks = list(
        graph.stream(
            {"messages": [HumanMessage("hi", id="h")]},
            {**CONFIG, "metadata": {"user": "u"}},
            stream_mode=["messages", "updates"],
        )
    )
    modes = [mode for mode, _ in chunks]
    assert modes == ["messages", "messages", "messages", "updates"]
    tokens = [payload for mode, payload in chunks if mode == "messages"]
    assert [m.content for m, _ in tokens] == ["hello ", "there ", "world"]
    assert all(type(m) is AIMessageChunk and m.id == "r1" for m, _ in tokens)
    meta = tokens[0][1]
    assert meta["langgraph_node"] == "agent"
    assert meta["langgraph_step"] == 1
    assert meta["langgraph_triggers"] == ("branch:to:agent",)
    assert meta["langgraph_path"] == ("__pregel_pull", "agent")
    assert meta["langgraph_checkpoint_ns"].startswith("agent:")
    assert meta["checkpoint_ns"] == meta["langgraph_checkpoint_ns"]
    assert meta["thread_id"] == "t1"
    assert (meta["user"], meta["team"], meta["ls_provider"]) == ("u", "x", "t")
    assert "tags" not in meta
    final = chunks[-1][1]["agent"]["messages"][0]
    assert final == AIMessage("hello there world", id="r1")


def test_streamed_reply_without_id_is_not_sent_twice() -> None:
    graph = chat_graph(TokenModel("a b"))
    out = list(graph.stream({"messages": [HumanMessage("hi")]}, CONFIG, stream_mode="messages"))
    assert [m.content for m, _ in out] == ["a ", "b"]
    ids = {m.id for m, _ in out}
    assert len(ids) == 1
    state = graph.get_state(CONFIG).values["messages"]
    assert state[-1].id in ids  # the stored reply carries the streamed id


def test_nostream_tag_on_node_or_model_keeps_tokens_off() -> None:
    tagged_model = TokenModel("x y", tags=("nostream",), reply_id="m")
    out = list(
        chat_graph(tagged_model).stream(
            {"messages": [HumanMessage("hi")]}, CONFIG, stream_mode="messages"
        )
    )
    # the model stays silent; its reply comes once, as the node's output
    assert [(type(m).__name__, m.content) for m, _ in out] == [("AIMessage", "x y")]
    assert out[0][1]["ls_integration"] == "langgraph"
    assert tagged_model.streamed == 0

    quiet_node_model = TokenModel("x y")
    graph = chat_graph(quiet_node_model)
    graph.nodes["agent"].tags.append("nostream")
    out = list(graph.stream({"messages": [HumanMessage("hi")]}, CONFIG, stream_mode="messages"))
    assert out == []


def test_run_tags_reach_token_metadata() -> None:
    graph = chat_graph(TokenModel("a", tags=("model-tag",)))
    out = list(
        graph.stream(
            {"messages": [HumanMessage("hi")]},
            {**CONFIG, "tags": ["run-tag"]},
            stream_mode="messages",
        )
    )
    assert out[0][1]["tags"] == ["run-tag", "model-tag"]


def subgraph_app(model: TokenModel) -> Any:
    def inner(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    sub = StateGraph(MessagesState)
    sub.add_node("inner", inner)
    sub.add_edge(START, "inner")
    parent = StateGraph(MessagesState)
    parent.add_node("sub", sub.compile())
    parent.add_edge(START, "sub")
    return parent.compile(checkpointer=InMemorySaver())


def test_subgraph_tokens_carry_their_namespace() -> None:
    graph = subgraph_app(TokenModel("c d", reply_id="r"))
    out = list(
        graph.stream(
            {"messages": [HumanMessage("hi", id="h")]},
            CONFIG,
            stream_mode="messages",
            subgraphs=True,
        )
    )
    assert [(ns[0].split(":")[0], m.content) for ns, (m, _) in out] == [("sub", "c "), ("sub", "d")]
    meta = out[0][1][1]
    assert meta["langgraph_node"] == "inner"
    assert meta["checkpoint_ns"] == out[0][0][0]  # the subgraph's namespace


def test_without_subgraphs_a_subgraph_reply_comes_once_from_the_parent_node() -> None:
    model = TokenModel("c d", reply_id="r")
    graph = subgraph_app(model)
    out = list(
        graph.stream({"messages": [HumanMessage("hi", id="h")]}, CONFIG, stream_mode="messages")
    )
    assert [(type(m).__name__, m.content, meta["langgraph_node"]) for m, meta in out] == [
        ("AIMessage", "c d", "sub")
    ]
    assert model.streamed == 0


def test_node_returning_its_input_does_not_replay_it() -> None:
    def echo(state: MessagesState) -> dict[str, Any]:
        return {"messages": [*state["messages"], AIMessage("new", id="n")]}

    builder = StateGraph(MessagesState)
    builder.add_node("echo", echo)
    builder.add_edge(START, "echo")
    out = list(
        builder.compile().stream(
            {"messages": [HumanMessage("old", id="o")]}, stream_mode="messages"
        )
    )
    assert [m.id for m, _ in out] == ["n"]
    assert "thread_id" not in out[0][1]


def test_sync_stream_delivers_tokens_while_the_node_runs() -> None:
    model = TokenModel("a b c")
    received = threading.Event()
    late: list[bool] = []

    def wait_for_consumer(chunk: Any) -> None:
        # the model continues only once the caller has seen the first token
        if chunk.content == "a ":
            late.append(not received.wait(timeout=30))

    model.on_chunk = wait_for_consumer
    graph = chat_graph(model)
    contents = []
    for message, _ in graph.stream(
        {"messages": [HumanMessage("hi")]}, CONFIG, stream_mode="messages"
    ):
        contents.append(message.content)
        received.set()
    assert contents == ["a ", "b ", "c"]
    assert late == [False]


def test_async_stream_delivers_tokens_and_updates_in_order() -> None:
    graph = chat_graph(TokenModel("x y"))

    async def collect() -> list[Any]:
        return [
            c
            async for c in graph.astream(
                {"messages": [HumanMessage("hi")]}, CONFIG, stream_mode=["updates", "messages"]
            )
        ]

    out = asyncio.run(collect())
    assert [mode for mode, _ in out] == ["messages", "messages", "updates"]


class Recorder(ModelCallHandler):
    streams = True

    def __init__(self, follow: bool = True) -> None:
        self.follow = follow
        self.events: list[tuple[str, Any]] = []

    def on_model_start(self, call: ModelCall) -> bool:
        self.events.append(("start", call.task_name))
        return self.follow

    def on_model_chunk(self, call: ModelCall, chunk: Any) -> None:
        self.events.append(("chunk", chunk.content))

    def on_model_end(self, call: ModelCall, message: Any) -> None:
        self.events.append(("end", message.content))

    def on_model_error(self, call: ModelCall, error: BaseException) -> None:
        self.events.append(("error", str(error)))


def run_with_handlers(handlers: list[ModelCallHandler], node: Any) -> None:
    """Run ``node`` in a graph whose run has ``handlers`` (as a helper would add them)."""
    from stategraph.pregel.main import Pregel

    builder = StateGraph(MessagesState)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    graph = builder.compile()
    original = Pregel._make_run

    def make_run(self: Any, *args: Any, **kwargs: Any) -> Any:
        loop = original(self, *args, **kwargs)
        if not loop.run.nested:
            loop.run.model_handlers.extend(handlers)
        return loop

    Pregel._make_run = make_run  # type: ignore[method-assign]
    try:
        graph.invoke({"messages": [HumanMessage("hi")]})
    finally:
        Pregel._make_run = original  # type: ignore[method-assign]


def test_handlers_hear_start_chunks_and_end() -> None:
    model = TokenModel("p q")
    recorder, ignoring = Recorder(), Recorder(follow=False)

    def node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    run_with_handlers([recorder, ignoring], node)
    assert recorder.events == [("start", "n"), ("chunk", "p "), ("chunk", "q"), ("end", "p q")]
    assert ignoring.events == [("start", "n")]


def test_a_failing_call_is_reported_and_raised() -> None:
    recorder = Recorder()

    class Broken:
        def invoke(self, messages: Any) -> Any:
            call = begin_model_call(self, messages)
            assert call is not None
            try:
                raise ConnectionError("provider down")
            except ConnectionError as exc:
                call.error(exc)
                raise

    def node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [Broken().invoke(state["messages"])]}

    with pytest.raises(ConnectionError, match="provider down"):
        run_with_handlers([recorder], node)
    assert recorder.events == [("start", "n"), ("error", "provider down")]


def test_a_model_that_cannot_stream_is_sent_whole_once() -> None:
    class Whole:
        def invoke(self, messages: Any) -> Any:
            call = begin_model_call(self, messages)
            assert call is not None and call.streams
            return call.end(AIMessage("entire"))

    def node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [Whole().invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    out = list(builder.compile().stream({"messages": [HumanMessage("hi")]}, stream_mode="messages"))
    assert [(type(m).__name__, m.content) for m, _ in out] == [("AIMessage", "entire")]
    assert out[0][1].get("ls_integration") is None  # sent by the model call, not the node


def test_streaming_messages_never_loads_the_langchain_bridge() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from stategraph.graph import START, StateGraph\n"
        "from stategraph.graph.message import MessagesState\n"
        "from stategraph.testing import FakeChatModel\n"
        "model = FakeChatModel(['a b'])\n"
        "b = StateGraph(MessagesState)\n"
        "b.add_node('n', lambda s: {'messages': [model.invoke(s['messages'])]})\n"
        "b.add_edge(START, 'n')\n"
        "out = list(b.compile().stream({'messages': [('user', 'q')]}, stream_mode='messages'))\n"
        "assert [m.content for m, _ in out] == ['a', ' ', 'b'], out\n"
        "loaded = [m for m in sys.modules if m.startswith(('langchain', 'stategraph.interop',"
        " 'openai', 'anthropic'))]\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
