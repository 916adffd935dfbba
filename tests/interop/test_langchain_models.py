"""LangChain chat models and tools in stategraph graphs, streaming as in LangGraph.

The expected chunks and states are those LangGraph 1.2 produces for the same apps
(checked by running both side by side); ids are compared structurally.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core import messages as lc
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.graph.message import MessagesState, add_messages
from stategraph.prebuilt import ToolNode, create_react_agent, tools_condition

from .lc_fakes import ScriptedChatModel, add, add_then_answer

CONFIG = {"configurable": {"thread_id": "lc"}}


def words(*texts: str) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([lc.AIMessage(t) for t in texts]))


def single_node(model: Any, **node_options: Any) -> Any:
    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("call_model", call_model, **node_options)
    builder.add_edge(START, "call_model")
    return builder.compile(checkpointer=InMemorySaver())


def test_invoke_inside_a_node_streams_tokens_with_langgraph_metadata() -> None:
    graph = single_node(words("hello big world"), metadata={"team": "t"})
    out = list(
        graph.stream(
            {"messages": [lc.HumanMessage("hi", id="h")]},
            {**CONFIG, "tags": ["run"], "metadata": {"user": "u"}},
            stream_mode=["messages", "updates"],
        )
    )
    assert [m for m, _ in out] == ["messages"] * 5 + ["updates"]
    tokens = [p for m, p in out if m == "messages"]
    assert [c.content for c, _ in tokens] == ["hello", " ", "big", " ", "world"]
    assert all(type(c) is lc.AIMessageChunk for c, _ in tokens)
    assert len({c.id for c, _ in tokens}) == 1
    meta = tokens[0][1]
    expected = {
        "user": "u",
        "team": "t",
        "thread_id": "lc",
        "ls_integration": "langchain_chat_model",
        "ls_provider": "genericfakechatmodel",
        "ls_model_type": "chat",
        "langgraph_step": 1,
        "langgraph_node": "call_model",
        "langgraph_triggers": ("branch:to:call_model",),
        "langgraph_path": ("__pregel_pull", "call_model"),
        "tags": ["run"],
    }
    assert {k: meta[k] for k in expected} == expected
    assert meta["checkpoint_ns"] == meta["langgraph_checkpoint_ns"]
    update = out[-1][1]["call_model"]["messages"][0]
    assert type(update) is lc.AIMessage and update.content == "hello big world"
    assert update.id == tokens[0][0].id  # the final reply is not streamed a second time


def test_async_node_tokens() -> None:
    model = words("x y")

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("call_model", call_model)
    builder.add_edge(START, "call_model")
    graph = builder.compile()

    async def go() -> list[Any]:
        return [
            c async for c in graph.astream({"messages": [("user", "q")]}, stream_mode="messages")
        ]

    assert [c.content for c, _ in asyncio.run(go())] == ["x", " ", "y"]


def test_nostream_models_and_models_that_cannot_stream() -> None:
    quiet = single_node(words("a b").with_config(tags=["nostream"]))
    out = list(quiet.stream({"messages": [("user", "q")]}, CONFIG, stream_mode="messages"))
    assert [(type(m).__name__, m.content, meta["ls_integration"]) for m, meta in out] == [
        ("AIMessage", "a b", "langgraph")
    ]


def test_subgraph_tokens_are_namespaced_only_with_subgraphs() -> None:
    inner = single_node(words("c d", "e f"))
    parent = StateGraph(MessagesState)
    parent.add_node("sub", inner)
    parent.add_edge(START, "sub")
    graph = parent.compile(checkpointer=InMemorySaver())
    with_ns = list(
        graph.stream({"messages": [("user", "q")]}, CONFIG, stream_mode="messages", subgraphs=True)
    )
    assert [(ns[0].split(":")[0], m.content) for ns, (m, _) in with_ns] == [
        ("sub", "c"),
        ("sub", " "),
        ("sub", "d"),
    ]
    without = list(
        graph.stream(
            {"messages": [("user", "q")]},
            {"configurable": {"thread_id": "other"}},
            stream_mode="messages",
        )
    )
    assert [(type(m).__name__, m.content, meta["langgraph_node"]) for m, meta in without] == [
        ("AIMessage", "e f", "sub")
    ]


@pytest.mark.parametrize("use_async", [False, True])
def test_react_agent_with_langchain_model_and_tool(use_async: bool) -> None:
    agent = create_react_agent(add_then_answer(), [add], checkpointer=InMemorySaver())
    request = {"messages": [("user", "add 1 and 2")]}
    if use_async:

        async def go() -> list[Any]:
            return [
                c async for c in agent.astream(request, CONFIG, stream_mode=["messages", "updates"])
            ]

        out = asyncio.run(go())
    else:
        out = list(agent.stream(request, CONFIG, stream_mode=["messages", "updates"]))
    kinds = [
        (mode, type(p[0]).__name__, p[1]["langgraph_node"]) if mode == "messages" else (mode, *p)
        for mode, p in out
    ]
    assert kinds == [
        *[("messages", "AIMessageChunk", "agent")] * 7,
        ("updates", "agent"),
        ("messages", "ToolMessage", "tools"),
        ("updates", "tools"),
        *[("messages", "AIMessageChunk", "agent")] * 8,
        ("updates", "agent"),
    ]
    state = agent.get_state(CONFIG).values["messages"]
    assert [type(m) for m in state] == [lc.HumanMessage, lc.AIMessage, lc.ToolMessage, lc.AIMessage]
    assert state[2].content == "3" and state[2].tool_call_id == "call_1"
    assert state[3].content == "The sum is 3"


def test_react_agent_hands_the_model_langchain_messages() -> None:
    model = add_then_answer()
    agent = create_react_agent(model, [add], prompt="You add numbers.")
    agent.invoke({"messages": [("user", "add 1 and 2")]})
    second_call = model.seen[1]
    assert [type(m) for m in second_call] == [
        lc.SystemMessage,
        lc.HumanMessage,
        lc.AIMessage,
        lc.ToolMessage,
    ]


def test_hand_built_agent_with_tool_node_and_plain_function_tool() -> None:
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    model = ScriptedChatModel(
        replies=[
            lc.AIMessage(
                "", tool_calls=[{"name": "multiply", "args": {"a": 2, "b": 4}, "id": "m1"}]
            ),
            lc.AIMessage("8"),
        ]
    )

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", call_model)
    builder.add_node("tools", ToolNode([multiply]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    out = builder.compile().invoke({"messages": [{"role": "user", "content": "2*4"}]})
    assert [type(m) for m in out["messages"]] == [
        lc.HumanMessage,
        lc.AIMessage,
        lc.ToolMessage,
        lc.AIMessage,
    ]
    assert out["messages"][2].content == "8" and out["messages"][2].name == "multiply"


def test_add_messages_keeps_langchain_classes_and_can_be_told_not_to() -> None:
    from stategraph.interop.langchain import use_langchain_messages

    merged = add_messages([], [("user", "hi"), {"role": "assistant", "content": "yo"}])
    assert [type(m) for m in merged] == [lc.HumanMessage, lc.AIMessage]
    chunk = lc.AIMessageChunk(content="a", id="c") + lc.AIMessageChunk(content="b")
    assert type(add_messages([], [chunk])[0]) is lc.AIMessage
    use_langchain_messages(False)
    try:
        from stategraph.messages import HumanMessage

        assert type(add_messages([], [("user", "hi")])[0]) is HumanMessage
    finally:
        use_langchain_messages(True)


def test_message_conversion_round_trip() -> None:
    import stategraph.messages as sg
    from stategraph.interop.langchain import from_langchain, to_langchain

    ours = [
        sg.HumanMessage("h", id="1", name="n"),
        sg.AIMessage(
            "a",
            id="2",
            tool_calls=[{"name": "f", "args": {"x": 1}, "id": "c"}],
            usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
        ),
        sg.ToolMessage("t", tool_call_id="c", status="error", artifact=[1]),
        sg.SystemMessage("s"),
        sg.ChatMessage("c", role="critic"),
        sg.AIMessageChunk(
            "k", tool_call_chunks=[{"name": "f", "args": "{", "id": "c", "index": 0}]
        ),
    ]
    theirs = [to_langchain(m) for m in ours]
    assert [type(m).__name__ for m in theirs] == [type(m).__name__ for m in ours]
    assert theirs[1].tool_calls == ours[1].tool_calls
    assert theirs[2].status == "error" and theirs[2].artifact == [1]
    assert [from_langchain(m) for m in theirs] == ours
