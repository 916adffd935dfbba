"""The chat agent behind the React page: it streams its answer token by token, asks
to call a weather tool, and waits for the user's approval (``interrupt``) before the
tool runs.

The chat model is a scripted fake that takes a little time per token, so the example
runs offline and the page visibly streams; swap in a real model (for instance
``stategraph.models.openai.ChatOpenAI``) and the page works unchanged.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any

from typing_extensions import TypedDict

from stategraph.graph import END, START, StateGraph
from stategraph.graph.message import add_messages
from stategraph.messages import AIMessage, AIMessageChunk, ToolMessage
from stategraph.testing import FakeChatModel
from stategraph.types import interrupt

TOKEN_DELAY = 0.04
"""Seconds between two streamed tokens (a real model takes about as long)."""

FORECASTS = {"paris": "sunny, 21 °C", "oslo": "snow, -3 °C", "lima": "cloudy, 17 °C"}


def get_weather(city: str) -> str:
    """Today's weather in ``city`` (from a small table: the example runs offline)."""
    return f"{city}: {FORECASTS.get(city.lower(), 'mild, 15 °C')}"


def _city(text: str) -> str:
    """The city a question names: its last capitalised word (Paris by default)."""
    words = [w.strip("?!.,") for w in text.split()]
    named = [w for w in words if w[:1].isupper() and w.lower() not in {"what", "how", "is"}]
    return named[-1] if named else "Paris"


def _reply(messages: list[Any]) -> AIMessage:
    """The scripted model: ask for the tool on a question, then answer from its result."""
    last = messages[-1]
    # by type name, not class: with langchain-core loaded, add_messages builds its classes
    if getattr(last, "type", None) == "tool":
        if last.status == "error":
            return AIMessage(f"All right, I will not look it up ({last.content}).")
        return AIMessage(f"Here is today's forecast for {last.content}. Enjoy your day!")
    question = last.content if getattr(last, "type", None) == "human" else ""
    city = _city(question if isinstance(question, str) else "")
    return AIMessage(
        f"Let me look up the weather in {city} for you.",
        tool_calls=[
            {"name": "get_weather", "args": {"city": city}, "id": f"call-{uuid.uuid4().hex[:8]}"}
        ],
    )


class ScriptedChatModel(FakeChatModel):
    """:class:`FakeChatModel` pausing :data:`TOKEN_DELAY` before each token."""

    async def _astream(
        self, messages: list[Any], *, tools: Any, tool_choice: Any, **options: Any
    ) -> AsyncIterator[AIMessageChunk]:
        async for chunk in super()._astream(
            messages, tools=tools, tool_choice=tool_choice, **options
        ):
            await asyncio.sleep(TOKEN_DELAY)
            yield chunk


model = ScriptedChatModel([_reply], cycle=True)


class State(TypedDict, total=False):
    messages: Annotated[list[Any], add_messages]


async def assistant(state: State) -> dict[str, Any]:
    """The model's turn (streamed to the page through ``messages-tuple``)."""
    return {"messages": [await model.ainvoke(state["messages"])]}


def tools(state: State) -> dict[str, Any]:
    """Ask the user before each tool call; run the approved ones."""
    results = []
    for call in state["messages"][-1].tool_calls:
        answer = interrupt(
            {
                "question": f"Call {call['name']}({call['args']})?",
                "tool_call": {"name": call["name"], "args": call["args"], "id": call["id"]},
            }
        )
        approved = isinstance(answer, dict) and answer.get("approved") is True
        if approved:
            results.append(
                ToolMessage(get_weather(**call["args"]), tool_call_id=call["id"], name=call["name"])
            )
        else:
            results.append(
                ToolMessage(
                    "the user declined the call",
                    tool_call_id=call["id"],
                    name=call["name"],
                    status="error",
                )
            )
    return {"messages": results}


def route(state: State) -> str:
    """To the tools when the model asked for one, else the end."""
    return "tools" if getattr(state["messages"][-1], "tool_calls", None) else END


builder = StateGraph(State)
builder.add_node("assistant", assistant)
builder.add_node("tools", tools)
builder.add_edge(START, "assistant")
builder.add_conditional_edges("assistant", route, ["tools", END])
builder.add_edge("tools", "assistant")
graph = builder.compile()
