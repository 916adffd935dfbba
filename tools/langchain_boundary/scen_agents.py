"""Scenarios: prebuilt agents and tool nodes with LangChain models and tools.

(No ``from __future__ import annotations`` here: LangChain's ``@tool`` reads the
annotations of functions defined inside the builders, which must be real objects.)
"""

import asyncio
from typing import Annotated, Any

from fakes import ScriptedChatModel, ai, call
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import InjectedToolArg, InjectedToolCallId, tool
from observe import Setup, Step
from pydantic import BaseModel
from registry import scenario

THREAD = {"configurable": {"thread_id": "t1"}}


def _ask(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text, id="h1")]}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@tool
def divide(a: int, b: int) -> float:
    """Divide a by b."""
    return a / b


@tool
def flaky_lookup(city: str) -> str:
    """Look up the weather (the backend is down)."""
    raise RuntimeError(f"weather backend down for {city}")


@scenario("create_react_agent", "chat model with tool calls", "@tool")
def react_basic_tool_call(ns: Any) -> Setup:
    """The tutorial agent: one tool call, then an answer."""
    model = ScriptedChatModel(
        replies=[ai("Let me add", call("add", {"a": 2, "b": 3}, "c1")), ai("2 + 3 = 5")]
    )
    agent = ns.create_react_agent(model, [add])
    return Setup(agent, [Step(_ask("what is 2 + 3?"))])


@scenario("create_react_agent", "parallel tool calls", "Send (v2 agent)")
def react_parallel_tools(ns: Any) -> Setup:
    """Two tool calls in one answer run as two Send tasks."""
    model = ScriptedChatModel(
        replies=[
            ai("", call("add", {"a": 1, "b": 2}, "c1"), call("multiply", {"a": 3, "b": 4}, "c2")),
            ai("3 and 12"),
        ]
    )
    agent = ns.create_react_agent(model, [add, multiply])
    return Setup(agent, [Step(_ask("add 1+2 and multiply 3*4"))], concurrent=True)


@scenario("create_react_agent", "ToolNode(handle_tool_errors=True)", "tool error")
def react_tool_error_handled(ns: Any) -> Setup:
    """A failing tool becomes an error ToolMessage the model reacts to."""
    model = ScriptedChatModel(
        replies=[ai("", call("divide", {"a": 1, "b": 0}, "c1")), ai("Cannot divide by zero.")]
    )
    agent = ns.create_react_agent(model, ns.ToolNode([divide], handle_tool_errors=True))
    return Setup(agent, [Step(_ask("1/0?"))])


@scenario("create_react_agent", "tool error (default handling)", "checkpointer", "errors")
def react_tool_error_raises(ns: Any) -> Setup:
    """A tool raising at run time fails the run (default error handling) and the
    checkpointer keeps the failed step's error."""
    model = ScriptedChatModel(replies=[ai("", call("flaky_lookup", {"city": "Oslo"}, "c1"))])
    agent = ns.create_react_agent(model, [flaky_lookup], checkpointer=ns.InMemorySaver())
    return Setup(agent, [Step(_ask("weather in Oslo?"))], THREAD)


@scenario("create_react_agent", "invalid tool arguments", "model retries")
def react_invalid_tool_args(ns: Any) -> Setup:
    """Arguments failing the tool's schema become an error message; the model retries."""
    model = ScriptedChatModel(
        replies=[
            ai("", call("add", {"a": "two", "b": 3}, "c1")),
            ai("", call("add", {"a": 2, "b": 3}, "c2")),
            ai("5"),
        ]
    )
    agent = ns.create_react_agent(model, [add])
    return Setup(agent, [Step(_ask("2+3"))])


def _user_state(ns: Any) -> Any:
    class UserState(ns.AgentState):  # type: ignore[name-defined, misc]
        user_name: str

    return UserState


@scenario("create_react_agent", "@tool with InjectedToolCallId", "Command(update=...) from a tool")
def react_command_tool(ns: Any) -> Setup:
    """The state-update tool: a Command carrying the ToolMessage and a state key."""

    @tool
    def remember_name(name: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Remember the user's name."""
        message = ToolMessage(f"Saved {name}", tool_call_id=tool_call_id)
        return ns.Command(update={"user_name": name, "messages": [message]})

    model = ScriptedChatModel(
        replies=[ai("", call("remember_name", {"name": "Ann"}, "c1")), ai("Hi Ann!")]
    )
    agent = ns.create_react_agent(model, [remember_name], state_schema=_user_state(ns))
    return Setup(agent, [Step({**_ask("I am Ann"), "user_name": ""})])


@scenario("create_react_agent", "async @tool returning Command", "ainvoke", "checkpointer")
def react_command_tool_async(ns: Any) -> Setup:
    """The same state-update tool, async, run with ainvoke on a thread."""

    @tool
    async def remember_name(name: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Remember the user's name."""
        message = ToolMessage(f"Saved {name}", tool_call_id=tool_call_id)
        return ns.Command(update={"user_name": name, "messages": [message]})

    model = ScriptedChatModel(
        replies=[ai("", call("remember_name", {"name": "Bo"}, "c1")), ai("Hi Bo!")]
    )
    agent = ns.create_react_agent(
        model, [remember_name], state_schema=_user_state(ns), checkpointer=ns.InMemorySaver()
    )
    return Setup(agent, [Step({**_ask("I am Bo"), "user_name": ""})], THREAD, is_async=True)


@scenario("create_react_agent", "InjectedState", "InjectedStore", "checkpointer + store")
def react_injected_state_store(ns: Any) -> Setup:
    """A memory tool reading a state key and writing to the store."""

    @tool
    def save_memory(
        fact: str,
        user_name: Annotated[str, ns.InjectedState("user_name")],
        store: Annotated[Any, ns.InjectedStore()],
    ) -> str:
        """Save a fact about the user."""
        store.put(("memories", user_name), "m1", {"fact": fact})
        return f"saved for {user_name}: {len(store.search(('memories', user_name)))} fact(s)"

    model = ScriptedChatModel(
        replies=[ai("", call("save_memory", {"fact": "likes tea"}, "c1")), ai("Noted.")]
    )
    agent = ns.create_react_agent(
        model,
        [save_memory],
        state_schema=_user_state(ns),
        checkpointer=ns.InMemorySaver(),
        store=ns.InMemoryStore(),
    )
    return Setup(agent, [Step({**_ask("I like tea"), "user_name": "ann"})], THREAD)


@scenario("create_react_agent", "prompt(state, config)", "configurable")
def react_prompt_with_config(ns: Any) -> Setup:
    """A prompt function reading the run config (the react-agent template's system prompt)."""

    def prompt(state: Any, config: RunnableConfig) -> list[Any]:
        user = config.get("configurable", {}).get("user_name", "nobody")
        return [("system", f"You help {user}."), *state["messages"]]

    model = ScriptedChatModel(rule=lambda messages: ai(f"system said: {messages[0].content}"))
    agent = ns.create_react_agent(model, [add], prompt=prompt)
    return Setup(agent, [Step(_ask("hello"), {"configurable": {"user_name": "Ann"}})])


class Weather(BaseModel):
    """The weather report."""

    city: str
    temperature: int


@scenario("create_react_agent", "response_format (with_structured_output)", "tool call")
def react_structured_response(ns: Any) -> Setup:
    """The agent answers, then a structured response is generated."""
    model = ScriptedChatModel(
        replies=[
            ai("", call("add", {"a": 20, "b": 1}, "c1")),
            ai("It is 21 degrees in Oslo."),
            ai("", call("Weather", {"city": "Oslo", "temperature": 21}, "c2")),
        ]
    )
    agent = ns.create_react_agent(model, [add], response_format=Weather)
    return Setup(agent, [Step(_ask("weather in Oslo"))])


@scenario("create_react_agent", "return_direct tool", "checkpointer")
def react_return_direct(ns: Any) -> Setup:
    """A return_direct tool ends the run with its own message."""

    @tool(return_direct=True)
    def lookup_order(order_id: str) -> str:
        """Look up an order."""
        return f"Order {order_id}: shipped"

    model = ScriptedChatModel(replies=[ai("", call("lookup_order", {"order_id": "42"}, "c1"))])
    agent = ns.create_react_agent(model, [lookup_order], checkpointer=ns.InMemorySaver())
    return Setup(agent, [Step(_ask("where is order 42?"))], THREAD)


@scenario("create_react_agent", "interrupt() in a tool", "Command(resume=...)", "checkpointer")
def react_interrupt_in_tool(ns: Any) -> Setup:
    """A tool asks a human for approval; the run resumes with the answer."""

    @tool
    def book_flight(destination: str) -> str:
        """Book a flight (asks for approval)."""
        answer = ns.interrupt({"question": f"Book a flight to {destination}?"})
        return f"booked to {destination}" if answer == "yes" else "cancelled"

    model = ScriptedChatModel(
        replies=[ai("", call("book_flight", {"destination": "Rome"}, "c1")), ai("Booked!")]
    )
    agent = ns.create_react_agent(model, [book_flight], checkpointer=ns.InMemorySaver())
    return Setup(agent, [Step(_ask("fly me to Rome")), Step(ns.Command(resume="yes"))], THREAD)


@scenario("create_react_agent", "interrupt_before=['tools']", "resume with None", "history")
def react_interrupt_before_tools(ns: Any) -> Setup:
    """Static breakpoint before the tools, then continue."""
    model = ScriptedChatModel(replies=[ai("", call("add", {"a": 1, "b": 1}, "c1")), ai("2")])
    agent = ns.create_react_agent(
        model, [add], checkpointer=ns.InMemorySaver(), interrupt_before=["tools"]
    )
    return Setup(agent, [Step(_ask("1+1")), Step(None)], THREAD)


@scenario("create_react_agent", "pre_model_hook (llm_input_messages)", "checkpointer")
def react_pre_model_hook(ns: Any) -> Setup:
    """A hook trims the model input to the last message; the state keeps everything."""

    def keep_last(state: Any) -> dict[str, Any]:
        return {"llm_input_messages": state["messages"][-1:]}

    model = ScriptedChatModel(rule=lambda messages: ai(f"I see {len(messages)} message(s)"))
    agent = ns.create_react_agent(
        model, [add], pre_model_hook=keep_last, checkpointer=ns.InMemorySaver()
    )
    return Setup(agent, [Step(_ask("one")), Step(_ask("two"))], THREAD)


@scenario("create_react_agent", "agent as a subgraph node", "subgraphs=True", "checkpointer")
def react_as_subgraph(ns: Any) -> Setup:
    """An agent inside a parent graph with a summary node after it."""
    model = ScriptedChatModel(replies=[ai("", call("add", {"a": 4, "b": 4}, "c1")), ai("8")])
    agent = ns.create_react_agent(model, [add], name="calculator")

    def summarize(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(f"Summary: {state['messages'][-1].content}", id="s1")]}

    builder = ns.StateGraph(ns.MessagesState)
    builder.add_node("calculator", agent)
    builder.add_node("summarize", summarize)
    builder.add_edge(ns.START, "calculator")
    builder.add_edge("calculator", "summarize")
    graph = builder.compile(checkpointer=ns.InMemorySaver())
    return Setup(graph, [Step(_ask("4+4"))], THREAD)


@scenario("create_react_agent", "recursion_limit", "remaining steps budget")
def react_recursion_budget(ns: Any) -> Setup:
    """A model that keeps calling tools hits the step budget."""
    model = ScriptedChatModel(
        rule=lambda messages: ai("", call("add", {"a": len(messages), "b": 1}, f"c{len(messages)}"))
    )
    agent = ns.create_react_agent(model, [add])
    return Setup(agent, [Step(_ask("loop"), {"recursion_limit": 6})])


@scenario("create_react_agent", "Command(goto, graph=PARENT) handoff", "multi-agent graph")
def react_handoff_parent(ns: Any) -> Setup:
    """Swarm-style handoff: a tool moves control to another agent of the parent graph."""

    @tool
    def transfer_to_billing(tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Hand the conversation to the billing agent."""
        message = ToolMessage("Transferred to billing", tool_call_id=tool_call_id)
        return ns.Command(goto="billing", graph=ns.Command.PARENT, update={"messages": [message]})

    front = ns.create_react_agent(
        ScriptedChatModel(replies=[ai("", call("transfer_to_billing", {}, "c1"))]),
        [transfer_to_billing],
        name="front",
    )
    billing = ns.create_react_agent(
        ScriptedChatModel(replies=[ai("Your invoice is paid.")]), [add], name="billing"
    )
    builder = ns.StateGraph(ns.MessagesState)
    builder.add_node("front", front, destinations=("billing",))
    builder.add_node("billing", billing)
    builder.add_edge(ns.START, "front")
    graph = builder.compile(checkpointer=ns.InMemorySaver())
    return Setup(graph, [Step(_ask("a billing question"))], THREAD)


@scenario("ToolNode", "plain function tool taking config: RunnableConfig", "custom agent loop")
def toolnode_config_param(ns: Any) -> Setup:
    """data-enrichment style: a plain search function reads the run config."""

    def search(query: str, config: RunnableConfig) -> str:
        """Search the web."""
        limit = config["configurable"].get("max_results", 0)
        return f"{limit} results for {query}"

    return _custom_loop(ns, [search], call("search", {"query": "tea"}, "c1"))


@scenario("ToolNode", "Annotated[RunnableConfig, InjectedToolArg]", "custom agent loop")
def toolnode_injected_config_arg(ns: Any) -> Setup:
    """swarm-example style: a booking function gets the config as an injected argument."""

    def book_hotel(hotel: str, config: Annotated[RunnableConfig, InjectedToolArg]) -> str:
        """Book a hotel."""
        user = config["configurable"].get("user_id", "?")
        return f"booked {hotel} for {user}"

    return _custom_loop(ns, [book_hotel], call("book_hotel", {"hotel": "Ritz"}, "c1"))


def _custom_loop(ns: Any, tools: list[Any], first_call: dict[str, Any]) -> Setup:
    model = ScriptedChatModel(replies=[ai("", first_call), ai("Done.")])
    bound = model.bind_tools(tools)

    def call_model(state: Any) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    builder = ns.StateGraph(ns.MessagesState)
    builder.add_node("call_model", call_model)
    builder.add_node("tools", ns.ToolNode(tools))
    builder.add_edge(ns.START, "call_model")
    builder.add_conditional_edges("call_model", ns.tools_condition)
    builder.add_edge("tools", "call_model")
    graph = builder.compile()
    config = {"configurable": {"max_results": 3, "user_id": "u7"}}
    return Setup(graph, [Step(_ask("go"))], config)


@scenario("ToolNode + tools_condition", "MessagesState", "two turns on a thread", "history")
def toolnode_multiturn_thread(ns: Any) -> Setup:
    """A hand-built agent loop, two user turns on one thread."""
    model = ScriptedChatModel(
        replies=[
            ai("", call("add", {"a": 1, "b": 2}, "c1")),
            ai("3"),
            ai("", call("multiply", {"a": 3, "b": 3}, "c2")),
            ai("9"),
        ]
    )
    bound = model.bind_tools([add, multiply])

    def agent(state: Any) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    builder = ns.StateGraph(ns.MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ns.ToolNode([add, multiply]))
    builder.add_edge(ns.START, "agent")
    builder.add_conditional_edges("agent", ns.tools_condition, ["tools", ns.END])
    builder.add_edge("tools", "agent")
    graph = builder.compile(checkpointer=ns.InMemorySaver())
    return Setup(graph, [Step(_ask("1+2")), Step({"messages": [("user", "now 3*3")]})], THREAD)


@scenario("create_react_agent", "content_and_artifact tool", "ToolMessage.artifact")
def react_tool_artifact(ns: Any) -> Setup:
    """A tool returning content for the model and an artifact for the app."""

    @tool(response_format="content_and_artifact")
    def fetch_rows(table: str) -> tuple[str, list[dict[str, int]]]:
        """Fetch rows of a table."""
        return f"2 rows from {table}", [{"id": 1}, {"id": 2}]

    model = ScriptedChatModel(replies=[ai("", call("fetch_rows", {"table": "t"}, "c1")), ai("ok")])
    agent = ns.create_react_agent(model, [fetch_rows])
    return Setup(agent, [Step(_ask("rows?"))])


@scenario("create_react_agent", "@tool taking config: RunnableConfig", "metadata + tags")
def react_lc_tool_reads_config(ns: Any) -> Setup:
    """A LangChain tool reads the run's configurable, tags and metadata."""

    @tool
    def whoami(config: RunnableConfig) -> str:
        """Say who is asking."""
        return (
            f"user={config['configurable'].get('user_id')} "
            f"tags={sorted(config.get('tags', []))} "
            f"app={config.get('metadata', {}).get('app')}"
        )

    model = ScriptedChatModel(replies=[ai("", call("whoami", {}, "c1")), ai("ok")])
    agent = ns.create_react_agent(model, [whoami])
    config = {"configurable": {"user_id": "u1"}, "tags": ["prod"], "metadata": {"app": "demo"}}
    return Setup(agent, [Step(_ask("who am i"))], config)


@scenario("create_react_agent", "parallel async tools", "ainvoke / astream")
def react_async_tools(ns: Any) -> Setup:
    """An agent with async tools, run asynchronously."""

    @tool
    async def fetch_price(item: str) -> str:
        """Fetch the price of an item."""
        await asyncio.sleep(0)
        return f"{item}: 3 EUR"

    @tool
    async def fetch_stock(item: str) -> str:
        """Fetch the stock of an item."""
        await asyncio.sleep(0)
        return f"{item}: 12 left"

    model = ScriptedChatModel(
        replies=[
            ai(
                "",
                call("fetch_price", {"item": "tea"}, "c1"),
                call("fetch_stock", {"item": "tea"}, "c2"),
            ),
            ai("3 EUR, 12 left"),
        ]
    )
    agent = ns.create_react_agent(model, [fetch_price, fetch_stock])
    return Setup(agent, [Step(_ask("price of two teas"))], is_async=True)


@scenario("create_react_agent", "RemoveMessage via update_state", "checkpointer")
def react_remove_message_update(ns: Any) -> Setup:
    """Delete a message from the thread between two turns."""
    model = ScriptedChatModel(replies=[ai("first"), ai("second")])
    agent = ns.create_react_agent(model, [add], checkpointer=ns.InMemorySaver())

    def drop_first(graph: Any, config: Any) -> Any:
        return graph.update_state(config, {"messages": [RemoveMessage(id="h1")]})

    return Setup(
        agent,
        [
            Step(_ask("one")),
            Step(action=drop_first),
            Step({"messages": [HumanMessage("two", id="h2")]}),
        ],
        THREAD,
    )
