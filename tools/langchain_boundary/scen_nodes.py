"""Scenarios: LangChain models, chains and events inside hand-written graph nodes.

(No ``from __future__ import annotations``: see scen_agents.)
"""

import operator
from typing import Annotated, Any

from fakes import FlakyChatModel, ScriptedChatModel, ai, call
from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
from langchain_core.language_models.fake_chat_models import (
    FakeMessagesListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from observe import Setup, Step
from pydantic import BaseModel
from registry import scenario
from typing_extensions import TypedDict

THREAD = {"configurable": {"thread_id": "t1"}}


def _ask(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text, id="h1")]}


def _echo(prefix: str) -> ScriptedChatModel:
    return ScriptedChatModel(rule=lambda ms: ai(f"{prefix} {ms[-1].content}"))


def _chat_graph(ns: Any, node: Any, checkpointer: Any = None) -> Any:
    builder = ns.StateGraph(ns.MessagesState)
    builder.add_node("chat", node)
    builder.add_edge(ns.START, "chat")
    return builder.compile(checkpointer=checkpointer)


@scenario("chat model in a node", "messages stream", "events v2")
def node_model_invoke(ns: Any) -> Setup:
    """The tutorial chatbot: a node calls model.invoke on the messages."""
    model = ScriptedChatModel(replies=[ai("hello world")])

    def chat(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    return Setup(_chat_graph(ns, chat), [Step(_ask("hi"))])


@scenario("chat model in a subgraph node", "subgraphs=True", "events v2")
def node_model_in_subgraph(ns: Any) -> Setup:
    """The chatbot as a subgraph of a router graph."""
    model = ScriptedChatModel(replies=[ai("from the subgraph")])

    def chat(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    inner = _chat_graph(ns, chat)
    builder = ns.StateGraph(ns.MessagesState)
    builder.add_node("inner", inner)
    builder.add_edge(ns.START, "inner")
    return Setup(builder.compile(), [Step(_ask("hi"))])


@scenario("chat model given the node's config", "config tags/metadata", "events v2")
def node_model_with_config(ns: Any) -> Setup:
    """A node passing its RunnableConfig on to the model (the documented async pattern)."""
    model = ScriptedChatModel(replies=[ai("configured answer")])

    def chat(state: Any, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"], config)]}

    config = {"tags": ["t-run"], "metadata": {"user": "u1"}}
    return Setup(_chat_graph(ns, chat), [Step(_ask("hi"))], config)


@scenario("LCEL chain (prompt | model | parser) in a node", "events v2", "tracer run tree")
def node_lcel_chain(ns: Any) -> Setup:
    """A node running a prompt-model-parser chain."""
    model = ScriptedChatModel(rule=lambda ms: ai(f"A joke about {ms[-1].content}"))
    chain = (
        ChatPromptTemplate.from_messages([("system", "Be funny."), ("human", "{topic}")])
        | model
        | StrOutputParser()
    )

    class State(TypedDict):
        topic: str
        joke: str

    def write(state: State) -> dict[str, Any]:
        return {"joke": chain.invoke({"topic": state["topic"]})}

    builder = ns.StateGraph(State)
    builder.add_node("write", write)
    builder.add_edge(ns.START, "write")
    return Setup(builder.compile(), [Step({"topic": "cats"})])


class Grade(BaseModel):
    """A relevance grade."""

    relevant: bool
    reason: str


@scenario("with_structured_output in a node", "output parser events", "conditional edge")
def node_structured_output(ns: Any) -> Setup:
    """A grader node (structured output) routes to an answer or a refusal."""
    model = ScriptedChatModel(
        replies=[ai("", call("Grade", {"relevant": True, "reason": "on topic"}, "g1"))]
    )
    grader = model.with_structured_output(Grade)

    class State(TypedDict):
        question: str
        grade: Any
        answer: str

    def grade(state: State) -> dict[str, Any]:
        return {"grade": grader.invoke(state["question"])}

    def answer(state: State) -> dict[str, Any]:
        return {"answer": "yes"}

    def refuse(state: State) -> dict[str, Any]:
        return {"answer": "off topic"}

    def route(state: State) -> str:
        return "answer" if state["grade"].relevant else "refuse"

    builder = ns.StateGraph(State)
    builder.add_node("grade", grade)
    builder.add_node("answer", answer)
    builder.add_node("refuse", refuse)
    builder.add_edge(ns.START, "grade")
    builder.add_conditional_edges("grade", route, ["answer", "refuse"])
    return Setup(builder.compile(), [Step({"question": "is tea hot?"})])


@scenario("dispatch_custom_event (sync)", "chat model", "events v2")
def node_dispatch_custom_event(ns: Any) -> Setup:
    """A node reports progress with LangChain's custom events."""
    model = ScriptedChatModel(replies=[ai("done")])

    def work(state: Any) -> dict[str, Any]:
        dispatch_custom_event("progress", {"pct": 50})
        reply = model.invoke(state["messages"])
        dispatch_custom_event("progress", {"pct": 100})
        return {"messages": [reply]}

    return Setup(_chat_graph(ns, work), [Step(_ask("go"))])


@scenario("adispatch_custom_event (async)", "async node", "chat model")
def node_adispatch_custom_event(ns: Any) -> Setup:
    """An async node reports progress with LangChain's custom events."""
    model = ScriptedChatModel(replies=[ai("done async")])

    async def work(state: Any, config: RunnableConfig) -> dict[str, Any]:
        await adispatch_custom_event("progress", {"pct": 50}, config=config)
        reply = await model.ainvoke(state["messages"], config)
        return {"messages": [reply]}

    return Setup(_chat_graph(ns, work), [Step(_ask("go"))], is_async=True)


@scenario("get_stream_writer", "chat model tokens", "custom + messages modes")
def node_writer_and_model(ns: Any) -> Setup:
    """A node writes custom progress and calls a model."""
    model = ScriptedChatModel(replies=[ai("the answer")])

    def work(state: Any) -> dict[str, Any]:
        writer = ns.get_stream_writer()
        writer({"status": "thinking"})
        reply = model.invoke(state["messages"])
        writer({"status": "done"})
        return {"messages": [reply]}

    return Setup(_chat_graph(ns, work), [Step(_ask("go"))])


@scenario("tags=['nostream'] model", "two models in sequence", "messages stream")
def node_nostream_tag(ns: Any) -> Setup:
    """A hidden classifier call (nostream) followed by a streamed answer."""
    classifier = ScriptedChatModel(replies=[ai("category: billing")]).with_config(tags=["nostream"])
    model = ScriptedChatModel(replies=[ai("billing answer")])

    def work(state: Any) -> dict[str, Any]:
        label = classifier.invoke(state["messages"])
        return {"messages": [model.invoke([*state["messages"], label])]}

    return Setup(_chat_graph(ns, work), [Step(_ask("my bill"))])


class Fan(TypedDict):
    topic: str
    drafts: Annotated[list[str], operator.add]
    final: str


@scenario("parallel async nodes", "chat model in each", "barrier edge")
def node_parallel_models(ns: Any) -> Setup:
    """Two writers call a model in parallel, a third joins them."""
    model = ScriptedChatModel(rule=lambda ms: ai(f"draft: {ms[-1].content}"))

    def writer(style: str) -> Any:
        async def write(state: Fan) -> dict[str, Any]:
            reply = await model.ainvoke(f"{style} about {state['topic']}")
            return {"drafts": [reply.content]}

        return write

    def join(state: Fan) -> dict[str, Any]:
        return {"final": " | ".join(sorted(state["drafts"]))}

    builder = ns.StateGraph(Fan)
    builder.add_node("poem", writer("poem"))
    builder.add_node("story", writer("story"))
    builder.add_node("join", join)
    builder.add_edge(ns.START, "poem")
    builder.add_edge(ns.START, "story")
    builder.add_edge(["poem", "story"], "join")
    # async nodes and a natively async model: the branches' token streams interleave the
    # same way on every run (sync nodes in worker threads interleave at random)
    return Setup(builder.compile(), [Step({"topic": "tea"})], is_async=True)


def _map_reduce(ns: Any, router: Any) -> Any:
    model = ScriptedChatModel(rule=lambda ms: ai(f"summary of {ms[-1].content}"))

    class Doc(TypedDict):
        doc: str

    async def summarize(state: Doc) -> dict[str, Any]:
        return {"drafts": [(await model.ainvoke(state["doc"])).content]}

    def combine(state: Fan) -> dict[str, Any]:
        return {"final": " + ".join(sorted(state["drafts"]))}

    builder = ns.StateGraph(Fan)
    builder.add_node("summarize", summarize)
    builder.add_node("combine", combine)
    builder.add_conditional_edges(ns.START, router, ["summarize"])
    builder.add_edge("summarize", "combine")
    return builder.compile()


@scenario("Send map-reduce (named router)", "chat model per branch", "reducer")
def send_map_reduce_models(ns: Any) -> Setup:
    """Each document is summarized by its own Send task."""

    def fan_out(state: Fan) -> list[Any]:
        return [ns.Send("summarize", {"doc": d}) for d in state["topic"].split(",")]

    return Setup(_map_reduce(ns, fan_out), [Step({"topic": "a,b,c"})], is_async=True)


@scenario("Send from a lambda router", "chat model per branch", "events v2 names")
def send_lambda_router(ns: Any) -> Setup:
    """The same map-reduce with the router written as a lambda."""
    router = lambda state: [ns.Send("summarize", {"doc": d}) for d in state["topic"].split(",")]  # noqa: E731
    return Setup(_map_reduce(ns, router), [Step({"topic": "x,y"})], is_async=True)


@scenario("RetryPolicy", "flaky chat model", "events of the failed attempt")
def retry_flaky_model(ns: Any) -> Setup:
    """A provider error is retried by the node's retry policy."""
    model = FlakyChatModel(replies=[ai("second time lucky")], failures=1)

    def chat(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = ns.StateGraph(ns.MessagesState)
    policy = ns.RetryPolicy(initial_interval=0.01, jitter=False, retry_on=ConnectionError)
    builder.add_node("chat", chat, retry_policy=policy)
    builder.add_edge(ns.START, "chat")
    return Setup(builder.compile(), [Step(_ask("hi"))])


@scenario("chat model error", "node error", "checkpointer history")
def node_model_error(ns: Any) -> Setup:
    """A provider error without retry fails the run; the thread keeps the error."""
    model = FlakyChatModel(replies=[ai("never")], failures=5)

    def chat(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    return Setup(_chat_graph(ns, chat, ns.InMemorySaver()), [Step(_ask("hi"))], THREAD)


@scenario("human review with interrupt()", "chat model draft", "Command(resume)", "checkpointer")
def hitl_review_draft(ns: Any) -> Setup:
    """A model drafts an email; a human edits it; the edit is sent."""
    model = ScriptedChatModel(replies=[ai("Dear Bob, ...")])

    class State(TypedDict):
        request: str
        draft: str
        sent: str

    def draft(state: State) -> dict[str, Any]:
        return {"draft": model.invoke(state["request"]).content}

    def review(state: State) -> dict[str, Any]:
        edited = ns.interrupt({"draft": state["draft"], "action": "edit or approve"})
        return {"sent": edited}

    builder = ns.StateGraph(State)
    builder.add_node("draft", draft)
    builder.add_node("review", review)
    builder.add_edge(ns.START, "draft")
    builder.add_edge("draft", "review")
    graph = builder.compile(checkpointer=ns.InMemorySaver())
    return Setup(
        graph,
        [Step({"request": "email Bob"}), Step(ns.Command(resume="Dear Bob, see you."))],
        THREAD,
    )


@scenario("interrupt() in a subgraph", "chat model", "resume", "subgraphs=True")
def interrupt_in_subgraph(ns: Any) -> Setup:
    """A subgraph asks for confirmation after its model call."""
    model = ScriptedChatModel(replies=[ai("plan: ship it")])

    def plan(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def confirm(state: Any) -> dict[str, Any]:
        ok = ns.interrupt("confirm the plan?")
        return {"messages": [AIMessage(f"confirmed={ok}", id="conf")]}

    inner = ns.StateGraph(ns.MessagesState)
    inner.add_node("plan", plan)
    inner.add_node("confirm", confirm)
    inner.add_edge(ns.START, "plan")
    inner.add_edge("plan", "confirm")
    outer = ns.StateGraph(ns.MessagesState)
    outer.add_node("planner", inner.compile())
    outer.add_edge(ns.START, "planner")
    graph = outer.compile(checkpointer=ns.InMemorySaver())
    return Setup(graph, [Step(_ask("plan")), Step(ns.Command(resume=True))], THREAD)


@scenario("interrupt_before", "update_state(as_node)", "chat model", "resume")
def update_state_then_continue(ns: Any) -> Setup:
    """A human replaces the model's answer before the next node runs."""
    model = ScriptedChatModel(replies=[ai("rough answer")])

    def chat(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def publish(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(f"published: {state['messages'][-1].content}", id="p")]}

    builder = ns.StateGraph(ns.MessagesState)
    builder.add_node("chat", chat)
    builder.add_node("publish", publish)
    builder.add_edge(ns.START, "chat")
    builder.add_edge("chat", "publish")
    graph = builder.compile(checkpointer=ns.InMemorySaver(), interrupt_before=["publish"])

    def edit(graph: Any, config: Any) -> Any:
        return graph.update_state(
            config, {"messages": [AIMessage("polished answer", id="edit")]}, as_node="chat"
        )

    return Setup(graph, [Step(_ask("q")), Step(action=edit), Step(None)], THREAD)


@scenario("two runs without a checkpointer", "chat model", "fresh ids per run")
def two_runs_no_checkpointer(ns: Any) -> Setup:
    """The same compiled chatbot run twice, no thread."""
    model = ScriptedChatModel(rule=lambda ms: ai(f"echo {ms[-1].content}"))

    def chat(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    return Setup(_chat_graph(ns, chat), [Step(_ask("one")), Step(_ask("two"))])


@scenario("GenericFakeChatModel", "async node with astream", "messages stream")
def generic_fake_astream(ns: Any) -> Setup:
    """langchain-core's generic fake model streamed by an async node."""
    model = GenericFakeChatModel(messages=iter([AIMessage("streamed by the fake model")]))

    async def chat(state: Any) -> dict[str, Any]:
        chunks = [chunk async for chunk in model.astream(state["messages"])]
        text = "".join(str(c.content) for c in chunks)
        return {"messages": [AIMessage(text, id="final")]}

    return Setup(_chat_graph(ns, chat), [Step(_ask("go"))], is_async=True)


@scenario("FakeMessagesListChatModel", "two model nodes", "checkpointer")
def fake_messages_list_two_nodes(ns: Any) -> Setup:
    """A writer and a critic, both from langchain-core's list fake model."""
    model = FakeMessagesListChatModel(responses=[AIMessage("draft 1"), AIMessage("looks good")])

    def writer(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def critic(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = ns.StateGraph(ns.MessagesState)
    builder.add_node("writer", writer)
    builder.add_node("critic", critic)
    builder.add_edge(ns.START, "writer")
    builder.add_edge("writer", "critic")
    graph = builder.compile(checkpointer=ns.InMemorySaver())
    return Setup(graph, [Step(_ask("write"))], THREAD)


@tool
def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


@scenario("@tool invoked in a node", "chat model", "events v2 tool runs")
def tool_invoked_in_node(ns: Any) -> Setup:
    """A node calls a LangChain tool directly with the model's tool call."""
    model = ScriptedChatModel(replies=[ai("", call("word_count", {"text": "a b c"}, "w1"))])

    def act(state: Any) -> dict[str, Any]:
        reply = model.invoke(state["messages"])
        result = word_count.invoke(reply.tool_calls[0])
        return {"messages": [reply, result]}

    return Setup(_chat_graph(ns, act), [Step(_ask("count"))])


@scenario("async node with model.astream", "stream writer", "custom + messages modes")
def node_astream_writer(ns: Any) -> Setup:
    """An async node forwards each token to the custom stream as well."""
    model = ScriptedChatModel(replies=[ai("one two three")])

    async def chat(state: Any) -> dict[str, Any]:
        writer = ns.get_stream_writer()
        text = ""
        async for chunk in model.astream(state["messages"]):
            writer({"token": chunk.content})
            text += str(chunk.content)
        return {"messages": [AIMessage(text, id="a1")]}

    return Setup(_chat_graph(ns, chat), [Step(_ask("count"))], is_async=True)


@scenario("chat model bound to tools in a node", "tool-call chunks", "messages stream")
def node_model_tool_calls_streamed(ns: Any) -> Setup:
    """Tool-call chunks stream through the messages mode (nothing runs the tools)."""
    model = ScriptedChatModel(
        replies=[
            ai(
                "Calling",
                call("word_count", {"text": "x"}, "c1"),
                call("word_count", {"text": "y z"}, "c2"),
            )
        ]
    )
    bound = model.bind_tools([word_count])

    def chat(state: Any) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    return Setup(_chat_graph(ns, chat), [Step(_ask("count twice"))])
