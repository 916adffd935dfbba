"""Prebuilt pieces of the LangChain boundary (issue 22, items 11 and 12) that need no
langchain-core: the run config injected into plain-function tools and into
``prompt(state, config)``; ``ToolCallTransformer``'s ``run.tool_calls``; ``omit_payload``."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest

from stategraph.config import RunnableConfig
from stategraph.graph import START, MessagesState, StateGraph
from stategraph.messages import AIMessage, HumanMessage
from stategraph.prebuilt import InjectedToolArg, ToolCallTransformer, ToolNode, create_react_agent
from stategraph.prebuilt._tools import Tool
from stategraph.types import TracePolicy, omit_payload


def _call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def search(query: str, config: RunnableConfig) -> str:
    """Search the web."""
    return f"{config['configurable']['max_results']} results for {query}"


def book(hotel: str, config: Annotated[RunnableConfig, InjectedToolArg]) -> str:
    """Book a hotel."""
    return f"booked {hotel} for {config['configurable']['user_id']}"


async def asearch(query: str, config: RunnableConfig) -> str:
    """Search the web (async)."""
    return f"{config['configurable']['max_results']} async results for {query}"


def _graph(tools: list[Any]) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "tools")
    return builder.compile()


CONFIG = {"configurable": {"max_results": 3, "user_id": "u7"}}


def test_the_run_config_is_hidden_from_the_model() -> None:
    for fn in (search, book):
        schema = Tool.from_function(fn).json_schema()
        assert "config" not in schema["properties"]
        assert "config" not in schema.get("required", [])


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_plain_function_tools_get_the_run_config(mode: str) -> None:
    calls = [_call("search", {"query": "tea"}, "s1"), _call("book", {"hotel": "Ritz"}, "b1")]
    graph = _graph([search, book])
    inp = {"messages": [AIMessage("", tool_calls=calls)]}
    out = graph.invoke(inp, CONFIG) if mode == "sync" else asyncio.run(graph.ainvoke(inp, CONFIG))
    assert [m.content for m in out["messages"][1:]] == ["3 results for tea", "booked Ritz for u7"]


def test_async_plain_function_tools_get_the_run_config() -> None:
    graph = _graph([asearch])
    inp = {"messages": [AIMessage("", tool_calls=[_call("asearch", {"query": "tea"}, "a1")])]}
    out = asyncio.run(graph.ainvoke(inp, CONFIG))
    assert out["messages"][-1].content == "3 async results for tea"


def _echo_model(messages: list[Any]) -> AIMessage:
    return AIMessage(f"system said: {messages[0].content}")


def test_prompt_functions_get_the_run_config() -> None:
    def prompt(state: Any, config: RunnableConfig) -> list[Any]:
        return [("system", f"You help {config['configurable']['user']}."), *state["messages"]]

    def kw_prompt(state: Any, *, config: RunnableConfig) -> list[Any]:
        return [("system", f"Hello {config['configurable']['user']}."), *state["messages"]]

    cfg = {"configurable": {"user": "Ann"}}
    agent = create_react_agent(_echo_model, [], prompt=prompt)
    out = agent.invoke({"messages": [HumanMessage("hi")]}, cfg)
    assert out["messages"][-1].content == "system said: You help Ann."
    agent = create_react_agent(_echo_model, [], prompt=kw_prompt)
    assert agent.invoke({"messages": [HumanMessage("hi")]}, cfg)["messages"][-1].content == (
        "system said: Hello Ann."
    )


def test_async_prompt_functions_get_the_run_config() -> None:
    async def prompt(state: Any, config: RunnableConfig) -> list[Any]:
        return [("system", f"Async {config['configurable']['user']}."), *state["messages"]]

    async def amodel(messages: list[Any]) -> AIMessage:
        return AIMessage(f"system said: {messages[0].content}")

    agent = create_react_agent(amodel, [], prompt=prompt)
    out = asyncio.run(
        agent.ainvoke({"messages": [HumanMessage("hi")]}, {"configurable": {"user": "Bo"}})
    )
    assert out["messages"][-1].content == "system said: Async Bo."


def test_one_parameter_prompts_are_called_with_the_state_only() -> None:
    seen: list[Any] = []

    def prompt(state: Any) -> list[Any]:
        seen.append(sorted(state))
        return list(state["messages"])

    create_react_agent(_echo_model, [], prompt=prompt).invoke({"messages": [HumanMessage("x")]})
    assert seen == [["messages", "remaining_steps"]]


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def fail(x: int) -> int:
    """Always fails."""
    raise RuntimeError(f"no {x}")


def test_tool_call_transformer_projects_each_tool_call() -> None:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode([add, fail], handle_tool_errors=True))
    builder.add_edge(START, "tools")
    graph = builder.compile(transformers=[ToolCallTransformer])
    calls = [_call("add", {"a": 1, "b": 2}, "c1"), _call("fail", {"x": 7}, "c2")]
    run = graph.stream_events({"messages": [AIMessage("", tool_calls=calls)]}, version="v3")
    handles = list(run.tool_calls)
    assert [(h.tool_call_id, h.tool_name, h.input) for h in handles] == [
        ("c1", "add", {"a": 1, "b": 2}),
        ("c2", "fail", {"x": 7}),
    ]
    first, second = handles
    assert first.completed and first.error is None and first.output.content == "3"
    assert second.completed and second.output is None and second.error == "no 7"
    assert list(first.output_deltas) == []


def test_omit_payload_records_nothing() -> None:
    assert omit_payload({"secret": 1}) == {}
    policy = TracePolicy(process_inputs=omit_payload)
    assert policy.process_inputs is omit_payload
