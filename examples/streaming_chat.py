"""A ReAct agent whose reply is printed token by token as the model produces it.

Part 1 runs on ``FakeChatModel`` (a scripted model: no network, no keys).
Part 2 runs the same agent on ``ChatOpenAI`` — the real ``openai`` SDK — against a
local server speaking OpenAI's wire format (``FakeOpenAIServer``); point the client
at api.openai.com with a key instead and nothing else changes.

    python examples/streaming_chat.py
"""

from __future__ import annotations

import sys
from typing import Any

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.messages import AIMessage, AIMessageChunk
from stategraph.prebuilt import create_react_agent
from stategraph.testing import FakeChatModel
from stategraph.testing.fake_servers import FakeOpenAIServer


def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return f"It is sunny and 21 degrees in {city}."


SCRIPT = [
    AIMessage(
        "Let me check the weather.",
        tool_calls=[{"name": "get_weather", "args": {"city": "Oslo"}, "id": "call_1"}],
    ),
    "Good news: it is sunny and 21 degrees in Oslo today.",
]


def chat(model: Any, title: str) -> str:
    """Run one question through a ReAct agent on ``model``, printing tokens as they come."""
    agent = create_react_agent(model, [get_weather], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": title}}
    print(f"== {title}")
    current = None
    for message, meta in agent.stream(
        {"messages": [("user", "What's the weather in Oslo?")]}, config, stream_mode="messages"
    ):
        node = meta["langgraph_node"]
        if node != current:
            print(f"\n[{node}] ", end="")
            current = node
        if isinstance(message, AIMessageChunk):
            for piece in message.tool_call_chunks:  # tool calls stream too
                if piece.get("name"):
                    print(f"(calling {piece['name']}) ", end="")
            print(message.content, end="", flush=True)
        else:  # a whole message, e.g. the tool's result
            print(message.content, end="", flush=True)
    print("\n")
    final = agent.get_state(config).values["messages"][-1]
    return str(final.content)


def main() -> int:
    answers = [chat(FakeChatModel(SCRIPT), "FakeChatModel")]
    try:
        import openai
    except ImportError:
        print("(install the 'openai' extra to run the ChatOpenAI part)")
    else:
        from stategraph.models.openai import ChatOpenAI

        with FakeOpenAIServer(SCRIPT) as server:
            client = openai.OpenAI(base_url=server.base_url, api_key="local", max_retries=0)
            answers.append(chat(ChatOpenAI(client, model="gpt-4o-mini"), "ChatOpenAI"))
    for answer in answers:
        print("final answer:", answer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
