"""The graphs both servers serve (written for stategraph; `run.py` rewrites the
imports for LangGraph's copy)."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from stategraph.config import get_stream_writer
from stategraph.graph import START, StateGraph
from stategraph.graph.message import add_messages
from stategraph.messages import AIMessage
from stategraph.runtime import Runtime
from stategraph.types import interrupt


class AgentState(TypedDict, total=False):
    messages: Annotated[list[Any], add_messages]
    approved: bool
    count: int


def agent_node(state: AgentState) -> dict[str, Any]:
    get_stream_writer()({"progress": "thinking"})
    call = {"name": "lookup", "args": {"q": "x"}, "id": "call-1"}
    reply = AIMessage(content="I will check.", id="ai-1", tool_calls=[call])
    return {"messages": [reply], "count": state.get("count", 0) + 1}


def approve_node(state: AgentState) -> dict[str, Any]:
    answer = interrupt({"question": "approve?"})
    return {"approved": answer == "yes"}


def finish_node(state: AgentState) -> dict[str, Any]:
    return {"messages": [AIMessage(content="done", id="ai-2")]}


_agent = StateGraph(AgentState)
_agent.add_node("agent", agent_node)
_agent.add_node("approve", approve_node)
_agent.add_node("finish", finish_node)
_agent.add_edge(START, "agent")
_agent.add_edge("agent", "approve")
_agent.add_edge("approve", "finish")
agent = _agent.compile()


class Counter(TypedDict, total=False):
    n: float
    log: Annotated[list[str], operator.add]


async def slow_node(state: Counter) -> dict[str, Any]:
    await asyncio.sleep(float(state.get("n", 1)))
    return {"n": state.get("n", 0) + 1, "log": ["slow"]}


_slow = StateGraph(Counter)
_slow.add_node("slow", slow_node)
_slow.add_edge(START, "slow")
slow = _slow.compile()


def fail_node(state: Counter) -> dict[str, Any]:
    raise ValueError("boom")


_fail = StateGraph(Counter)
_fail.add_node("fail", fail_node)
_fail.add_edge(START, "fail")
fail = _fail.compile()


def _step(name: str) -> Any:
    def node(state: Counter) -> dict[str, Any]:
        return {"n": state.get("n", 0) + 1, "log": [name]}

    return node


_steps = StateGraph(Counter)
for _i in range(3):
    _steps.add_node(f"s{_i}", _step(f"s{_i}"))
_steps.add_edge(START, "s0")
_steps.add_edge("s0", "s1")
_steps.add_edge("s1", "s2")
steps = _steps.compile()


_child = StateGraph(Counter)
_child.add_node("inner", _step("inner"))
_child.add_edge(START, "inner")
_parent = StateGraph(Counter)
_parent.add_node("child", _child.compile())
_parent.add_edge(START, "child")
parent = _parent.compile()


class Memo(TypedDict, total=False):
    key: str
    seen: Any


async def memo_node(state: Memo, runtime: Runtime[Any]) -> dict[str, Any]:
    assert runtime.store is not None
    found = await runtime.store.aget(("memo",), state["key"])
    times = (found.value["times"] + 1) if found else 1
    await runtime.store.aput(("memo",), state["key"], {"times": times})
    return {"seen": None if found is None else found.value}


_memo = StateGraph(Memo)
_memo.add_node("memo", memo_node)
_memo.add_edge(START, "memo")
memo = _memo.compile()


class Ctx(TypedDict):
    model: str


class Greeting(TypedDict, total=False):
    text: str


def greet_node(state: Greeting, runtime: Runtime[Ctx]) -> dict[str, Any]:
    return {"text": f"{state.get('text', '')} via {runtime.context['model']}"}


_ctx = StateGraph(Greeting, context_schema=Ctx)
_ctx.add_node("greet", greet_node)
_ctx.add_edge(START, "greet")
ctx_graph = _ctx.compile()
