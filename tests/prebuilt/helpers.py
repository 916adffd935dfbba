"""Fakes and small builders shared by the prebuilt tests."""

from __future__ import annotations

import asyncio
from typing import Any

from stategraph.graph import START, StateGraph
from stategraph.graph.message import MessagesState
from stategraph.messages import AIMessage, ToolCall


class Runner:
    """Run a compiled graph through either the sync or the async API."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    @property
    def is_async(self) -> bool:
        return self.mode == "async"

    def invoke(self, graph: Any, input: Any, config: Any = None, **kwargs: Any) -> Any:
        if self.is_async:
            return asyncio.run(graph.ainvoke(input, config, **kwargs))
        return graph.invoke(input, config, **kwargs)

    def stream(self, graph: Any, input: Any, config: Any = None, **kwargs: Any) -> list[Any]:
        if self.is_async:

            async def collect() -> list[Any]:
                return [chunk async for chunk in graph.astream(input, config, **kwargs)]

            return asyncio.run(collect())
        return list(graph.stream(input, config, **kwargs))


def call(name: str, args: dict[str, Any] | None = None, id: str = "c1") -> ToolCall:
    """A tool call as a model would emit it."""
    return ToolCall(name=name, args=dict(args or {}), id=id, type="tool_call")


def ai_calls(*calls: ToolCall, id: str | None = None) -> AIMessage:
    """An AI message requesting ``calls``."""
    return AIMessage("", tool_calls=list(calls), id=id)


def tool_graph(node: Any, state_schema: Any = MessagesState, **compile_kwargs: Any) -> Any:
    """``START -> tools`` around ``node``, compiled."""
    builder = StateGraph(state_schema)
    builder.add_node("tools", node)
    builder.add_edge(START, "tools")
    return builder.compile(**compile_kwargs)


def contents(messages: list[Any]) -> list[tuple[str, Any]]:
    """``(type, content)`` of each message."""
    return [(m.type, m.content) for m in messages]


class ScriptedModel:
    """A scripted chat model: answers with the given AI messages, in order.

    Records every input it sees (``seen``) and the tools ``bind_tools`` received.
    Answers without an id get ``ai-<n>`` so each answer is a distinct message.
    """

    def __init__(self, responses: list[AIMessage], *, cycle: bool = False) -> None:
        self.responses = list(responses)
        self.cycle = cycle
        self.seen: list[list[Any]] = []
        self.bound: list[Any] | None = None
        self.bind_count = 0

    def bind_tools(self, tools: list[Any]) -> ScriptedModel:
        self.bind_count += 1
        self.bound = list(tools)
        return self

    def _next(self, messages: list[Any]) -> AIMessage:
        self.seen.append(list(messages))
        index = len(self.seen) - 1
        if self.cycle:
            index %= len(self.responses)
        if index >= len(self.responses):
            raise AssertionError(f"the scripted model ran out of responses after {index} calls")
        response = self.responses[index]
        if response.id is None:
            response = response.copy(update={"id": f"ai-{len(self.seen)}"})
        return response


class FakeChatModel(ScriptedModel):
    """A scripted chat model with a sync ``invoke``."""

    def invoke(self, messages: list[Any]) -> AIMessage:
        return self._next(messages)


class AsyncOnlyChatModel(ScriptedModel):
    """A scripted chat model offering only ``ainvoke``."""

    async def ainvoke(self, messages: list[Any]) -> AIMessage:
        await asyncio.sleep(0)
        return self._next(messages)


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def fail(reason: str) -> str:
    """Always fails."""
    raise ValueError(f"bad {reason}")


async def aadd(a: int, b: int) -> int:
    """Add, asynchronously."""
    await asyncio.sleep(0)
    return a + b


class State(MessagesState):
    """Messages plus a user name."""

    user: str


def run_tools(run: Any, node: Any, *calls: Any, **state: Any) -> list[Any]:
    """Run ``node`` as ``START -> tools`` on one AI message with ``calls``; return its answers."""
    graph = tool_graph(node, State, store=state.pop("store", None))
    out = run.invoke(graph, {"messages": [ai_calls(*calls)], **state})
    return out["messages"][1:]


def as_tuples(messages: list[Any]) -> list[tuple[Any, ...]]:
    """``(content, name, tool_call_id, status)`` of each tool message."""
    return [(m.content, m.name, m.tool_call_id, m.status) for m in messages]
