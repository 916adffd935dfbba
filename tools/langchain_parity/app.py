"""A LangGraph-style app using a LangChain chat model, run on LangGraph or stategraph.

    python app.py langgraph|stategraph [async]

Prints every ``messages``/``updates`` chunk and the final state, with generated ids
masked, so two runs can be compared line by line (see compare.py).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import re
import sys
from collections.abc import Iterator
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool

LIB = sys.argv[1]
USE_ASYNC = len(sys.argv) > 2 and sys.argv[2] == "async"
graph_mod = importlib.import_module(f"{LIB}.graph")
prebuilt = importlib.import_module(f"{LIB}.prebuilt")
memory = importlib.import_module(f"{LIB}.checkpoint.memory")


class Scripted(BaseChatModel):
    """Answers from a script; streams word by word, then each tool call."""

    replies: list[AIMessage]
    position: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:
        return self

    def _next(self) -> AIMessage:
        reply = self.replies[self.position]
        self.position += 1
        return reply

    def _generate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next())])

    def _stream(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Iterator[ChatGenerationChunk]:
        reply = self._next()
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


def script() -> Scripted:
    return Scripted(
        replies=[
            AIMessage(
                "Let me add", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "call_1"}]
            ),
            AIMessage("The sum is 3"),
        ]
    )


def masked(value: Any) -> str:
    text = repr(value)
    text = re.sub(r"lc_run--[0-9a-f-]+", "<run-id>", text)
    return re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uuid>", text)


def show(graph: Any, label: str, **stream_options: Any) -> None:
    config = {"configurable": {"thread_id": label}, "tags": ["run-tag"], "metadata": {"app": "x"}}
    request = {"messages": [("user", "add 1 and 2")]}
    modes = ["messages", "updates"]
    if USE_ASYNC:

        async def collect() -> list[Any]:
            return [
                c async for c in graph.astream(request, config, stream_mode=modes, **stream_options)
            ]

        chunks = asyncio.run(collect())
    else:
        chunks = list(graph.stream(request, config, stream_mode=modes, **stream_options))
    print(f"===== {label}")
    for chunk in chunks:
        *ns, mode, payload = chunk
        if mode == "messages":
            message, meta = payload
            meta = {k: v for k, v in sorted(meta.items()) if k != "lc_versions"}
            print(masked(ns), mode, type(message).__name__, masked(message), masked(meta))
        else:
            print(masked(ns), mode, masked(payload))
    print("final", masked(graph.get_state(config).values))


def main() -> None:
    saver = memory.InMemorySaver
    show(prebuilt.create_react_agent(script(), [add], checkpointer=saver()), "react agent")

    model = script()

    def call_model(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = graph_mod.StateGraph(graph_mod.MessagesState)
    builder.add_node("agent", call_model)
    builder.add_node("tools", prebuilt.ToolNode([add]))
    builder.add_edge(graph_mod.START, "agent")
    builder.add_conditional_edges("agent", prebuilt.tools_condition)
    builder.add_edge("tools", "agent")
    hand_built = builder.compile(checkpointer=saver())
    show(hand_built, "hand-built agent")

    parent = graph_mod.StateGraph(graph_mod.MessagesState)
    parent.add_node("inner", prebuilt.create_react_agent(script(), [add]))
    parent.add_edge(graph_mod.START, "inner")
    show(parent.compile(checkpointer=saver()), "agent as subgraph", subgraphs=True)


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")
    main()
