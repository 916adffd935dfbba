"""FakeChatModel: scripted replies, token streaming, tools, and its use in graphs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.graph.message import MessagesState
from stategraph.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from stategraph.models import ChatModel, ChatModelProtocol
from stategraph.prebuilt import ToolNode, create_react_agent, tools_condition
from stategraph.testing import FakeChatModel

CONFIG = {"configurable": {"thread_id": "t"}}


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def tool_reply(call_id: str = "c1", a: int = 1, b: int = 2, text: str = "") -> AIMessage:
    return AIMessage(text, tool_calls=[{"name": "add", "args": {"a": a, "b": b}, "id": call_id}])


def test_it_satisfies_the_protocol() -> None:
    model = FakeChatModel(["hi"])
    assert isinstance(model, ChatModelProtocol)
    assert isinstance(model, ChatModel)


def test_replies_in_order_and_records_calls() -> None:
    model = FakeChatModel(["one", {"content": "two", "id": "x"}, lambda msgs: f"saw {len(msgs)}"])
    assert model.invoke("a") == AIMessage("one")
    assert model.invoke([("user", "b")]) == AIMessage("two", id="x")
    assert model.invoke([HumanMessage("c"), HumanMessage("d")]).content == "saw 2"
    assert [len(c) for c in model.calls] == [1, 1, 2]
    with pytest.raises(IndexError, match="scripted with 3 replies and this is call #4"):
        model.invoke("e")


def test_cycle_starts_over() -> None:
    model = FakeChatModel(["a", "b"], cycle=True)
    assert [model.invoke("x").content for _ in range(3)] == ["a", "b", "a"]


def test_bad_replies_are_rejected_up_front() -> None:
    with pytest.raises(TypeError, match="reply #1 is int"):
        FakeChatModel(["ok", 42])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="list of replies"):
        FakeChatModel("hello")  # type: ignore[arg-type]


def test_stream_splits_words_and_tool_arguments() -> None:
    model = FakeChatModel([tool_reply(text="Adding now", a=10, b=20)])
    chunks = list(model.stream("go"))
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    assert [c.content for c in chunks[:3]] == ["Adding", " ", "now"]
    pieces = [c.tool_call_chunks[0]["args"] for c in chunks if c.tool_call_chunks]
    assert len(pieces) == 3 and "".join(pieces) == '{"a": 10, "b": 20}'
    assert chunks[-1].chunk_position == "last"
    merged = sum(chunks[1:], chunks[0])
    assert merged.tool_calls == tool_reply(a=10, b=20).tool_calls


def test_streamed_reply_equals_the_scripted_one() -> None:
    scripted = AIMessage(
        "x y",
        id="r",
        name="bot",
        usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
        response_metadata={"finish_reason": "stop"},
    )
    chunks = FakeChatModel.reply_chunks(scripted)
    from stategraph.messages import message_chunk_to_message

    assert message_chunk_to_message(sum(chunks[1:], chunks[0])) == scripted


def test_bind_tools_shares_the_script() -> None:
    model = FakeChatModel(["a", "b"])
    bound = model.bind_tools([add])
    assert bound.tools[0]["name"] == "add"
    assert bound.tools[0]["parameters"]["required"] == ["a", "b"]
    assert model.tools == []
    bound.invoke("x")
    model.invoke("y")
    assert len(model.calls) == 2 and model.bound_tool_names == [["add"]]
    with pytest.raises(TypeError, match="unexpected options"):
        model.bind_tools([add], parallel=True)


def test_async_api() -> None:
    model = FakeChatModel(["p q", "r"])

    async def go() -> tuple[Any, Any]:
        chunks = [c async for c in model.astream("x")]
        return chunks, await model.ainvoke("y")

    chunks, reply = asyncio.run(go())
    assert [c.content for c in chunks] == ["p", " ", "q"]
    assert reply.content == "r"


def agent_with(model: FakeChatModel) -> Any:
    return create_react_agent(model, [add], checkpointer=InMemorySaver())


@pytest.mark.parametrize("use_async", [False, True])
def test_react_agent_streams_tokens_then_updates(use_async: bool) -> None:
    model = FakeChatModel([tool_reply(text="Let me add"), "The sum is 3."])
    agent = agent_with(model)
    request = {"messages": [("user", "add 1 and 2")]}
    if use_async:

        async def collect() -> list[Any]:
            return [
                c async for c in agent.astream(request, CONFIG, stream_mode=["messages", "updates"])
            ]

        chunks = asyncio.run(collect())
    else:
        chunks = list(agent.stream(request, CONFIG, stream_mode=["messages", "updates"]))
    script = [
        (mode, payload[1]["langgraph_node"] if mode == "messages" else next(iter(payload)))
        for mode, payload in chunks
    ]
    assert script[:9] == [("messages", "agent")] * 8 + [("updates", "agent")]
    assert script[9:11] == [("messages", "tools"), ("updates", "tools")]
    assert script[11:] == [("messages", "agent")] * 7 + [("updates", "agent")]
    tokens = "".join(
        p[0].content for m, p in chunks if m == "messages" and p[1]["langgraph_node"] == "agent"
    )
    assert tokens == "Let me addThe sum is 3."
    tool_message = next(
        p[0] for m, p in chunks if m == "messages" and isinstance(p[0], ToolMessage)
    )
    assert tool_message.content == "3"
    final = agent.get_state(CONFIG).values["messages"]
    assert [type(m).__name__ for m in final] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]
    assert final[-1].content == "The sum is 3."
    streamed_ids = {p[0].id for m, p in chunks if m == "messages"}
    assert final[1].id in streamed_ids and final[3].id in streamed_ids
    assert model.bound_tool_names == [["add"]]


def test_invoke_without_streaming_does_not_stream() -> None:
    model = FakeChatModel([tool_reply(), "done"])
    out = agent_with(model).invoke({"messages": [("user", "q")]}, CONFIG)
    assert out["messages"][-1].content == "done"


def test_hand_built_graph_with_tool_node() -> None:
    model = FakeChatModel([tool_reply(), "three"]).bind_tools([add])

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([add]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    graph = builder.compile()
    seen = [
        (meta["langgraph_node"], message.content)
        for message, meta in graph.stream({"messages": [("user", "q")]}, stream_mode="messages")
    ]
    assert seen == [("agent", ""), ("agent", ""), ("agent", ""), ("tools", "3"), ("agent", "three")]


def test_model_returning_a_non_message_names_the_node() -> None:
    def bad_model(messages: list[Any]) -> Any:
        return 42

    agent = create_react_agent(bad_model, [add])
    with pytest.raises(TypeError, match=r"Node 'agent': the model .* returned int 42"):
        agent.invoke({"messages": [("user", "q")]})


def test_nostream_model_via_with_config() -> None:
    model = FakeChatModel(["quiet reply"]).with_config(tags=["nostream"])

    def node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    out = list(builder.compile().stream({"messages": [("user", "q")]}, stream_mode="messages"))
    assert [(type(m).__name__, m.content) for m, _ in out] == [("AIMessage", "quiet reply")]


def test_config_tags_passed_to_a_model_call() -> None:
    model = FakeChatModel(["a"])

    def node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"], {"tags": ["nostream"]})]}

    builder = StateGraph(MessagesState)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    out = list(builder.compile().stream({"messages": [("user", "q")]}, stream_mode="messages"))
    assert [type(m).__name__ for m, _ in out] == ["AIMessage"]


def test_token_metadata_names_the_model() -> None:
    model = FakeChatModel(["a"], model_name="fake-7")

    def node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    [(_message, meta)] = list(
        builder.compile().stream({"messages": [("user", "q")]}, stream_mode="messages")
    )
    assert (meta["ls_provider"], meta["ls_model_name"], meta["ls_model_type"]) == (
        "fake",
        "fake-7",
        "chat",
    )
