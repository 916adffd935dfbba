"""ChatAnthropic over the real ``anthropic`` SDK, talking to a local Messages API server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

anthropic = pytest.importorskip("anthropic")

from stategraph.checkpoint.memory import InMemorySaver  # noqa: E402
from stategraph.messages import (  # noqa: E402
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from stategraph.models.anthropic import ChatAnthropic  # noqa: E402
from stategraph.prebuilt import create_react_agent  # noqa: E402
from stategraph.testing.fake_servers import FakeAnthropicServer, HTTPErrorReply  # noqa: E402


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


CALL = AIMessage("", tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "toolu_1"}])


@pytest.fixture
def server_factory() -> Any:
    servers: list[FakeAnthropicServer] = []

    def make(*replies: Any) -> FakeAnthropicServer:
        server = FakeAnthropicServer(list(replies))
        server.start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.close()


def sync_model(server: FakeAnthropicServer, **kwargs: Any) -> ChatAnthropic:
    client = anthropic.Anthropic(base_url=server.base_url, api_key="test", max_retries=0)
    return ChatAnthropic(client, model="claude-test", **kwargs)


def test_invoke_moves_system_and_merges_tool_results(server_factory: Any) -> None:
    server = server_factory(
        AIMessage(
            "Done", usage_metadata={"input_tokens": 9, "output_tokens": 1, "total_tokens": 10}
        )
    )
    history = [
        SystemMessage("be brief"),
        HumanMessage("add twice"),
        AIMessage(
            "ok",
            tool_calls=[
                {"name": "add", "args": {"a": 1, "b": 1}, "id": "t1"},
                {"name": "add", "args": {"a": 2, "b": 2}, "id": "t2"},
            ],
        ),
        ToolMessage("2", tool_call_id="t1"),
        ToolMessage("boom", tool_call_id="t2", status="error"),
    ]
    reply = sync_model(server, max_tokens=50).bind_tools([add]).invoke(history)
    assert reply.content == "Done" and reply.id == "msg_0001"
    assert reply.usage_metadata == {"input_tokens": 9, "output_tokens": 1, "total_tokens": 10}
    assert reply.response_metadata["stop_reason"] == "end_turn"
    sent = server.requests[0]
    assert sent["system"] == "be brief"
    assert sent["max_tokens"] == 50
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "user"]
    assert sent["messages"][1]["content"] == [
        {"type": "text", "text": "ok"},
        {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1, "b": 1}},
        {"type": "tool_use", "id": "t2", "name": "add", "input": {"a": 2, "b": 2}},
    ]
    assert sent["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "2"},
        {"type": "tool_result", "tool_use_id": "t2", "content": "boom", "is_error": True},
    ]
    assert sent["tools"] == [
        {
            "name": "add",
            "description": "Add two integers.",
            "input_schema": sent["tools"][0]["input_schema"],
        }
    ]
    assert sent["tools"][0]["input_schema"]["required"] == ["a", "b"]


def test_tool_use_reply(server_factory: Any) -> None:
    server = server_factory(CALL)
    reply = sync_model(server).bind_tools([add], tool_choice="any").invoke("2+3")
    assert reply.tool_calls == [
        {"name": "add", "args": {"a": 2, "b": 3}, "id": "toolu_1", "type": "tool_call"}
    ]
    assert server.requests[0]["tool_choice"] == {"type": "any"}


def test_stream_text_and_tool_input_deltas(server_factory: Any) -> None:
    server = server_factory(AIMessage("Adding it", tool_calls=CALL.tool_calls))
    chunks = list(sync_model(server).bind_tools([add]).stream("2+3"))
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    assert [c.content for c in chunks if c.content] == ["Adding", " it"]
    merged = sum(chunks[1:], chunks[0])
    assert merged.id == "msg_0001"
    assert merged.tool_calls == [
        {"name": "add", "args": {"a": 2, "b": 3}, "id": "toolu_1", "type": "tool_call"}
    ]
    usage = merged.usage_metadata
    assert usage is not None and usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert merged.response_metadata["stop_reason"] == "tool_use"


def test_async_client(server_factory: Any) -> None:
    server = server_factory("x y", "z")
    client = anthropic.AsyncAnthropic(base_url=server.base_url, api_key="test", max_retries=0)
    model = ChatAnthropic(client, model="claude-test")

    async def go() -> tuple[list[Any], Any]:
        return [c async for c in model.astream("q")], await model.ainvoke("r")

    chunks, reply = asyncio.run(go())
    assert "".join(c.content for c in chunks) == "x y" and reply.content == "z"
    with pytest.raises(RuntimeError, match="only an async client"):
        model.invoke("sync call")


def test_errors_surface_from_the_sdk(server_factory: Any) -> None:
    server = server_factory(HTTPErrorReply(400, "prompt is too long"))
    with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
        sync_model(server).invoke("hi")


def test_react_agent_async_streams_anthropic_tokens(server_factory: Any) -> None:
    server = server_factory(CALL, "It is 5")
    client = anthropic.AsyncAnthropic(base_url=server.base_url, api_key="test", max_retries=0)
    agent = create_react_agent(
        ChatAnthropic(client, model="claude-test"), [add], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "an"}}

    async def go() -> list[Any]:
        return [
            (meta["langgraph_node"], message.content)
            async for message, meta in agent.astream(
                {"messages": [("user", "2+3?")]}, config, stream_mode="messages"
            )
            if message.content
        ]

    assert asyncio.run(go()) == [
        ("tools", "5"),
        ("agent", "It"),
        ("agent", " is"),
        ("agent", " 5"),
    ]
