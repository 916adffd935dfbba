"""Fake LangChain chat models for the boundary scenarios (real ``BaseChatModel`` s).

:class:`ScriptedChatModel` answers from a script (by call order) or from a rule (a
function of the input messages, for branches that run in parallel). It streams like a
provider does: one chunk per word, then one chunk per tool call; ``bind_tools`` returns
a ``RunnableBinding`` as real models do, so ``with_structured_output`` works too.
:class:`FlakyChatModel` fails its first calls. langchain-core's own
``GenericFakeChatModel`` and ``FakeMessagesListChatModel`` are used as they are.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool

__all__ = ["ScriptedChatModel", "FlakyChatModel", "ai", "call"]

_LOCK = threading.Lock()


def call(name: str, args: dict[str, Any], id: str) -> dict[str, Any]:
    """A tool call as a model's answer carries it."""
    return {"name": name, "args": args, "id": id, "type": "tool_call"}


def ai(text: str = "", *calls: dict[str, Any]) -> AIMessage:
    """An AI answer with ``text`` and the given tool calls."""
    return AIMessage(content=text, tool_calls=list(calls))


def _bound_tools(tools: Any) -> dict[str, list[str]] | None:
    if not tools:
        return None
    shown: dict[str, list[str]] = {}
    for spec in tools:
        function = spec.get("function", {})
        shown[function.get("name", "?")] = sorted(
            function.get("parameters", {}).get("properties", {})
        )
    return shown


class ScriptedChatModel(BaseChatModel):
    """Answers ``replies`` in turn, or ``rule(messages)`` when a rule is given."""

    replies: list[AIMessage] = []
    rule: Callable[[list[BaseMessage]], AIMessage] | None = None
    position: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted-chat"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": "scripted-1"}

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any
    ) -> Runnable[Any, Any]:
        formatted = [convert_to_openai_tool(t) for t in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=formatted, **kwargs)

    def _answer(self, messages: list[BaseMessage], **kwargs: Any) -> AIMessage:
        if self.rule is not None:
            reply = self.rule(messages)
        else:
            with _LOCK:
                if self.position >= len(self.replies):
                    raise IndexError(f"script exhausted after {self.position} replies")
                reply = self.replies[self.position]
                self.position += 1
        seen = _bound_tools(kwargs.get("tools"))
        if seen is None:
            return reply
        # what the model was shown of each tool (its parameters), as a provider echoes it
        return reply.model_copy(update={"response_metadata": {"bound_tools": seen}})

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        reply = self._answer(messages, **kw)
        return ChatResult(generations=[ChatGeneration(message=reply.model_copy())])

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        await asyncio.sleep(0)
        return self._generate(messages, stop, None, **kw)

    async def _astream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        # natively async (no worker thread): concurrent calls interleave the same way on
        # every run, one chunk per turn of the event loop
        for message in self._pieces(messages, **kw):
            await asyncio.sleep(0)
            chunk = ChatGenerationChunk(message=message)
            if run_manager is not None:
                await run_manager.on_llm_new_token(message.text, chunk=chunk)
            yield chunk

    def _stream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Iterator[ChatGenerationChunk]:
        for message in self._pieces(messages, **kw):
            chunk = ChatGenerationChunk(message=message)
            if run_manager is not None:
                run_manager.on_llm_new_token(message.text, chunk=chunk)
            yield chunk

    def _pieces(self, messages: list[BaseMessage], **kw: Any) -> list[AIMessageChunk]:
        reply = self._answer(messages, **kw)
        pieces = [AIMessageChunk(content=w) for w in re.findall(r"\s+|\S+", reply.text)]
        for i, tool_call in enumerate(reply.tool_calls):
            piece = {
                "name": tool_call["name"],
                "args": json.dumps(tool_call["args"]),
                "id": tool_call["id"],
                "index": i,
                "type": "tool_call_chunk",
            }
            pieces.append(AIMessageChunk(content="", tool_call_chunks=[piece]))  # type: ignore[list-item]
        if not pieces or reply.response_metadata:
            pieces.append(AIMessageChunk(content="", response_metadata=reply.response_metadata))
        return pieces


class FlakyChatModel(ScriptedChatModel):
    """A scripted model whose first ``failures`` calls raise ``ConnectionError``."""

    failures: int = 1
    calls: int = 0

    def _answer(self, messages: list[BaseMessage], **kwargs: Any) -> AIMessage:
        with _LOCK:
            self.calls += 1
            failing = self.calls <= self.failures
        if failing:
            raise ConnectionError(f"provider unavailable (call {self.calls})")
        return super()._answer(messages, **kwargs)
