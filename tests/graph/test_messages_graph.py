"""Messages in graph state: ``add_messages``, ``MessagesState`` and a scripted agent loop."""

from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.graph import END, START, MessagesState, StateGraph, add_messages
from stategraph.graph.message import add_messages as add_messages_direct
from stategraph.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage

SCRIPT = [
    AIMessage(
        content="",
        id="ai1",
        tool_calls=[
            {"name": "add", "args": {"a": 1, "b": 2}, "id": "c1"},
            {"name": "mul", "args": {"a": 3, "b": 4}, "id": "c2"},
        ],
    ),
    AIMessage(
        content="", id="ai2", tool_calls=[{"name": "add", "args": {"a": 3, "b": 12}, "id": "c3"}]
    ),
    AIMessage(content="The answer is 15", id="ai3"),
]

TOOLS = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b}


def agent(state: MessagesState):
    turn = sum(1 for m in state["messages"] if m.type == "ai")
    return {"messages": [SCRIPT[turn]]}


def tools(state: MessagesState):
    last = state["messages"][-1]
    return {
        "messages": [
            ToolMessage(
                content=str(TOOLS[call["name"]](**call["args"])),
                tool_call_id=call["id"],
                id="t-" + call["id"],
            )
            for call in last.tool_calls
        ]
    }


def should_continue(state: MessagesState):
    return "tools" if state["messages"][-1].tool_calls else END


def _agent_graph(schema: Any = MessagesState) -> Any:
    builder = StateGraph(schema)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", should_continue, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile()


def _rows(messages: list[Any]) -> list[tuple[Any, ...]]:
    return [(m.type, m.id, m.content, getattr(m, "tool_call_id", None)) for m in messages]


EXPECTED = [
    ("human", "h1", "what is (1+2)+(3*4)?", None),
    ("ai", "ai1", "", None),
    ("tool", "t-c1", "3", "c1"),
    ("tool", "t-c2", "12", "c2"),
    ("ai", "ai2", "", None),
    ("tool", "t-c3", "15", "c3"),
    ("ai", "ai3", "The answer is 15", None),
]


def test_agent_loop_final_messages(run):
    question = HumanMessage(content="what is (1+2)+(3*4)?", id="h1")
    result = run.invoke(_agent_graph(), {"messages": [question]})
    assert list(result) == ["messages"]
    assert _rows(result["messages"]) == EXPECTED
    assert result["messages"][1].tool_calls == [
        {"name": "add", "args": {"a": 1, "b": 2}, "id": "c1", "type": "tool_call"},
        {"name": "mul", "args": {"a": 3, "b": 4}, "id": "c2", "type": "tool_call"},
    ]
    assert all(isinstance(m, ToolMessage) for m in result["messages"][2:4])


def test_agent_loop_node_order(run):
    chunks = run.stream(_agent_graph(), {"messages": [("user", "x")]}, stream_mode="updates")
    assert [next(iter(c)) for c in chunks] == ["agent", "tools", "agent", "tools", "agent"]
    assert _rows(chunks[1]["tools"]["messages"]) == [EXPECTED[2], EXPECTED[3]]


def test_agent_loop_accepts_message_like_input(run):
    result = run.invoke(_agent_graph(), {"messages": [("user", "hi")]})
    first = result["messages"][0]
    assert isinstance(first, HumanMessage)
    assert first.content == "hi"
    assert isinstance(first.id, str)
    assert first.id
    assert [(m.type, m.content) for m in result["messages"][1:]] == [
        (t, c) for t, _, c, _ in EXPECTED[1:]
    ]


def test_agent_loop_drawing():
    mermaid = _agent_graph().get_graph().draw_mermaid()
    for edge in (
        "__start__ --> agent;",
        "agent -.-> tools;",
        "agent -.-> __end__;",
        "tools --> agent;",
    ):
        assert edge in mermaid


class AgentState(MessagesState):
    turns: int


def test_custom_state_extending_messages_state(run):
    def counting_agent(state):
        reply = agent(state)
        return {**reply, "turns": state.get("turns", 0) + 1}

    builder = StateGraph(AgentState)
    builder.add_node("agent", counting_agent)
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", should_continue, ["tools", END])
    builder.add_edge("tools", "agent")
    question = HumanMessage(content="what is (1+2)+(3*4)?", id="h1")
    result = run.invoke(builder.compile(), {"messages": [question], "turns": 0})
    assert result["turns"] == 3
    assert _rows(result["messages"]) == EXPECTED


class Chat(TypedDict):
    messages: Annotated[list, add_messages]


def test_same_id_replaces_and_remove_message_deletes(run):
    def fix(state):
        return {"messages": [HumanMessage(content="corrected", id="h1"), RemoveMessage(id="x1")]}

    builder = StateGraph(Chat)
    builder.add_node("fix", fix)
    builder.add_edge(START, "fix")
    start = [
        HumanMessage(content="old", id="h1"),
        AIMessage(content="bye", id="x1"),
        AIMessage(content="keep", id="k"),
    ]
    result = run.invoke(builder.compile(), {"messages": start})
    assert [(m.type, m.id, m.content) for m in result["messages"]] == [
        ("human", "h1", "corrected"),
        ("ai", "k", "keep"),
    ]


def test_dict_messages_are_converted_in_state(run):
    builder = StateGraph(Chat)
    builder.add_node(
        "reply", lambda s: {"messages": [{"role": "assistant", "content": "pong", "id": "a1"}]}
    )
    builder.add_edge(START, "reply")
    result = run.invoke(
        builder.compile(), {"messages": [{"role": "user", "content": "ping", "id": "u1"}]}
    )
    assert [(type(m).__name__, m.id, m.content) for m in result["messages"]] == [
        ("HumanMessage", "u1", "ping"),
        ("AIMessage", "a1", "pong"),
    ]


def test_parallel_nodes_append_messages(run):
    builder = StateGraph(Chat)
    builder.add_node("a", lambda s: {"messages": [AIMessage(content="from a", id="a")]})
    builder.add_node("b", lambda s: {"messages": [AIMessage(content="from b", id="b")]})
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    result = run.invoke(builder.compile(), {"messages": [HumanMessage(content="q", id="q")]})
    assert [m.id for m in result["messages"]] == ["q", "a", "b"]


def test_add_messages_is_exported_from_both_modules():
    assert add_messages is add_messages_direct
    merged = add_messages([HumanMessage(content="a", id="1")], [AIMessage(content="b", id="2")])
    assert [(m.type, m.id) for m in merged] == [("human", "1"), ("ai", "2")]


def test_invalid_message_in_update_names_the_problem(run):
    builder = StateGraph(Chat)
    builder.add_node("bad", lambda s: {"messages": [{"no_role": 1}]})
    builder.add_edge(START, "bad")
    with pytest.raises(ValueError) as info:
        run.invoke(builder.compile(), {"messages": []})
    assert "role" in str(info.value)
