"""A ``ToolNode`` sent a bare list of tool calls (``Send("tools", [call])``, as
LangChain's ``create_agent`` does) injects the graph's state as the task sees it.

The state then comes from the running task, not from the node's input; it was lost
once when tasks began reading through ``Task.read`` and the lookup still asked for the
old per-task reader."""

from __future__ import annotations

from typing import Annotated, Any

from stategraph.graph import START, StateGraph
from stategraph.graph.message import MessagesState
from stategraph.messages import AIMessage, HumanMessage
from stategraph.prebuilt import InjectedState, ToolNode
from stategraph.types import Send


def test_a_list_of_tool_calls_gets_the_graph_state_injected() -> None:
    seen: list[Any] = []

    def count(state: Annotated[dict, InjectedState]) -> str:
        """Count the messages."""
        seen.append(state)
        return str(len(state["messages"]))

    calls = [{"name": "count", "args": {}, "id": "k1", "type": "tool_call"}]
    builder = StateGraph(MessagesState)
    builder.add_node("model", lambda s: {"messages": [AIMessage("", tool_calls=calls)]})
    builder.add_node("tools", ToolNode([count]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", lambda s: [Send("tools", calls)], ["tools"])
    out = builder.compile().invoke({"messages": [HumanMessage("hi")]})
    assert out["messages"][-1].content == "2"
    assert out["messages"][-1].tool_call_id == "k1"
    assert [m.content for m in seen[0]["messages"]] == ["hi", ""]
