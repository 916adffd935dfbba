"""astream_events(version="v2"/"v1"): LangChain-style events from a run, and the tools mode."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.callbacks import adispatch_custom_event, dispatch_custom_event
from stategraph.graph import END, START, StateGraph
from stategraph.graph.message import add_messages
from stategraph.messages import AIMessage
from stategraph.prebuilt import ToolNode


class State(TypedDict):
    word: str
    seen: Annotated[list[str], operator.add]


def _graph() -> Any:
    def first(state: State) -> dict[str, Any]:
        dispatch_custom_event("progress", {"at": "first"})
        return {"word": state["word"] + "1", "seen": ["1"]}

    def second(state: State) -> dict[str, Any]:
        return {"word": state["word"] + "2", "seen": ["2"]}

    def route(state: State) -> str:
        return "second"

    return (
        StateGraph(State)
        .add_node("first", first)
        .add_node("second", second)
        .add_edge(START, "first")
        .add_conditional_edges("first", route, ["second", END])
        .compile()
    )


def _short(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    ids = {e["run_id"]: e["name"] for e in events if e["event"].endswith("_start")}
    return [
        (e["event"], e["name"], tuple(e["tags"]), tuple(ids.get(p, "?") for p in e["parent_ids"]))
        for e in events
    ]


async def test_v2_events_have_langgraph_names_nesting_and_data() -> None:
    events = [
        e
        async for e in _graph().astream_events(
            {"word": "w", "seen": []}, {"tags": ["t"]}, version="v2"
        )
    ]
    assert _short(events) == [
        ("on_chain_start", "LangGraph", ("t",), ()),
        ("on_chain_start", "first", ("graph:step:1", "t"), ("LangGraph",)),
        ("on_custom_event", "progress", ("t",), ("LangGraph",)),
        ("on_chain_start", "route", ("seq:step:3", "t"), ("LangGraph", "first")),
        ("on_chain_end", "route", ("seq:step:3", "t"), ("LangGraph", "first")),
        ("on_chain_stream", "first", ("graph:step:1", "t"), ("LangGraph",)),
        ("on_chain_end", "first", ("graph:step:1", "t"), ("LangGraph",)),
        ("on_chain_stream", "LangGraph", ("t",), ()),
        ("on_chain_start", "second", ("graph:step:2", "t"), ("LangGraph",)),
        ("on_chain_stream", "second", ("graph:step:2", "t"), ("LangGraph",)),
        ("on_chain_end", "second", ("graph:step:2", "t"), ("LangGraph",)),
        ("on_chain_stream", "LangGraph", ("t",), ()),
        ("on_chain_end", "LangGraph", ("t",), ()),
    ]
    assert events[0]["data"] == {"input": {"word": "w", "seen": []}}
    assert events[2]["data"] == {"at": "first"}
    assert events[6]["data"] == {
        "output": {"word": "w1", "seen": ["1"]},
        "input": {"word": "w", "seen": []},
    }
    assert events[7]["data"] == {"chunk": {"first": {"word": "w1", "seen": ["1"]}}}
    assert events[-1]["data"] == {"output": {"word": "w12", "seen": ["1", "2"]}}
    assert events[1]["metadata"]["langgraph_node"] == "first"
    assert events[0]["metadata"] == {"ls_integration": "langgraph"}


async def test_filters_select_events() -> None:
    graph = _graph()
    names = {
        e["name"]
        async for e in graph.astream_events(
            {"word": "w", "seen": []}, version="v2", include_names=["second"]
        )
    }
    assert names == {"second"}
    kinds = {
        e["event"]
        async for e in graph.astream_events(
            {"word": "w", "seen": []}, version="v2", exclude_tags=["graph:step:1", "graph:step:2"]
        )
    }
    assert "on_chain_start" in kinds
    events = [
        e
        async for e in graph.astream_events(
            {"word": "w", "seen": []}, version="v2", include_types=["custom"]
        )
    ]
    assert [e["event"] for e in events] == ["on_custom_event"]


async def test_v1_is_accepted_with_a_deprecation_warning() -> None:
    with pytest.warns(DeprecationWarning, match="v1"):
        events = [e async for e in _graph().astream_events({"word": "w", "seen": []}, version="v1")]
    assert events[-1]["event"] == "on_chain_end"
    assert events[-1]["data"]["output"] == {"second": {"word": "w12", "seen": ["2"]}}


async def test_errors_propagate_and_bad_versions_are_rejected() -> None:
    def broken(state: State) -> dict[str, Any]:
        raise ValueError("node broke")

    graph = StateGraph(State).add_node("broken", broken).add_edge(START, "broken").compile()
    seen = []
    with pytest.raises(ValueError, match="node broke"):
        async for event in graph.astream_events({"word": "w", "seen": []}, version="v2"):
            seen.append(event["event"])
    assert seen == ["on_chain_start", "on_chain_start"]
    with pytest.raises(ValueError, match="version"):
        graph.astream_events({"word": "w", "seen": []}, version="v9")
    with pytest.raises(NotImplementedError, match="astream_events"):
        graph.stream_events({"word": "w", "seen": []}, version="v2")


async def test_async_custom_events() -> None:
    async def node(state: State) -> dict[str, Any]:
        await adispatch_custom_event("async-progress", 3)
        return {"seen": ["n"]}

    graph = StateGraph(State).add_node("node", node).add_edge(START, "node").compile()
    custom = [
        e["data"]
        async for e in graph.astream_events({"word": "w", "seen": []}, version="v2")
        if e["event"] == "on_custom_event"
    ]
    assert custom == [3]


class ChatState(TypedDict):
    messages: Annotated[list, add_messages]


def _tool_graph(tools: list[Any]) -> Any:
    def caller(state: ChatState) -> dict[str, Any]:
        calls = [{"name": t.__name__, "args": {"x": 2}, "id": f"call-{t.__name__}"} for t in tools]
        return {"messages": [AIMessage(content="", tool_calls=calls)]}

    return (
        StateGraph(ChatState)
        .add_node("caller", caller)
        .add_node("tools", ToolNode(tools, handle_tool_errors=False))
        .add_edge(START, "caller")
        .add_edge("caller", "tools")
        .compile()
    )


def double(x: int) -> int:
    """Double x."""
    return 2 * x


def explode(x: int) -> int:
    """Always fails."""
    raise RuntimeError("tool exploded")


async def test_tool_calls_are_events_nested_in_the_tool_node() -> None:
    events = [e async for e in _tool_graph([double]).astream_events({"messages": []}, version="v2")]
    tool = [(e["event"], e["name"]) for e in events if "tool" in e["event"]]
    assert tool == [("on_tool_start", "double"), ("on_tool_end", "double")]
    start = next(e for e in events if e["event"] == "on_tool_start")
    assert start["data"] == {"input": {"x": 2}}
    node = next(e for e in events if e["event"] == "on_chain_start" and e["name"] == "tools")
    assert start["parent_ids"][-1] == node["run_id"]
    end = next(e for e in events if e["event"] == "on_tool_end")
    assert end["data"]["output"].content == "4"


def test_tools_stream_mode() -> None:
    chunks = list(
        _tool_graph([double]).stream({"messages": []}, stream_mode=["tools"], subgraphs=True)
    )
    assert [(ns, mode, p["event"], p["tool_call_id"]) for ns, mode, p in chunks] == [
        ((), "tools", "tool-started", "call-double"),
        ((), "tools", "tool-finished", "call-double"),
    ]
    assert chunks[0][2]["tool_name"] == "double" and chunks[0][2]["input"] == {"x": 2}
    with pytest.raises(RuntimeError, match="tool exploded"):
        for _, _, payload in _tool_graph([explode]).stream(
            {"messages": []}, stream_mode=["tools"], subgraphs=True
        ):
            last = payload
    assert last == {
        "event": "tool-error",
        "tool_call_id": "call-explode",
        "message": "tool exploded",
    }
