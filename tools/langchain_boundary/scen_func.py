"""Scenarios: the functional API (``@entrypoint`` / ``@task``) with LangChain models.

(No ``from __future__ import annotations``: see scen_agents.)
"""

from typing import Any

from fakes import FlakyChatModel, ScriptedChatModel, ai, call
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from observe import Setup, Step
from registry import scenario
from typing_extensions import TypedDict

THREAD = {"configurable": {"thread_id": "t1"}}


@tool
def get_weather(city: str) -> str:
    """Get the weather of a city."""
    return f"sunny in {city}"


@scenario("@entrypoint + @task", "chat model in a task", "checkpointer")
def func_model_task(ns: Any) -> Setup:
    """A one-task workflow calling a model."""
    model = ScriptedChatModel(rule=lambda ms: ai(f"answer to {ms[-1].content}"))

    @ns.task
    def call_model(question: str) -> Any:
        return model.invoke(question)

    @ns.entrypoint(checkpointer=ns.InMemorySaver())
    def workflow(question: str) -> str:
        return str(call_model(question).result().content)

    return Setup(workflow, [Step("why?")], THREAD)


@scenario("@entrypoint", "two sequential model tasks", "events v2 order")
def func_two_tasks_order(ns: Any) -> Setup:
    """An outline task then a writing task (the first result feeds the second)."""
    model = ScriptedChatModel(rule=lambda ms: ai(f"[{ms[-1].content}]"))

    @ns.task
    def outline(topic: str) -> str:
        return str(model.invoke(f"outline {topic}").content)

    @ns.task
    def write(plan: str) -> str:
        return str(model.invoke(f"write {plan}").content)

    @ns.entrypoint()
    def workflow(topic: str) -> str:
        return write(outline(topic).result()).result()

    return Setup(workflow, [Step("tea")])


@scenario("@entrypoint agent loop", "parallel tool tasks", "add_messages", "chat model")
def func_agent_loop(ns: Any) -> Setup:
    """The functional-API agent: model task, tool tasks in parallel, until no calls."""
    model = ScriptedChatModel(
        replies=[
            ai(
                "",
                call("get_weather", {"city": "Oslo"}, "c1"),
                call("get_weather", {"city": "Rome"}, "c2"),
            ),
            ai("Sunny in both."),
        ]
    )
    tools = {"get_weather": get_weather}

    @ns.task
    def call_model(messages: list[Any]) -> Any:
        return model.invoke(messages)

    @ns.task
    def call_tool(tool_call: dict[str, Any]) -> Any:
        return tools[tool_call["name"]].invoke(tool_call)

    @ns.entrypoint()
    def agent(messages: list[Any]) -> list[Any]:
        response = call_model(messages).result()
        while response.tool_calls:
            futures = [call_tool(tc) for tc in response.tool_calls]
            results = [f.result() for f in futures]
            messages = ns.add_messages(messages, [response, *results])
            response = call_model(messages).result()
        return ns.add_messages(messages, response)

    return Setup(agent, [Step([HumanMessage("weather?", id="h1")])], concurrent=True)


@scenario("compiled graph inside a @task", "subgraphs=True namespaces", "chat model")
def func_graph_in_task(ns: Any) -> Setup:
    """A workflow task runs a small StateGraph chatbot."""
    model = ScriptedChatModel(rule=lambda ms: ai(f"graph says {ms[-1].content}"))

    def chat(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = ns.StateGraph(ns.MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(ns.START, "chat")
    chatbot = builder.compile()

    @ns.task
    def run_graph(text: str) -> str:
        out = chatbot.invoke({"messages": [HumanMessage(text, id="h1")]})
        return str(out["messages"][-1].content)

    @ns.entrypoint()
    def wf(text: str) -> str:
        return run_graph(text).result()

    return Setup(wf, [Step("hi")])


@scenario("@task cache_policy", "InMemoryCache", "chat model", "two runs")
def func_cached_task(ns: Any) -> Setup:
    """An expensive model task is cached: the second run reuses the result."""
    model = ScriptedChatModel(rule=lambda ms: ai(f"expensive {ms[-1].content}"))

    @ns.task(cache_policy=ns.CachePolicy())
    def expensive(text: str) -> str:
        return str(model.invoke(text).content)

    @ns.entrypoint(cache=ns.InMemoryCache())
    def wf(text: str) -> str:
        return expensive(text).result()

    return Setup(wf, [Step("q"), Step("q")])


@scenario("@entrypoint interrupt()", "chat model task", "Command(resume)", "checkpointer")
def func_interrupt_resume(ns: Any) -> Setup:
    """A drafted answer is approved by a human before it is returned."""
    model = ScriptedChatModel(replies=[ai("draft answer")])

    @ns.task
    def draft(question: str) -> str:
        return str(model.invoke(question).content)

    @ns.entrypoint(checkpointer=ns.InMemorySaver())
    def wf(question: str) -> dict[str, Any]:
        text = draft(question).result()
        verdict = ns.interrupt({"draft": text})
        return {"text": text, "verdict": verdict}

    return Setup(wf, [Step("q"), Step(ns.Command(resume="approved"))], THREAD)


@scenario("@task retry_policy", "flaky chat model", "functional API")
def func_retry_task(ns: Any) -> Setup:
    """A model task retried after a provider error."""
    model = FlakyChatModel(replies=[ai("recovered")], failures=2)
    policy = ns.RetryPolicy(initial_interval=0.01, jitter=False, retry_on=ConnectionError)

    @ns.task(retry_policy=policy)
    def ask(text: str) -> str:
        return str(model.invoke(text).content)

    @ns.entrypoint()
    def wf(text: str) -> str:
        return ask(text).result()

    return Setup(wf, [Step("q")])


@scenario("@entrypoint with stream writer", "async model task", "custom stream")
def func_async_writer(ns: Any) -> Setup:
    """An async workflow reports progress and awaits a model task."""
    model = ScriptedChatModel(replies=[ai("async answer")])

    @ns.task
    async def ask(text: str) -> str:
        reply = await model.ainvoke(text)
        return str(reply.content)

    @ns.entrypoint()
    async def wf(text: str) -> str:
        writer = ns.get_stream_writer()
        writer("starting")
        answer = await ask(text)
        writer("finished")
        return answer

    return Setup(wf, [Step("q")], is_async=True)


@scenario("entrypoint.final", "previous value across runs", "chat model", "checkpointer")
def func_final_previous(ns: Any) -> Setup:
    """A chat memory kept with entrypoint.final / previous."""
    model = ScriptedChatModel(rule=lambda ms: ai(f"reply #{len(ms)}"))

    @ns.task
    def respond(messages: list[Any]) -> Any:
        return model.invoke(messages)

    @ns.entrypoint(checkpointer=ns.InMemorySaver())
    def chat(message: Any, *, previous: Any = None) -> Any:
        history = ns.add_messages(previous or [], [message])
        reply = respond(history).result()
        history = ns.add_messages(history, [reply])
        return ns.entrypoint.final(value=reply.content, save=history)

    return Setup(
        chat,
        [Step(HumanMessage("a", id="h1")), Step(HumanMessage("b", id="h2"))],
        THREAD,
    )


class _Report(TypedDict):
    city: str
    summary: str


@scenario("tool returning ToolMessage", "functional task", "state of messages")
def func_tool_message_task(ns: Any) -> Setup:
    """A task runs a tool with a tool call and keeps the ToolMessage it returns."""

    @ns.task
    def run_tool(tool_call: dict[str, Any]) -> Any:
        return get_weather.invoke(tool_call)

    @ns.entrypoint()
    def wf(city: str) -> dict[str, Any]:
        message = run_tool(call("get_weather", {"city": city}, "t1")).result()
        ok = isinstance(message, ToolMessage)
        return {"is_tool_message": ok, "content": message.content, "id": message.tool_call_id}

    return Setup(wf, [Step("Oslo")])


@scenario("@entrypoint", "AIMessage output", "messages stream from a task")
def func_returns_message(ns: Any) -> Setup:
    """The workflow returns the model's message itself."""
    model = ScriptedChatModel(replies=[ai("the final words")])

    @ns.task
    def speak(text: str) -> AIMessage:
        return model.invoke(text)

    @ns.entrypoint()
    def wf(text: str) -> AIMessage:
        return speak(text).result()

    return Setup(wf, [Step("talk")])
