"""A small assistant served by ``stategraph serve``: it answers, asks a human before
it books anything (``interrupt``), and remembers bookings in the store.

The chat model is a scripted fake, so the example runs offline; swap in
``stategraph.models.openai.ChatOpenAI`` (or any model) for a real one.
"""

from __future__ import annotations

from typing import Annotated, Any

from typing_extensions import TypedDict

from stategraph.graph import END, START, StateGraph
from stategraph.graph.message import add_messages
from stategraph.messages import AIMessage, ToolMessage
from stategraph.runtime import Runtime
from stategraph.testing import FakeChatModel
from stategraph.types import interrupt

model = FakeChatModel(
    [
        AIMessage(
            "",
            tool_calls=[{"name": "book", "args": {"room": "Ada", "hour": 10}, "id": "call-1"}],
        ),
        "Booked room Ada at 10:00.",
    ],
    cycle=True,
)


class State(TypedDict, total=False):
    messages: Annotated[list[Any], add_messages]


def assistant(state: State) -> dict[str, Any]:
    return {"messages": [model.invoke(state["messages"])]}


async def book(state: State, runtime: Runtime[Any]) -> dict[str, Any]:
    call = state["messages"][-1].tool_calls[0]
    answer = interrupt({"question": f"Book room {call['args']['room']}?", "args": call["args"]})
    if answer != "yes":
        text = "The user declined the booking."
    else:
        assert runtime.store is not None
        # the user's own namespace (the server puts the authenticated user here)
        user = runtime.server_info.user if runtime.server_info is not None else None
        owner = user["identity"] if isinstance(user, dict) else "anonymous"
        await runtime.store.aput((owner, "bookings"), call["id"], dict(call["args"]))
        text = f"Booked {call['args']}."
    return {"messages": [ToolMessage(text, tool_call_id=call["id"])]}


def route(state: State) -> str:
    last = state["messages"][-1]
    return "book" if getattr(last, "tool_calls", None) else END


builder = StateGraph(State)
builder.add_node("assistant", assistant)
builder.add_node("book", book)
builder.add_edge(START, "assistant")
builder.add_conditional_edges("assistant", route, ["book", END])
builder.add_edge("book", "assistant")
graph = builder.compile()
