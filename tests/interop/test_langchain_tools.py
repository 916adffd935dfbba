"""LangChain tools in ToolNode / create_react_agent as LangGraph runs them (issue 22,
items 3 and 11): Command from a @tool, injected state hidden from the model, the run
config handed to tools, tool-call lists as input, tools already bound to the model."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolArg, InjectedToolCallId, tool
from tests.interop.lc_fakes import ScriptedChatModel

from stategraph.graph import START, MessagesState, StateGraph
from stategraph.prebuilt import InjectedState, ToolNode, create_react_agent
from stategraph.prebuilt.chat_agent_executor import AgentState, _should_bind_tools
from stategraph.types import Command


class UserState(AgentState):
    user_name: str


@tool
def remember_name(name: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
    """Remember the user's name."""
    return Command(
        update={
            "user_name": name,
            "messages": [ToolMessage(f"Saved {name}", tool_call_id=tool_call_id)],
        }
    )


@tool
async def aremember_name(name: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
    """Remember the user's name (async)."""
    return Command(
        update={
            "user_name": name,
            "messages": [ToolMessage(f"Saved {name}", tool_call_id=tool_call_id)],
        }
    )


def _call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def _agent(tool_obj: Any) -> Any:
    model = ScriptedChatModel(
        replies=[
            AIMessage("", tool_calls=[_call(tool_obj.name, {"name": "Ann"}, "c1")]),
            AIMessage("Hi Ann!"),
        ]
    )
    return create_react_agent(model, [tool_obj], state_schema=UserState)


def test_a_langchain_tool_returning_command_updates_the_state_in_the_agent() -> None:
    out = _agent(remember_name).invoke({"messages": [HumanMessage("I am Ann")], "user_name": ""})
    assert out["user_name"] == "Ann"
    tool_message = out["messages"][2]
    assert isinstance(tool_message, ToolMessage)
    assert (tool_message.content, tool_message.tool_call_id, tool_message.name) == (
        "Saved Ann",
        "c1",
        "remember_name",
    )
    assert [m.content for m in out["messages"]] == ["I am Ann", "", "Saved Ann", "Hi Ann!"]


def test_an_async_langchain_tool_returning_command_updates_the_state_in_the_agent() -> None:
    agent = _agent(aremember_name)
    out = asyncio.run(agent.ainvoke({"messages": [HumanMessage("I am Ann")], "user_name": ""}))
    assert out["user_name"] == "Ann"
    assert out["messages"][2].content == "Saved Ann"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_tool_node_applies_a_langchain_tools_command(mode: str) -> None:
    class State(MessagesState):
        user_name: str

    builder = StateGraph(State)
    builder.add_node("tools", ToolNode([remember_name]))
    builder.add_edge(START, "tools")
    graph = builder.compile()
    inp = {
        "messages": [AIMessage("", tool_calls=[_call("remember_name", {"name": "Bo"}, "c9")])],
        "user_name": "",
    }
    out = graph.invoke(inp) if mode == "sync" else asyncio.run(graph.ainvoke(inp))
    assert out["user_name"] == "Bo"
    assert out["messages"][-1].content == "Saved Bo"
    assert out["messages"][-1].tool_call_id == "c9"


def test_a_command_is_a_langchain_tool_output_once_langchain_is_in_use() -> None:
    ToolNode([remember_name])  # a tool node with a LangChain tool loads the bridge
    result = remember_name.invoke(_call("remember_name", {"name": "Zoe"}, "c3"))
    assert isinstance(result, Command)
    assert result.update["user_name"] == "Zoe"


def test_injected_state_in_a_langchain_tool_is_hidden_from_the_model() -> None:
    @tool
    def whoami(
        state: Annotated[dict, InjectedState], tool_call_id: Annotated[str, InjectedToolCallId]
    ) -> str:
        """Tell who is asking."""
        return f"{len(state['messages'])} messages, call {tool_call_id}"

    node = ToolNode([whoami])
    assert list(whoami.tool_call_schema.model_json_schema().get("properties", {})) == []
    out = node.invoke(
        {"messages": [HumanMessage("hi"), AIMessage("", tool_calls=[_call("whoami", {}, "c1")])]}
    )
    assert out["messages"][0].content == "2 messages, call c1"
    assert isinstance(node.tools_by_name["whoami"], BaseTool)


def _tools_graph(tools: list[Any]) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "tools")
    return builder.compile()


def test_plain_function_tools_get_the_run_config() -> None:
    def search(query: str, config: RunnableConfig) -> str:
        """Search the web."""
        return f"{config['configurable']['max_results']} results for {query}"

    def book(hotel: str, config: Annotated[RunnableConfig, InjectedToolArg]) -> str:
        """Book a hotel."""
        return f"booked {hotel} for {config['configurable']['user_id']}"

    node = ToolNode([search, book])
    assert isinstance(node.tools_by_name["search"], BaseTool)  # as LangGraph shows them
    for name in ("search", "book"):
        shown = node.tools_by_name[name].tool_call_schema.model_json_schema()
        assert "config" not in shown.get("properties", {})
    calls = [_call("search", {"query": "tea"}, "s1"), _call("book", {"hotel": "Ritz"}, "b1")]
    out = _tools_graph([search, book]).invoke(
        {"messages": [AIMessage("", tool_calls=calls)]},
        {"configurable": {"max_results": 3, "user_id": "u7"}},
    )
    assert [m.content for m in out["messages"][1:]] == ["3 results for tea", "booked Ritz for u7"]


def test_a_langchain_tool_gets_the_run_config() -> None:
    @tool
    def whoami(config: RunnableConfig) -> str:
        """Say who is asking."""
        return (
            f"user={config['configurable'].get('user_id')} tags={sorted(config.get('tags', []))} "
            f"app={config.get('metadata', {}).get('app')}"
        )

    out = _tools_graph([whoami]).invoke(
        {"messages": [AIMessage("", tool_calls=[_call("whoami", {}, "c1")])]},
        {"configurable": {"user_id": "u1"}, "tags": ["prod"], "metadata": {"app": "demo"}},
    )
    assert out["messages"][-1].content == "user=u1 tags=['prod'] app=demo"


def test_tool_node_takes_a_list_of_tool_calls_and_injects_the_graph_state() -> None:
    """LangChain's create_agent sends ``Send("tools", [tool_call])``."""
    from stategraph.types import Send

    @tool
    def count(state: Annotated[dict, InjectedState]) -> str:
        """Count the messages."""
        return str(len(state["messages"]))

    calls = [_call("count", {}, "k1")]
    builder = StateGraph(MessagesState)
    builder.add_node("model", lambda s: {"messages": [AIMessage("", tool_calls=calls)]})
    builder.add_node("tools", ToolNode([count]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", lambda s: [Send("tools", calls)], ["tools"])
    out = builder.compile().invoke({"messages": [HumanMessage("hi")]})
    assert out["messages"][-1].content == "2"
    assert out["messages"][-1].tool_call_id == "k1"


def test_tools_already_bound_to_the_model_are_not_bound_again() -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    class Bindable(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self.bind(tools=[t.name for t in tools], **kwargs)

    model = Bindable(messages=iter([AIMessage("done")]))

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    bound = model.bind_tools([ping], parallel_tool_calls=False)
    assert _should_bind_tools(model, [ping]) is True
    assert _should_bind_tools(bound, [ping]) is False
    with pytest.raises(
        ValueError, match=r"already has 1 tool\(s\) bound, but the agent was given 2"
    ):
        _should_bind_tools(bound, [ping, remember_name])
    agent = create_react_agent(bound, [ping])
    assert agent.invoke({"messages": [HumanMessage("hi")]})["messages"][-1].content == "done"
