"""``create_react_agent``'s runs with a LangChain model (issue 22 item 2): the prompt
function's own result is what the ``Prompt`` run reports, and the structured response is
generated inside a ``generate_structured_response`` chain run, as under LangGraph 1.2.22
(observed side by side by tools/langchain_boundary; asserted here in our own terms).
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any
from uuid import UUID

from langchain_core import messages as lc
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from pydantic import BaseModel

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.graph.message import MessagesState
from stategraph.prebuilt import ToolNode, create_react_agent
from stategraph.types import Command

from .lc_fakes import ScriptedChatModel, add


class Chains(BaseCallbackHandler):
    """Records chain and tool runs: name, parent's name, tags, metadata, output, error."""

    def __init__(self) -> None:
        self.runs: dict[UUID, dict[str, Any]] = {}

    def on_tool_start(self, serialized: Any, input_str: Any, **kw: Any) -> None:
        name = kw.get("name") or (serialized or {}).get("name")
        rest = {k: v for k, v in kw.items() if k not in ("name", "inputs")}
        self.on_chain_start(serialized, input_str, name=name, **rest)

    def on_chain_error(self, error: BaseException, **kw: Any) -> None:
        self.runs[kw["run_id"]]["error"] = repr(error)

    def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
        self.runs[kw["run_id"]] = {
            "name": kw.get("name"),
            "parent": kw.get("parent_run_id"),
            "tags": list(kw.get("tags") or ()),
            "metadata": dict(kw.get("metadata") or {}),
            "inputs": inputs,
        }

    def on_chain_end(self, outputs: Any, **kw: Any) -> None:
        self.runs[kw["run_id"]]["output"] = outputs

    def named(self, name: str) -> list[dict[str, Any]]:
        return [r for r in self.runs.values() if r["name"] == name]

    def parent_name(self, run: dict[str, Any]) -> Any:
        parent = self.runs.get(run["parent"])
        return None if parent is None else parent["name"]


def test_the_prompt_run_reports_what_the_prompt_function_returned() -> None:
    def prompt(state: Any, config: Any) -> list[Any]:
        user = config["configurable"]["user_name"]
        return [("system", f"You help {user}."), *state["messages"]]

    model = ScriptedChatModel(replies=[lc.AIMessage("hello Ann")])
    agent = create_react_agent(model, [add], prompt=prompt)
    chains = Chains()
    config = {"configurable": {"user_name": "Ann"}, "callbacks": [chains]}
    out = agent.invoke({"messages": [("user", "hi")]}, config)

    assert out["messages"][-1].content == "hello Ann"
    (run,) = chains.named("Prompt")
    first, second = run["output"]
    # the pair as the function returned it; the model converts it (as under LangGraph)
    assert first == ("system", "You help Ann.")
    assert second.content == "hi"
    seen = model.seen[-1]
    assert seen[0].type == "system" and seen[0].content == "You help Ann."


class Weather(BaseModel):
    """A weather report."""

    city: str
    temperature: int


def weather_model() -> ScriptedChatModel:
    return ScriptedChatModel(
        replies=[
            lc.AIMessage("It is 21 degrees in Oslo."),
            lc.AIMessage(
                "",
                tool_calls=[
                    {"name": "Weather", "args": {"city": "Oslo", "temperature": 21}, "id": "w1"}
                ],
            ),
        ]
    )


def check_structured_tree(chains: Chains, out: dict[str, Any]) -> None:
    assert out["structured_response"] == Weather(city="Oslo", temperature=21)
    node, inner = chains.named("generate_structured_response")
    assert chains.parent_name(inner) == "generate_structured_response"
    assert inner["parent"] is not None and chains.runs[inner["parent"]] is node
    assert inner["tags"] == ["seq:step:1"]
    # like LangGraph's own callable, the inner run does not copy the checkpoint namespace
    assert "checkpoint_ns" not in inner["metadata"]
    # the structured model's sequence hangs from the node, beside that run
    (sequence,) = [r for r in chains.named("RunnableSequence") if r["parent"] == inner["parent"]]
    assert sequence["output"] == Weather(city="Oslo", temperature=21)


def test_the_structured_response_is_made_inside_its_own_chain_run() -> None:
    agent = create_react_agent(weather_model(), [add], response_format=Weather)
    chains = Chains()
    out = agent.invoke({"messages": [("user", "weather in Oslo")]}, {"callbacks": [chains]})
    check_structured_tree(chains, out)


def test_the_async_agent_makes_the_structured_response_the_same_way() -> None:
    agent = create_react_agent(weather_model(), [add], response_format=Weather)
    chains = Chains()
    out = asyncio.run(
        agent.ainvoke({"messages": [("user", "weather in Oslo")]}, {"callbacks": [chains]})
    )
    check_structured_tree(chains, out)


def test_a_plain_function_tool_run_carries_the_checkpoint_namespace() -> None:
    def search(query: str) -> str:
        """Search."""
        return f"found {query}"

    def call_tool(state: MessagesState) -> dict[str, Any]:
        call = {"name": "search", "args": {"query": "tea"}, "id": "c1", "type": "tool_call"}
        return {"messages": [lc.AIMessage("", tool_calls=[call])]}

    builder = StateGraph(MessagesState)
    builder.add_node("ask", call_tool)
    builder.add_node("tools", ToolNode([search]))
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "tools")
    chains = Chains()
    builder.compile().invoke({"messages": [("user", "go")]}, {"callbacks": [chains]})

    (run,) = chains.named("search")
    # a tool is a runnable under LangGraph: it copies the configurable namespace
    assert run["metadata"]["checkpoint_ns"] == run["metadata"]["langgraph_checkpoint_ns"]
    assert run["metadata"]["checkpoint_ns"].startswith("tools:")


def test_a_named_agent_names_the_model_reply_itself() -> None:
    model = ScriptedChatModel(replies=[lc.AIMessage("hello")])
    agent = create_react_agent(model, [add], name="helper")
    chains = Chains()
    out = agent.invoke({"messages": [("user", "hi")]}, {"callbacks": [chains]})
    assert out["messages"][-1].name == "helper"
    # the reply object the model run produced is the one named, as under LangGraph
    (sequence,) = chains.named("RunnableSequence")
    assert sequence["output"].name == "helper"


def test_with_a_pre_model_hook_call_model_gets_the_state_and_the_prompt_its_view() -> None:
    def hook(state: Any) -> dict[str, Any]:
        return {"llm_input_messages": state["messages"][-1:]}

    model = ScriptedChatModel(replies=[lc.AIMessage("one"), lc.AIMessage("two")])
    agent = create_react_agent(model, [add], pre_model_hook=hook, checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [("user", "first")]}, config)
    chains = Chains()
    agent.invoke({"messages": [("user", "second")]}, {**config, "callbacks": [chains]})

    (call_model,) = chains.named("call_model")
    (prompt,) = chains.named("Prompt")
    # call_model is given the node's state (the whole history), as under LangGraph ...
    contents = [m.content for m in call_model["inputs"]["messages"]]
    assert contents == ["first", "one", "second"]
    # ... and the prompt and the model the hook's view of it
    assert [m.content for m in prompt["output"]] == ["second"]
    assert [m.content for m in model.seen[-1]] == ["second"]


def handoff_graph() -> Any:
    @tool
    def transfer(tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Hand over to billing."""
        done = ToolMessage("Transferred", tool_call_id=tool_call_id)
        return Command(goto="billing", graph=Command.PARENT, update={"messages": [done]})

    call = {"name": "transfer", "args": {}, "id": "c1", "type": "tool_call"}
    front = create_react_agent(
        ScriptedChatModel(replies=[lc.AIMessage("", tool_calls=[call])]), [transfer], name="front"
    )

    def billing(state: MessagesState) -> dict[str, Any]:
        return {"messages": [lc.AIMessage("paid", id="b1")]}

    builder = StateGraph(MessagesState)
    builder.add_node("front", front, destinations=("billing",))
    builder.add_node("billing", billing)
    builder.add_edge(START, "front")
    return builder.compile()


def test_a_handoff_message_is_not_streamed_as_a_node_output() -> None:
    graph = handoff_graph()
    out = list(graph.stream({"messages": [("user", "bill")]}, stream_mode="messages"))
    contents = [message.content for message, _ in out]
    # LangGraph reports neither the tool's nor the parent node's output for it
    assert "Transferred" not in contents
    assert contents[-1] == "paid"
    final = handoff_graph().invoke({"messages": [("user", "bill")]})
    assert [m.content for m in final["messages"]][-2:] == ["Transferred", "paid"]


def test_a_handoff_leaving_a_subgraph_names_its_namespace_in_traces() -> None:
    chains = Chains()
    handoff_graph().invoke({"messages": [("user", "bill")]}, {"callbacks": [chains]})
    errors = {r["name"]: r["error"] for r in chains.runs.values() if "error" in r}
    # the tools node inside the agent raised it as written; from where it left the
    # subgraph on, it names the subgraph's namespace (as LangGraph reports it)
    assert "graph='__parent__'" in errors["tools"]
    # the parent's node and the agent graph's own run (both named "front")
    fronts = [r for r in chains.named("front") if "error" in r]
    assert len(fronts) == 2
    assert all("graph='front:" in r["error"] for r in fronts)


def test_a_subgraph_paused_by_an_interrupt_reports_it_with_its_traceback() -> None:
    from stategraph.types import interrupt

    def confirm(state: MessagesState) -> dict[str, Any]:
        return {"messages": [lc.AIMessage(f"confirmed={interrupt('ok?')}", id="c")]}

    inner = StateGraph(MessagesState)
    inner.add_node("confirm", confirm)
    inner.add_edge(START, "confirm")
    outer = StateGraph(MessagesState)
    outer.add_node("planner", inner.compile())
    outer.add_edge(START, "planner")
    graph = outer.compile(checkpointer=InMemorySaver())

    errors: list[BaseException] = []

    class Errors(BaseCallbackHandler):
        def on_chain_error(self, error: BaseException, **kw: Any) -> None:
            errors.append(error)

    config: dict[str, Any] = {"configurable": {"thread_id": "t"}, "callbacks": [Errors()]}
    graph.invoke({"messages": [("user", "plan")]}, config)
    # the confirm node, the subgraph's own run, the planner node: each with the
    # traceback of the raised pause (LangChain's tracers render it)
    assert len(errors) == 3
    assert all(type(e).__name__ == "GraphInterrupt" for e in errors)
    assert all(e.__traceback__ is not None for e in errors)
