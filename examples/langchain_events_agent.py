"""A ReAct agent on a LangChain chat model, streamed through ``astream_events`` the way
LangChain's tutorials do: each token of the model's answers is printed once, as it
comes, and each tool call is announced.

The model is a small scripted LangChain ``BaseChatModel`` (no network, no keys) that
streams word by word like a provider; replace it with ``ChatOpenAI(model=...)`` from
langchain-openai (or ``stategraph.models.openai.ChatOpenAI``) and nothing else changes.
Needs langchain-core (``pip install 'stategraph[langchain]'``).

    python examples/langchain_events_agent.py
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Iterator
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool

from stategraph.prebuilt import create_react_agent


class ScriptedModel(BaseChatModel):
    """Answers from ``replies`` in turn, streaming one chunk per word."""

    replies: list[AIMessage]
    position: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self

    def _next(self) -> AIMessage:
        reply = self.replies[self.position]
        self.position += 1
        return reply

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next())])

    def _stream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Iterator[ChatGenerationChunk]:
        reply = self._next()
        pieces = [AIMessageChunk(content=w) for w in re.findall(r"\s+|\S+", reply.text)]
        for i, call in enumerate(reply.tool_calls):
            args = json.dumps(call["args"])
            piece = {"name": call["name"], "args": args, "id": call["id"], "index": i}
            pieces.append(AIMessageChunk(content="", tool_call_chunks=[piece]))  # type: ignore[list-item]
        for message in pieces:
            chunk = ChatGenerationChunk(message=message)
            if run_manager is not None:
                run_manager.on_llm_new_token(message.text, chunk=chunk)
            yield chunk


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return f"It is sunny and 21 degrees in {city}."


def build_agent() -> Any:
    """The agent: a scripted model that checks the weather, then answers."""
    model = ScriptedModel(
        replies=[
            AIMessage(
                "Let me check.",
                tool_calls=[{"name": "get_weather", "args": {"city": "Oslo"}, "id": "call_1"}],
            ),
            AIMessage("It is sunny and 21 degrees in Oslo today."),
        ]
    )
    return create_react_agent(model, [get_weather])


async def stream_answer(question: str, out: Any = sys.stdout) -> str:
    """Print each model token once (and each tool call) as ``astream_events`` reports it;
    return everything printed."""
    printed: list[str] = []

    def show(text: str) -> None:
        printed.append(text)
        out.write(text)
        out.flush()

    agent = build_agent()
    async for event in agent.astream_events({"messages": [("user", question)]}, version="v2"):
        kind = event["event"]
        if kind == "on_chat_model_stream":
            show(str(event["data"]["chunk"].content))
        elif kind == "on_tool_start":
            show(f"\n[calling {event['name']}({event['data'].get('input')})]\n")
    show("\n")
    return "".join(printed)


def main() -> str:
    """Stream one question; return what was printed."""
    return asyncio.run(stream_answer("What's the weather in Oslo?"))


if __name__ == "__main__":
    main()
