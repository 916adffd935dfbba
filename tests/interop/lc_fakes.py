"""A scripted LangChain chat model (a real ``BaseChatModel`` subclass) for the tests."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool


class ScriptedChatModel(BaseChatModel):
    """Replies from ``replies`` in turn; streams word by word, then each tool call."""

    replies: list[AIMessage]
    position: int = 0
    seen: list[list[Any]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _next(self, messages: list[Any]) -> AIMessage:
        self.seen.append(list(messages))
        reply = self.replies[self.position]
        self.position += 1
        return reply

    def _generate(
        self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next(messages))])

    def _stream(
        self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Iterator[ChatGenerationChunk]:
        reply = self._next(messages)
        pieces = [AIMessageChunk(content=w) for w in re.findall(r"\s+|\S+", reply.text)]
        for i, call in enumerate(reply.tool_calls):
            piece = {
                "name": call["name"],
                "args": json.dumps(call["args"]),
                "id": call["id"],
                "index": i,
            }
            pieces.append(AIMessageChunk(content="", tool_call_chunks=[piece]))
        for message in pieces:
            chunk = ChatGenerationChunk(message=message)
            if run_manager is not None:
                run_manager.on_llm_new_token(message.text, chunk=chunk)
            yield chunk


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def add_then_answer() -> ScriptedChatModel:
    return ScriptedChatModel(
        replies=[
            AIMessage(
                "Let me add",
                tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "call_1"}],
            ),
            AIMessage("The sum is 3"),
        ]
    )
