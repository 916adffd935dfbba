"""ChatOpenAI over the real ``openai`` SDK, talking to a local Chat Completions server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

openai = pytest.importorskip("openai")

from stategraph.checkpoint.memory import InMemorySaver  # noqa: E402
from stategraph.messages import (  # noqa: E402
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from stategraph.models.openai import ChatOpenAI  # noqa: E402
from stategraph.prebuilt import create_react_agent  # noqa: E402
from stategraph.testing.fake_servers import FakeOpenAIServer, HTTPErrorReply  # noqa: E402


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


CALL = AIMessage("", tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "call_1"}])


@pytest.fixture
def server_factory() -> Any:
    servers: list[FakeOpenAIServer] = []

    def make(*replies: Any) -> FakeOpenAIServer:
        server = FakeOpenAIServer(list(replies))
        server.start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.close()


def sync_model(server: FakeOpenAIServer, **kwargs: Any) -> ChatOpenAI:
    client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    return ChatOpenAI(client, model="gpt-test", **kwargs)


def async_model(server: FakeOpenAIServer) -> ChatOpenAI:
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    return ChatOpenAI(client, model="gpt-test")


def test_invoke_sends_messages_and_reads_the_reply(server_factory: Any) -> None:
    server = server_factory(
        AIMessage(
            "Hello there",
            usage_metadata={"input_tokens": 7, "output_tokens": 2, "total_tokens": 9},
        )
    )
    model = sync_model(server, temperature=0.2)
    reply = model.invoke([SystemMessage("be brief"), HumanMessage("hi", name="ann")])
    assert reply.content == "Hello there"
    assert reply.id == "chatcmpl-1"
    assert reply.usage_metadata == {"input_tokens": 7, "output_tokens": 2, "total_tokens": 9}
    assert reply.response_metadata["finish_reason"] == "stop"
    assert reply.response_metadata["model_name"] == "gpt-test"
    assert server.requests == [
        {
            "model": "gpt-test",
            "temperature": 0.2,
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "hi", "name": "ann"},
            ],
        }
    ]


def test_tools_and_tool_history_on_the_wire(server_factory: Any) -> None:
    server = server_factory(CALL)
    model = sync_model(server).bind_tools([add], tool_choice="add")
    reply = model.invoke(
        [
            HumanMessage("earlier"),
            AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 1}, "id": "c0"}]),
            ToolMessage("2", tool_call_id="c0"),
        ]
    )
    assert reply.tool_calls == [
        {"name": "add", "args": {"a": 2, "b": 3}, "id": "call_1", "type": "tool_call"}
    ]
    sent = server.requests[0]
    assert sent["messages"][1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c0",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 1, "b": 1}'},
            }
        ],
    }
    assert sent["messages"][2] == {"role": "tool", "tool_call_id": "c0", "content": "2"}
    assert sent["tools"][0]["function"]["name"] == "add"
    assert sent["tools"][0]["function"]["parameters"]["required"] == ["a", "b"]
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "add"}}


def test_stream_yields_text_and_tool_call_deltas_with_usage(server_factory: Any) -> None:
    server = server_factory(AIMessage("Let me add", tool_calls=CALL.tool_calls))
    chunks = list(sync_model(server).bind_tools([add]).stream("add 2 and 3"))
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    assert "".join(c.content for c in chunks) == "Let me add"
    assert sum(1 for c in chunks if c.tool_call_chunks) == 4  # head + 3 argument pieces
    merged = sum(chunks[1:], chunks[0])
    assert merged.tool_calls == [
        {"name": "add", "args": {"a": 2, "b": 3}, "id": "call_1", "type": "tool_call"}
    ]
    assert merged.usage_metadata is not None and merged.usage_metadata["total_tokens"] > 0
    assert merged.response_metadata["finish_reason"] == "tool_calls"
    assert server.requests[0]["stream"] is True
    assert server.requests[0]["stream_options"] == {"include_usage": True}


def test_async_invoke_and_stream(server_factory: Any) -> None:
    server = server_factory("one two", "three")
    model = async_model(server)

    async def go() -> tuple[list[Any], Any]:
        chunks = [c async for c in model.astream("q")]
        return chunks, await model.ainvoke("r")

    chunks, reply = asyncio.run(go())
    assert "".join(c.content for c in chunks) == "one two"
    assert reply.content == "three"


def test_sync_only_model_serves_async_calls_in_a_thread(server_factory: Any) -> None:
    server = server_factory("a b", "c")
    model = sync_model(server)

    async def go() -> tuple[list[Any], Any]:
        return [c async for c in model.astream("q")], await model.ainvoke("r")

    chunks, reply = asyncio.run(go())
    assert "".join(c.content for c in chunks) == "a b" and reply.content == "c"


def test_provider_errors_surface_from_the_sdk(server_factory: Any) -> None:
    server = server_factory(HTTPErrorReply(400, "bad request: context too long"))
    with pytest.raises(openai.BadRequestError, match="context too long"):
        sync_model(server).invoke("hi")


def test_invalid_argument_json_becomes_an_invalid_tool_call() -> None:
    from stategraph.models.openai import _response_message

    response = {
        "id": "x",
        "model": "m",
        "choices": [
            {
                "finish_reason": "tool_calls",
                "message": {
                    "content": None,
                    "tool_calls": [{"id": "c", "function": {"name": "add", "arguments": "{oops"}}],
                },
            }
        ],
    }
    message = _response_message(response)
    assert message.tool_calls == []
    assert message.invalid_tool_calls[0]["args"] == "{oops"
    assert "not valid JSON" in message.invalid_tool_calls[0]["error"]


def test_react_agent_streams_openai_tokens(server_factory: Any) -> None:
    server = server_factory(CALL, "The answer is 5")
    agent = create_react_agent(sync_model(server), [add], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "oa"}}
    tokens = [
        (meta["langgraph_node"], message.content)
        for message, meta in agent.stream(
            {"messages": [("user", "2+3?")]}, config, stream_mode="messages"
        )
        if isinstance(message, AIMessageChunk) and message.content
    ]
    assert tokens == [("agent", "The"), ("agent", " answer"), ("agent", " is"), ("agent", " 5")]
    final = agent.get_state(config).values["messages"]
    assert final[2].content == "5" and final[-1].content == "The answer is 5"
    assert final[-1].usage_metadata is not None
    assert [m["role"] for m in server.requests[1]["messages"]] == ["user", "assistant", "tool"]
