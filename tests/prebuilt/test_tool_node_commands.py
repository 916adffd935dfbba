"""ToolNode injection (state, store, call id) and tools returning Commands."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from stategraph.graph import START, StateGraph
from stategraph.graph.message import MessagesState, add_messages
from stategraph.messages import AIMessage, ToolMessage
from stategraph.prebuilt import (
    InjectedState,
    InjectedStore,
    InjectedToolCallId,
    ToolNode,
)
from stategraph.store.base import BaseStore
from stategraph.store.memory import InMemoryStore
from stategraph.types import Command

from .helpers import Runner, State, add, ai_calls, as_tuples, call, run_tools, tool_graph


# ---------------------------------------------------------------------- injection
def test_injected_state_store_and_call_id(run: Runner) -> None:
    def lookup(
        key: str,
        state: Annotated[dict, InjectedState],
        user: Annotated[str, InjectedState("user")],
        store: Annotated[BaseStore, InjectedStore()],
        call_id: Annotated[str, InjectedToolCallId],
    ) -> str:
        """Look up ``key`` for the user."""
        item = store.get(("prefs", user), key)
        return f"{user}:{item.value['v'] if item else None}:{len(state['messages'])}:{call_id}"

    store = InMemoryStore()
    store.put(("prefs", "ann"), "color", {"v": "blue"})
    out = run_tools(
        run, ToolNode([lookup]), call("lookup", {"key": "color"}, "c-9"), user="ann", store=store
    )
    assert out[0].content == "ann:blue:1:c-9"


def test_injected_store_without_a_store_is_an_error(run: Runner) -> None:
    def needs(store: Annotated[Any, InjectedStore()]) -> str:
        """Needs a store."""
        return "x"

    with pytest.raises(ValueError, match="Tool 'needs' asks for the store in parameter 'store'"):
        run_tools(run, ToolNode([needs]), call("needs"))


def test_missing_state_key_is_an_error(run: Runner) -> None:
    def who(user: Annotated[str, InjectedState("user")]) -> str:
        """User."""
        return user

    with pytest.raises(KeyError, match="has no key 'user'"):
        run_tools(run, ToolNode([who]), call("who"))


def test_injected_state_from_a_pydantic_state(run: Runner) -> None:
    class Chat(BaseModel):
        messages: Annotated[list, add_messages]
        topic: str = "none"

    def topic(
        current: Annotated[str, InjectedState("topic")], state: Annotated[Any, InjectedState]
    ) -> str:
        """Topic."""
        return f"{current}/{type(state).__name__}"

    graph = tool_graph(ToolNode([topic]), Chat)
    out = run.invoke(graph, {"messages": [ai_calls(call("topic"))], "topic": "cats"})
    assert out["messages"][-1].content == "cats/Chat"


def test_inject_tool_args_is_public() -> None:
    def who(
        x: int, user: Annotated[str, InjectedState("user")], cid: Annotated[str, InjectedToolCallId]
    ) -> str:
        """Who."""
        return user

    node = ToolNode([who, add])
    injected = node.inject_tool_args(
        call("who", {"x": 1}, "5"), {"messages": [], "user": "bo"}, None
    )
    assert injected == {
        "name": "who",
        "args": {"x": 1, "user": "bo", "cid": "5"},
        "id": "5",
        "type": "tool_call",
    }
    plain = call("add", {"a": 1, "b": 2})
    assert node.inject_tool_args(plain, {"messages": []}, None) is plain


# ---------------------------------------------------------------------- commands
def set_user(name: str, call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Store the user name."""
    return Command(
        update={"user": name, "messages": [ToolMessage(f"user is {name}", tool_call_id=call_id)]}
    )


def test_commands_and_messages_keep_call_order(run: Runner) -> None:
    graph = tool_graph(ToolNode([add, set_user]), State)
    out = run.invoke(
        graph,
        {
            "messages": [
                ai_calls(
                    call("add", {"a": 1, "b": 1}, "1"),
                    call("set_user", {"name": "kim"}, "2"),
                    call("add", {"a": 2, "b": 2}, "3"),
                )
            ]
        },
    )
    assert out["user"] == "kim"
    assert as_tuples(out["messages"][1:]) == [
        ("2", "add", "1", "success"),
        ("user is kim", "set_user", "2", "success"),
        ("4", "add", "3", "success"),
    ]


def test_direct_output_shapes() -> None:
    node = ToolNode([add, set_user])
    plain = node.invoke({"messages": [ai_calls(call("add", {"a": 1, "b": 2}, "1"))]})
    assert list(plain) == ["messages"] and plain["messages"][0].content == "3"
    mixed = node.invoke(
        {
            "messages": [
                ai_calls(call("set_user", {"name": "x"}, "1"), call("add", {"a": 1, "b": 2}, "2"))
            ]
        }
    )
    assert isinstance(mixed, list) and isinstance(mixed[0], Command)
    assert mixed[0].update["user"] == "x"
    assert mixed[0].update["messages"][0].name == "set_user"
    assert list(mixed[1]) == ["messages"] and mixed[1]["messages"][0].content == "3"


def test_command_goto_routes(run: Runner) -> None:
    def jump(call_id: Annotated[str, InjectedToolCallId]) -> Command:
        """Jump to the end node."""
        return Command(
            goto="after", update={"messages": [ToolMessage("jumped", tool_call_id=call_id)]}
        )

    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode([jump]))
    builder.add_node("after", lambda s: {"messages": [AIMessage("after ran")]})
    builder.add_edge(START, "tools")
    out = run.invoke(builder.compile(), {"messages": [ai_calls(call("jump"))]})
    assert [m.content for m in out["messages"]] == ["", "jumped", "after ran"]


def test_command_must_answer_the_tool_call(run: Runner) -> None:
    def silent() -> Command:
        """Updates without a ToolMessage."""
        return Command(update={"user": "z"})

    def wrong_shape(call_id: Annotated[str, InjectedToolCallId]) -> Command:
        """List update under dict input."""
        return Command(update=[("user", "z")])

    with pytest.raises(ValueError, match="Tool 'silent' returned a Command without a ToolMessage"):
        run_tools(run, ToolNode([silent]), call("silent"))
    with pytest.raises(ValueError, match=r"Command\.update must be a dict"):
        run_tools(run, ToolNode([wrong_shape]), call("wrong_shape"))


def test_parent_command_hands_off_to_the_parent_graph(run: Runner) -> None:
    def handoff(to: str, call_id: Annotated[str, InjectedToolCallId]) -> Command:
        """Hand off to another agent."""
        return Command(
            graph=Command.PARENT,
            goto=to,
            update={"messages": [ToolMessage(f"to {to}", tool_call_id=call_id)]},
        )

    sub = tool_graph(ToolNode([handoff]))
    builder = StateGraph(MessagesState)
    builder.add_node("sub", sub)
    builder.add_node("billing", lambda s: {"messages": [AIMessage("billing here")]})
    builder.add_edge(START, "sub")
    out = run.invoke(
        builder.compile(), {"messages": [ai_calls(call("handoff", {"to": "billing"}))]}
    )
    assert [(m.content, m.name) for m in out["messages"]] == [
        ("", None),
        ("to billing", "handoff"),
        ("billing here", None),
    ]


def test_list_input_commands_need_list_updates() -> None:
    def ok(call_id: Annotated[str, InjectedToolCallId]) -> Command:
        """List update."""
        return Command(update=[ToolMessage("ok", tool_call_id=call_id)])

    out = ToolNode([ok, set_user]).invoke([ai_calls(call("ok", id="1"))])
    assert isinstance(out[0], Command) and out[0].update[0].name == "ok"
    with pytest.raises(ValueError, match="must be a list of messages"):
        ToolNode([set_user]).invoke([ai_calls(call("set_user", {"name": "a"}))])
