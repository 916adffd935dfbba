"""ToolNode inside graphs (sync and async) and called directly."""

from __future__ import annotations

import asyncio
import threading
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, StateGraph
from stategraph.graph.message import MessagesState, add_messages
from stategraph.messages import AIMessage, HumanMessage, ToolMessage
from stategraph.prebuilt import (
    AsyncToolNode,
    InjectedState,
    InjectedToolCallId,
    Tool,
    ToolNode,
    tool,
)
from stategraph.types import Command, interrupt

from .helpers import Runner, aadd, add, ai_calls, as_tuples, call, fail, run_tools, tool_graph


# ---------------------------------------------------------------------- basics
def test_runs_each_call_and_answers_in_call_order(run: Runner) -> None:
    out = run_tools(
        run,
        ToolNode([add]),
        call("add", {"a": 1, "b": 2}, "1"),
        call("add", {"a": "10", "b": 5}, "2"),
    )
    assert all(isinstance(m, ToolMessage) for m in out)
    assert as_tuples(out) == [("3", "add", "1", "success"), ("15", "add", "2", "success")]


def test_parallel_calls_really_overlap_and_keep_order(run: Runner) -> None:
    barrier = threading.Barrier(3, timeout=5)
    done = {label: threading.Event() for label in ("slow", "mid", "fast")}
    finished: list[str] = []

    def meet(label: str, after: str) -> str:
        """Wait for the two other calls, then finish once ``after`` has finished."""
        barrier.wait()
        if after:
            assert done[after].wait(5), f"{after} never finished"
        finished.append(label)
        done[label].set()
        return label

    # the calls finish in the reverse of their order: fast, then mid, then slow
    out = run_tools(
        run,
        ToolNode([meet]),
        call("meet", {"label": "slow", "after": "mid"}, "1"),
        call("meet", {"label": "mid", "after": "fast"}, "2"),
        call("meet", {"label": "fast", "after": ""}, "3"),
    )
    assert finished == ["fast", "mid", "slow"]
    assert [m.content for m in out] == ["slow", "mid", "fast"]
    assert [m.tool_call_id for m in out] == ["1", "2", "3"]


def test_max_concurrency_bounds_the_threads(run: Runner) -> None:
    lock = threading.Lock()
    active = 0
    peak = 0

    def work(n: int) -> int:
        """Track how many calls overlap."""
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        threading.Event().wait(0.01)
        with lock:
            active -= 1
        return n

    graph = tool_graph(ToolNode([work]))
    calls = [call("work", {"n": i}, str(i)) for i in range(4)]
    out = run.invoke(graph, {"messages": [ai_calls(*calls)]}, {"max_concurrency": 1})
    assert [m.content for m in out["messages"][1:]] == ["0", "1", "2", "3"]
    assert peak == 1


async def test_async_tools_run_concurrently_on_the_event_loop() -> None:
    arrived = 0
    both_here = asyncio.Event()
    loop = asyncio.get_running_loop()

    async def meet(label: str) -> str:
        """Wait for the other call."""
        nonlocal arrived
        assert asyncio.get_running_loop() is loop
        arrived += 1
        if arrived == 2:
            both_here.set()
        await asyncio.wait_for(both_here.wait(), 5)
        return label

    node = ToolNode([meet])
    assert isinstance(node, AsyncToolNode)
    graph = tool_graph(node)
    out = await graph.ainvoke(
        {
            "messages": [
                ai_calls(call("meet", {"label": "a"}, "1"), call("meet", {"label": "b"}, "2"))
            ]
        }
    )
    assert [m.content for m in out["messages"][1:]] == ["a", "b"]


def test_content_formatting(run: Runner) -> None:
    class Thing:
        def __str__(self) -> str:
            return "a thing"

    def kind(which: str) -> Any:
        """Return values of several types."""
        return {
            "dict": {"k": "é", "n": [1, 2]},
            "list": ["a", "b"],
            "blocks": [{"type": "text", "text": "hi"}],
            "none": None,
            "bool": True,
            "float": 1.5,
            "obj": Thing(),
        }[which]

    names = ["dict", "list", "blocks", "none", "bool", "float", "obj"]
    out = run_tools(run, ToolNode([kind]), *(call("kind", {"which": n}, n) for n in names))
    assert [m.content for m in out] == [
        '{"k": "é", "n": [1, 2]}',
        '["a", "b"]',
        [{"type": "text", "text": "hi"}],
        "null",
        "true",
        "1.5",
        "a thing",
    ]


def test_tool_may_return_its_own_tool_message(run: Runner) -> None:
    def custom(x: str, call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
        """Builds its own message."""
        return ToolMessage(f"custom {x}", tool_call_id=call_id, artifact={"raw": x})

    def named(call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
        """Names its message."""
        return ToolMessage("n", tool_call_id=call_id, name="other")

    out = run_tools(
        run, ToolNode([custom, named]), call("custom", {"x": "v"}, "7"), call("named", {}, "8")
    )
    assert as_tuples(out) == [
        ("custom v", "custom", "7", "success"),
        ("n", "other", "8", "success"),
    ]
    assert out[0].artifact == {"raw": "v"}


def test_content_and_artifact(run: Runner) -> None:
    @tool(response_format="content_and_artifact")
    def rows(n: int) -> tuple[str, list[int]]:
        """Rows."""
        return f"{n} rows", list(range(n))

    @tool(response_format="content_and_artifact")
    def broken() -> str:
        """Forgets the artifact."""
        return "only content"

    out = run_tools(run, ToolNode([rows]), call("rows", {"n": 3}))
    assert (out[0].content, out[0].artifact) == ("3 rows", [0, 1, 2])
    with pytest.raises(ValueError, match="must return a \\(content, artifact\\) tuple"):
        run_tools(run, ToolNode([broken]), call("broken"))


def test_messages_key_and_custom_name(run: Runner) -> None:
    class Chat(BaseModel):
        history: Annotated[list, add_messages] = []

    node = ToolNode([add], name="calc", messages_key="history")
    assert node.name == "calc"
    builder = StateGraph(Chat)
    builder.add_node("calc", node)
    builder.add_edge(START, "calc")
    out = run.invoke(builder.compile(), {"history": [ai_calls(call("add", {"a": 2, "b": 2}))]})
    assert [m.content for m in out["history"]] == ["", "4"]


# ---------------------------------------------------------------------- inputs
def test_list_input_returns_a_list() -> None:
    node = ToolNode([add])
    out = node.invoke([HumanMessage("hi"), ai_calls(call("add", {"a": 1, "b": 1}))])
    assert [m.content for m in out] == ["2"]
    dict_messages = node.invoke(
        [{"role": "assistant", "content": "", "tool_calls": [call("add", {"a": 2, "b": 2})]}]
    )
    assert dict_messages[0].content == "4"


def test_uses_the_last_ai_message() -> None:
    node = ToolNode([add])
    messages = [
        ai_calls(call("add", {"a": 1, "b": 1}, "old")),
        ToolMessage("2", tool_call_id="old"),
        ai_calls(call("add", {"a": 5, "b": 5}, "new")),
        HumanMessage("trailing"),
    ]
    out = node.invoke({"messages": messages})
    assert [(m.content, m.tool_call_id) for m in out["messages"]] == [("10", "new")]
    assert node.invoke({"messages": [AIMessage("no calls")]}) == {"messages": []}


def test_send_payload_runs_one_call(run: Runner) -> None:
    def user_of(state: Annotated[dict, InjectedState]) -> str:
        """User from the sent state."""
        return state["user"]

    node = ToolNode([user_of])
    payload = {
        "__type": "tool_call_with_context",
        "tool_call": call("user_of", id="s1"),
        "state": {"user": "lee", "messages": []},
    }
    out = node.invoke(payload)
    assert as_tuples(out["messages"]) == [("lee", "user_of", "s1", "success")]
    assert as_tuples(asyncio.run(node.ainvoke(payload))["messages"]) == [
        ("lee", "user_of", "s1", "success")
    ]


def test_bad_inputs_are_reported() -> None:
    node = ToolNode([add])
    with pytest.raises(ValueError, match="found no messages in its input \\(key 'messages'\\)"):
        node.invoke({"messages": []})
    with pytest.raises(ValueError, match="found no AIMessage"):
        node.invoke({"messages": [HumanMessage("x")]})
    with pytest.raises(TypeError, match="takes a list of tools"):
        ToolNode(add)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="two tools named 'add'"):
        ToolNode([add, Tool.from_function(add)])
    with pytest.raises(TypeError, match="Cannot use 42 as a tool"):
        ToolNode([42])


# ---------------------------------------------------------------------- sync / async selection
def test_async_only_tool_selects_async_node_and_needs_ainvoke() -> None:
    node = ToolNode([aadd, add])
    assert type(node) is AsyncToolNode and isinstance(node, ToolNode)
    assert type(ToolNode([add])) is ToolNode
    graph = tool_graph(node)
    state = {
        "messages": [
            ai_calls(call("aadd", {"a": 1, "b": 2}, "1"), call("add", {"a": 3, "b": 4}, "2"))
        ]
    }
    with pytest.raises(TypeError, match="Node 'tools' is an async function"):
        graph.invoke(state)
    out = asyncio.run(graph.ainvoke(state))
    assert [m.content for m in out["messages"][1:]] == ["3", "7"]


def test_sync_invoke_of_async_tool_is_a_clear_error() -> None:
    node = AsyncToolNode([aadd])
    with pytest.raises(TypeError, match="Tool 'aadd' is async-only"):
        node.invoke({"messages": [ai_calls(call("aadd", {"a": 1, "b": 2}))]})


async def test_ainvoke_directly_with_sync_tools() -> None:
    node = ToolNode([add, fail], handle_tool_errors=True)
    out = await node.ainvoke(
        {
            "messages": [
                ai_calls(call("add", {"a": 1, "b": 2}, "1"), call("fail", {"reason": "q"}, "2"))
            ]
        }
    )
    assert as_tuples(out["messages"]) == [
        ("3", "add", "1", "success"),
        ("Error: ValueError('bad q')\n Please fix your mistakes.", "fail", "2", "error"),
    ]


async def test_async_node_raises_first_unhandled_error_in_order() -> None:
    async def slow_fail() -> str:
        """Fails later."""
        await asyncio.sleep(0.02)
        raise KeyError("slow")

    async def fast_fail() -> str:
        """Fails first."""
        raise IndexError("fast")

    node = ToolNode([slow_fail, fast_fail], handle_tool_errors=False)
    with pytest.raises(KeyError, match="slow"):
        await node.ainvoke(
            {"messages": [ai_calls(call("slow_fail", id="1"), call("fast_fail", id="2"))]}
        )


def test_duck_typed_tools(run: Runner) -> None:
    class Echo:
        name = "echo"
        description = "Echo back."

        def invoke(self, args: dict[str, Any]) -> str:
            return f"echo {args['text']}"

    class AsyncEcho:
        name = "aecho"

        async def ainvoke(self, args: dict[str, Any]) -> str:
            return f"aecho {args['text']}"

    assert type(ToolNode([Echo()])) is ToolNode
    assert type(ToolNode([AsyncEcho()])) is AsyncToolNode
    out = run_tools(run, ToolNode([Echo()]), call("echo", {"text": "hi"}))
    assert out[0].content == "echo hi"
    both = tool_graph(ToolNode([Echo(), AsyncEcho()]))
    result = asyncio.run(
        both.ainvoke(
            {
                "messages": [
                    ai_calls(call("echo", {"text": "1"}, "1"), call("aecho", {"text": "2"}, "2"))
                ]
            }
        )
    )
    assert [m.content for m in result["messages"][1:]] == ["echo 1", "aecho 2"]


# ---------------------------------------------------------------------- interrupts
def ask_human(question: str) -> str:
    """Ask the human."""
    return f"human said {interrupt(question)}"


def test_interrupt_inside_a_tool_pauses_and_resumes(run: Runner) -> None:
    graph = tool_graph(
        ToolNode([ask_human, add], handle_tool_errors=True), checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t1"}}
    first = run.invoke(
        graph, {"messages": [ai_calls(call("ask_human", {"question": "ok?"}))]}, config
    )
    assert [i.value for i in first["__interrupt__"]] == ["ok?"]
    assert len(first["messages"]) == 1
    done = run.invoke(graph, Command(resume="yes"), config)
    assert [m.content for m in done["messages"][1:]] == ["human said yes"]


def test_tools_condition_routes_a_hand_built_agent(run: Runner) -> None:
    from stategraph.prebuilt import tools_condition

    def agent(state: MessagesState) -> dict[str, Any]:
        if len(state["messages"]) == 1:
            return {"messages": [ai_calls(call("add", {"a": 20, "b": 22}))]}
        return {"messages": [AIMessage(f"answer {state['messages'][-1].content}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([add]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    graph = builder.compile()
    out = run.invoke(graph, {"messages": [HumanMessage("sum?")]})
    assert [m.content for m in out["messages"]] == ["sum?", "", "42", "answer 42"]
    mermaid = graph.get_graph().draw_mermaid()
    assert "agent -.-> tools;" in mermaid and f"agent -.-> {END};" in mermaid


def test_nodes_can_be_copied() -> None:
    import copy

    node = ToolNode([add, aadd], handle_tool_errors=True)
    clone = copy.deepcopy(node)
    assert type(clone) is AsyncToolNode
    assert list(clone.tools_by_name) == ["add", "aadd"]
    assert clone.handle_tool_errors is True
    out = asyncio.run(clone.ainvoke({"messages": [ai_calls(call("aadd", {"a": 2, "b": 2}))]}))
    assert out["messages"][0].content == "4"
