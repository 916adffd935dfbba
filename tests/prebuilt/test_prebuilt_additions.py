"""ValidationNode, ToolRuntime, tool-call wrappers, model hooks, AgentStatePydantic and
the human-in-the-loop shapes (behaviour matched against LangGraph 1.2 by experiment)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel, field_validator

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.graph.message import MessagesState
from stategraph.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from stategraph.prebuilt import (
    AgentStatePydantic,
    ToolCallRequest,
    ToolNode,
    ToolRuntime,
    ValidationNode,
    create_react_agent,
)
from stategraph.prebuilt.interrupt import (
    ActionRequest,
    HumanInterrupt,
    HumanInterruptConfig,
    HumanResponse,
)
from stategraph.testing import FakeChatModel
from stategraph.types import Command, interrupt


class Pick(BaseModel):
    """Pick the number 37."""

    a: int

    @field_validator("a")
    @classmethod
    def only_37(cls, value: int) -> int:
        if value != 37:
            raise ValueError("Only 37 is allowed")
        return value


def scale(x: int) -> str:
    """Scale x."""
    return str(x)


def calls(*specs: tuple[str, dict[str, Any], str]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in specs])


# ---------------------------------------------------------------- ValidationNode


def test_validation_node_answers_each_call() -> None:
    node = ValidationNode([Pick, scale])
    ai = calls(("Pick", {"a": 37}, "1"), ("Pick", {"a": 3}, "2"), ("scale", {"x": "5"}, "3"))
    out = node.invoke({"messages": [HumanMessage("q"), ai]})["messages"]
    assert [(m.tool_call_id, m.name) for m in out] == [("1", "Pick"), ("2", "Pick"), ("3", "scale")]
    assert out[0].content == '{"a":37}' and out[0].additional_kwargs == {}
    assert out[2].content == '{"x":5}'
    assert out[1].additional_kwargs == {"is_error": True}
    assert "Only 37 is allowed" in out[1].content
    assert out[1].content.endswith("\n\nRespond after fixing all validation errors.")
    assert isinstance(node.invoke([ai]), list)
    assert set(node.schemas_by_name) == {"Pick", "scale"}


def test_validation_node_custom_errors_and_bad_input() -> None:
    node = ValidationNode(
        [Pick], format_error=lambda exc, call, schema: f"fix {call['id']} ({schema.__name__})"
    )
    [message] = node.invoke([calls(("Pick", {"a": 1}, "9"))])
    assert message.content == "fix 9 (Pick)"
    with pytest.raises(ValueError, match="last message is not an AIMessage"):
        node.invoke({"messages": [HumanMessage("x")]})
    with pytest.raises(KeyError, match="no schema for tool call 'nope'"):
        node.invoke([calls(("nope", {}, "1"))])
    with pytest.raises(TypeError, match="list of schemas"):
        ValidationNode(Pick)  # type: ignore[arg-type]


def test_validation_node_in_a_reprompt_loop() -> None:
    model = FakeChatModel([calls(("Pick", {"a": 1}, "c1")), calls(("Pick", {"a": 37}, "c2"))])
    model = model.bind_tools([Pick])

    def ask(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def again(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "model" if last.additional_kwargs.get("is_error") else "__end__"

    builder = StateGraph(MessagesState)
    builder.add_node("model", ask)
    builder.add_node("validation", ValidationNode([Pick]))
    builder.add_edge(START, "model")
    builder.add_edge("model", "validation")
    builder.add_conditional_edges("validation", again)
    out = builder.compile().invoke({"messages": [("user", "pick")]})
    assert [type(m).__name__ for m in out["messages"]] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
        "ToolMessage",
    ]
    assert json.loads(out["messages"][-1].content) == {"a": 37}


# ---------------------------------------------------------------- ToolRuntime


def tool_graph(node: ToolNode, **compile_options: Any) -> Any:
    builder = StateGraph(MessagesState, context_schema=dict)
    builder.add_node("tools", node)
    builder.add_edge(START, "tools")
    return builder.compile(**compile_options)


def test_tool_runtime_is_injected_and_hidden_from_the_model() -> None:
    from stategraph.prebuilt import Tool
    from stategraph.store.memory import InMemoryStore

    def lookup(q: str, runtime: ToolRuntime) -> str:
        """Look something up."""
        runtime.stream_writer({"looked_up": q})
        return (
            f"{q}|{runtime.tool_call_id}|{len(runtime.state['messages'])}|"
            f"{runtime.context['user']}|{runtime.store is not None}|"
            f"{[t.name for t in runtime.tools]}|{runtime.config['metadata']['langgraph_node']}"
        )

    schema = Tool.from_function(lookup).json_schema()
    assert list(schema["properties"]) == ["q"]
    graph = tool_graph(ToolNode([lookup]), store=InMemoryStore())
    chunks = list(
        graph.stream(
            {"messages": [calls(("lookup", {"q": "x"}, "c1"))]},
            context={"user": "ann"},
            stream_mode=["custom", "values"],
        )
    )
    assert ("custom", {"looked_up": "x"}) in chunks
    final = chunks[-1][1]["messages"][-1]
    assert final.content == "x|c1|1|ann|True|['lookup']|tools"


# ---------------------------------------------------------------- tool-call wrappers


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_wrapper_can_rewrite_short_circuit_and_observe() -> None:
    seen: list[Any] = []

    def wrap(request: ToolCallRequest, execute: Any) -> Any:
        seen.append((request.tool_call["name"], getattr(request.tool, "name", None)))
        assert isinstance(request.runtime, ToolRuntime)
        assert request.runtime.tool_call_id == request.tool_call["id"]
        if request.tool_call["args"].get("a") == 99:
            return ToolMessage("blocked", tool_call_id=request.tool_call["id"])
        if request.tool is None:
            return execute(request)
        doubled = {**request.tool_call, "args": {"a": request.tool_call["args"]["a"] * 2, "b": 0}}
        return execute(request.override(tool_call=doubled))

    graph = tool_graph(ToolNode([add], wrap_tool_call=wrap))
    out = graph.invoke(
        {
            "messages": [
                calls(
                    ("add", {"a": 5, "b": 1}, "c1"),
                    ("add", {"a": 99, "b": 1}, "c2"),
                    ("nope", {}, "c3"),
                )
            ]
        }
    )
    results = out["messages"][1:]
    assert [(m.tool_call_id, m.content) for m in results[:2]] == [("c1", "10"), ("c2", "blocked")]
    assert results[2].status == "error" and "nope is not a valid tool" in results[2].content
    assert ("nope", None) in seen


def test_wrapper_errors_name_the_node() -> None:
    graph = tool_graph(ToolNode([add], wrap_tool_call=lambda request, execute: "plain text"))
    with pytest.raises(TypeError, match="ToolNode 'tools': the tool-call wrapper returned str"):
        graph.invoke({"messages": [calls(("add", {"a": 1, "b": 1}, "c"))]})
    with pytest.raises(TypeError, match="wrap_tool_call=3"):
        ToolNode([add], wrap_tool_call=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="override\\(\\) got unknown field"):
        ToolCallRequest({"name": "add"}, None, {}, None).override(nope=1)


def test_async_wrappers() -> None:
    log: list[str] = []

    async def awrap(request: ToolCallRequest, execute: Any) -> Any:
        log.append("async")
        return await execute(request)

    def wrap(request: ToolCallRequest, execute: Any) -> Any:
        log.append("sync")
        return execute(request)

    both = tool_graph(ToolNode([add], wrap_tool_call=wrap, awrap_tool_call=awrap))
    sync_only = tool_graph(ToolNode([add], wrap_tool_call=wrap))
    request = {"messages": [calls(("add", {"a": 1, "b": 2}, "c"))]}

    async def go() -> tuple[Any, Any]:
        return await both.ainvoke(request), await sync_only.ainvoke(request)

    first, second = asyncio.run(go())
    assert first["messages"][-1].content == "3" and second["messages"][-1].content == "3"
    assert log == ["async", "sync"]
    both.invoke(request)
    assert log[-1] == "sync"


def test_tool_node_tags_reach_the_graph() -> None:
    graph = tool_graph(ToolNode([add], tags=["nostream"]))
    out = list(
        graph.stream({"messages": [calls(("add", {"a": 1, "b": 2}, "c"))]}, stream_mode="messages")
    )
    assert out == []


# ---------------------------------------------------------------- model hooks


def test_pre_model_hook_gives_the_model_its_own_input() -> None:
    model = FakeChatModel([calls(("add", {"a": 1, "b": 2}, "c")), "done"])
    seen_by_hook: list[int] = []

    def trim(state: Any) -> dict[str, Any]:
        seen_by_hook.append(len(state["messages"]))
        return {"llm_input_messages": [HumanMessage("summary"), *state["messages"][-1:]]}

    agent = create_react_agent(model, [add], pre_model_hook=trim)
    out = agent.invoke({"messages": [("user", "q")]})
    assert list(out) == ["messages"]
    assert len(out["messages"]) == 4  # the state keeps everything
    assert [[m.content for m in c] for c in model.calls] == [["summary", "q"], ["summary", "3"]]
    assert seen_by_hook == [1, 3]


def test_pre_model_hook_can_rewrite_the_state() -> None:
    model = FakeChatModel(["ok"])

    def reset(state: Any) -> dict[str, Any]:
        return {"messages": [RemoveMessage(id="__remove_all__"), HumanMessage("only this")]}

    out = create_react_agent(model, [add], pre_model_hook=reset).invoke(
        {"messages": [("user", "a"), ("user", "b")]}
    )
    assert [m.content for m in out["messages"]] == ["only this", "ok"]


def test_post_model_hook_runs_before_routing() -> None:
    model = FakeChatModel([calls(("add", {"a": 1, "b": 2}, "c")), "done"])
    seen: list[str] = []

    def guard(state: Any) -> dict[str, Any]:
        seen.append(state["messages"][-1].content or "<tool call>")
        return {}

    agent = create_react_agent(model, [add], post_model_hook=guard)
    drawing = agent.get_graph().draw_mermaid()
    assert "agent --> post_model_hook" in drawing
    out = agent.invoke({"messages": [("user", "q")]})
    assert seen == ["<tool call>", "done"]
    assert out["messages"][-1].content == "done"


def test_post_model_hook_answering_the_call_itself_goes_back_to_the_model() -> None:
    model = FakeChatModel([calls(("add", {"a": 1, "b": 2}, "c")), "after review"])

    def review(state: Any) -> dict[str, Any]:
        last = state["messages"][-1]
        if getattr(last, "tool_calls", None):
            return {"messages": [ToolMessage("denied by reviewer", tool_call_id="c")]}
        return {}

    out = create_react_agent(model, [add], post_model_hook=review).invoke(
        {"messages": [("user", "q")]}
    )
    assert [m.content for m in out["messages"]][-2:] == ["denied by reviewer", "after review"]


def test_agent_state_pydantic() -> None:
    agent = create_react_agent(FakeChatModel(["hi"]), [add], state_schema=AgentStatePydantic)
    out = agent.invoke({"messages": [("user", "q")]})
    assert [m.content for m in out["messages"]] == ["q", "hi"]
    assert AgentStatePydantic(messages=[]).remaining_steps == 25


# ---------------------------------------------------------------- human in the loop


def test_human_interrupt_round_trip() -> None:
    def review(state: MessagesState) -> dict[str, Any]:
        request = HumanInterrupt(
            action_request=ActionRequest(action="send_email", args={"to": "x"}),
            config=HumanInterruptConfig(
                allow_ignore=True, allow_respond=True, allow_edit=True, allow_accept=True
            ),
            description="Send it?",
        )
        [answer] = interrupt([request])
        return {"messages": [AIMessage(f"{answer['type']}:{answer['args']['args']['to']}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "hitl"}}
    first = graph.invoke({"messages": []}, config)
    asked = first["__interrupt__"][0].value[0]
    assert asked["action_request"] == {"action": "send_email", "args": {"to": "x"}}
    edited = HumanResponse(type="edit", args=ActionRequest(action="send_email", args={"to": "y"}))
    out = graph.invoke(Command(resume=[edited]), config)
    assert out["messages"][-1].content == "edit:y"
    assert HumanResponse.__required_keys__ == {"type", "args"}
