"""Where LangChain runs made inside a graph hang in the run tree (issue 22 items 1, 2,
4, 5 and 11): one run per model or tool call, nested under the node that made it, with
the node's tags and metadata, whoever listens.

The expected trees are what LangGraph 1.2.22 reports for the same graphs (observed side
by side by tools/langchain_boundary); the assertions below are written from those
observations, in our own terms.
"""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

from langchain_core import messages as lc
from langchain_core.callbacks import BaseCallbackHandler, dispatch_custom_event
from langchain_core.callbacks.manager import adispatch_custom_event
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate

from stategraph.graph import START, StateGraph
from stategraph.graph.message import MessagesState
from stategraph.prebuilt import create_react_agent

from .lc_fakes import ScriptedChatModel, add


def words(*texts: str) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([lc.AIMessage(t) for t in texts]))


def one_node(node: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("chat", node)
    builder.add_edge(START, "chat")
    return builder.compile()


class RunTree(BaseCallbackHandler):
    """Records every run a LangChain tracer would: kind, name, parent, tags, tokens."""

    def __init__(self) -> None:
        self.runs: dict[UUID, dict[str, Any]] = {}
        self.tokens: list[str] = []

    def _add(self, kind: str, name: Any, run_id: UUID, parent: Any, tags: Any, meta: Any) -> None:
        self.runs[run_id] = {
            "kind": kind,
            "name": name,
            "parent": parent,
            "tags": list(tags or ()),
            "metadata": dict(meta or {}),
        }

    def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
        self._add(
            "chain",
            kw.get("name"),
            kw["run_id"],
            kw.get("parent_run_id"),
            kw.get("tags"),
            kw.get("metadata"),
        )

    def on_chat_model_start(self, serialized: Any, messages: Any, **kw: Any) -> None:
        name = kw.get("name") or (serialized or {}).get("name")
        self._add(
            "chat_model",
            name,
            kw["run_id"],
            kw.get("parent_run_id"),
            kw.get("tags"),
            kw.get("metadata"),
        )

    def on_tool_start(self, serialized: Any, input_str: Any, **kw: Any) -> None:
        name = kw.get("name") or (serialized or {}).get("name")
        self._add(
            "tool", name, kw["run_id"], kw.get("parent_run_id"), kw.get("tags"), kw.get("metadata")
        )

    def on_llm_new_token(self, token: str, **kw: Any) -> None:
        self.tokens.append(token)

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.runs.values() if r["kind"] == kind]

    def ancestors(self, run: dict[str, Any]) -> list[Any]:
        names = []
        while (run := self.runs.get(run["parent"])) is not None:  # type: ignore[assignment]
            names.append(run["name"])
        return names

    def parent_name(self, run: dict[str, Any]) -> Any:
        parent = self.runs.get(run["parent"])
        return None if parent is None else parent["name"]


def test_a_model_in_a_node_is_one_run_nested_under_the_node() -> None:
    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    model = words("fine thanks")
    tree = RunTree()
    one_node(chat).invoke({"messages": [lc.HumanMessage("hi")]}, {"callbacks": [tree]})

    models = tree.of_kind("chat_model")
    assert len(models) == 1
    (run,) = models
    assert run["name"] == "GenericFakeChatModel"
    assert tree.parent_name(run) == "chat"
    assert run["tags"] == ["seq:step:1"]
    assert run["metadata"]["langgraph_node"] == "chat"
    assert run["metadata"]["langgraph_step"] == 1
    # a tracer alone does not make the model stream (as under LangGraph)
    assert tree.tokens == []


def test_astream_events_reports_each_token_once_under_the_model_class_name() -> None:
    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    model = words("one two")
    graph = one_node(chat)

    async def collect() -> list[dict[str, Any]]:
        return [e async for e in graph.astream_events({"messages": [("user", "go")]}, version="v2")]

    events = asyncio.run(collect())
    streamed = [e for e in events if e["event"] == "on_chat_model_stream"]
    assert "".join(e["data"]["chunk"].content for e in streamed) == "one two"
    starts = [e for e in events if e["event"] == "on_chat_model_start"]
    assert [e["name"] for e in starts] == ["GenericFakeChatModel"]
    node = next(e for e in events if e["event"] == "on_chain_start" and e["name"] == "chat")
    assert starts[0]["parent_ids"][-1] == node["run_id"]
    assert starts[0]["tags"] == ["seq:step:1"]


def test_a_model_in_a_subgraph_nests_under_the_subgraph_node() -> None:
    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    model = words("inner")
    inner = one_node(chat)
    outer = StateGraph(MessagesState)
    outer.add_node("sub", inner)
    outer.add_edge(START, "sub")
    tree = RunTree()
    outer.compile().invoke({"messages": [("user", "x")]}, {"callbacks": [tree]})

    (run,) = tree.of_kind("chat_model")
    assert tree.parent_name(run) == "chat"
    assert "sub" in tree.ancestors(run)
    assert run["metadata"]["langgraph_node"] == "chat"


def test_lcel_chain_runs_nest_and_report_prompt_and_parser_events() -> None:
    prompt = ChatPromptTemplate.from_messages([("user", "{q}")])
    chain = prompt | words("answer") | StrOutputParser()

    def node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [("ai", chain.invoke({"q": state["messages"][-1].content}))]}

    graph = one_node(node)

    async def collect() -> list[dict[str, Any]]:
        return [e async for e in graph.astream_events({"messages": [("user", "q?")]}, version="v2")]

    events = asyncio.run(collect())
    kinds = [e["event"] for e in events]
    assert "on_prompt_start" in kinds and "on_prompt_end" in kinds
    assert "on_parser_start" in kinds and "on_parser_end" in kinds
    sequence = next(
        e for e in events if e["event"] == "on_chain_start" and e["name"] == "RunnableSequence"
    )
    node_run = next(e for e in events if e["event"] == "on_chain_start" and e["name"] == "chat")
    assert sequence["parent_ids"][-1] == node_run["run_id"]


def test_dispatch_custom_event_in_a_node_works_with_and_without_listeners() -> None:
    def node(state: MessagesState) -> dict[str, Any]:
        dispatch_custom_event("progress", {"done": 1})
        return {"messages": [("ai", "ok")]}

    graph = one_node(node)
    # nobody listens: the run completes (it used to fail for want of a parent run)
    out = graph.invoke({"messages": [("user", "go")]})
    assert out["messages"][-1].content == "ok"

    async def collect() -> list[dict[str, Any]]:
        return [e async for e in graph.astream_events({"messages": [("user", "go")]}, version="v2")]

    events = asyncio.run(collect())
    custom = [e for e in events if e["event"] == "on_custom_event"]
    assert [(e["name"], e["data"]) for e in custom] == [("progress", {"done": 1})]
    node_run = next(e for e in events if e["event"] == "on_chain_start" and e["name"] == "chat")
    assert custom[0]["run_id"] == node_run["run_id"]


def test_adispatch_custom_event_in_an_async_node() -> None:
    async def node(state: MessagesState) -> dict[str, Any]:
        await adispatch_custom_event("step", "half")
        return {"messages": [("ai", "ok")]}

    graph = one_node(node)

    async def collect() -> list[dict[str, Any]]:
        return [e async for e in graph.astream_events({"messages": [("user", "go")]}, version="v2")]

    events = asyncio.run(collect())
    assert [(e["name"], e["data"]) for e in events if e["event"] == "on_custom_event"] == [
        ("step", "half")
    ]


def test_react_agent_reports_each_tool_call_once_nested_under_the_tools_node() -> None:
    model = ScriptedChatModel(
        replies=[
            lc.AIMessage("", tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "c1"}]),
            lc.AIMessage("5"),
        ]
    )
    agent = create_react_agent(model, [add])
    tree = RunTree()
    out = agent.invoke({"messages": [("user", "2+3?")]}, {"callbacks": [tree]})
    assert out["messages"][-1].content == "5"

    tools = tree.of_kind("tool")
    assert [t["name"] for t in tools] == ["add"]
    assert tree.parent_name(tools[0]) == "tools"
    assert tools[0]["tags"] == ["seq:step:1"]
    assert len(tree.of_kind("chat_model")) == 2


def test_messages_metadata_leaves_out_thread_id_without_a_thread() -> None:
    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    model = words("hi there")
    chunks = list(one_node(chat).stream({"messages": [("user", "x")]}, stream_mode="messages"))
    assert chunks
    for _, meta in chunks:
        assert "thread_id" not in meta
        assert meta["langgraph_node"] == "chat"
        assert not any(str(t).startswith("seq:step") for t in meta.get("tags", ()))


def test_react_agent_model_call_runs_as_call_model_beside_prompt_then_model() -> None:
    model = ScriptedChatModel(replies=[lc.AIMessage("hello")])
    agent = create_react_agent(model, [add])
    tree = RunTree()
    agent.invoke({"messages": [("user", "hi")]}, {"callbacks": [tree]})

    chains = {r["name"]: r for r in tree.of_kind("chain")}
    assert tree.parent_name(chains["call_model"]) == "agent"
    assert chains["call_model"]["tags"] == ["seq:step:1"]
    # the prompt and the model run as a sequence hanging from the node, as in LangGraph
    assert tree.parent_name(chains["RunnableSequence"]) == "agent"
    assert tree.parent_name(chains["Prompt"]) == "RunnableSequence"
    assert chains["Prompt"]["tags"] == ["seq:step:1"]
    (chat,) = tree.of_kind("chat_model")
    assert tree.parent_name(chat) == "RunnableSequence"
    assert chat["tags"] == ["seq:step:2"]


def test_async_react_agent_builds_the_same_tree() -> None:
    model = ScriptedChatModel(replies=[lc.AIMessage("hello")])
    agent = create_react_agent(model, [add])
    tree = RunTree()
    out = asyncio.run(agent.ainvoke({"messages": [("user", "hi")]}, {"callbacks": [tree]}))
    assert out["messages"][-1].content == "hello"
    chains = {r["name"]: r for r in tree.of_kind("chain")}
    assert {"call_model", "RunnableSequence", "Prompt"} <= set(chains)
    (chat,) = tree.of_kind("chat_model")
    assert tree.parent_name(chat) == "RunnableSequence"


def test_a_model_given_the_node_config_nests_and_streams_like_one_without() -> None:
    from langchain_core.runnables import RunnableConfig

    def chat(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"], config)]}

    model = words("with config")
    graph = one_node(chat)

    async def collect() -> list[dict[str, Any]]:
        return [e async for e in graph.astream_events({"messages": [("user", "go")]}, version="v2")]

    events = asyncio.run(collect())
    streamed = [e for e in events if e["event"] == "on_chat_model_stream"]
    assert "".join(e["data"]["chunk"].content for e in streamed) == "with config"
    node_run = next(e for e in events if e["event"] == "on_chain_start" and e["name"] == "chat")
    start = next(e for e in events if e["event"] == "on_chat_model_start")
    assert start["parent_ids"][-1] == node_run["run_id"]
