"""create_react_agent end to end with scripted models."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.errors import GraphRecursionError
from stategraph.graph.message import MessagesState, add_messages
from stategraph.managed import RemainingSteps
from stategraph.messages import AIMessage, HumanMessage, SystemMessage
from stategraph.prebuilt import (
    AgentState,
    InjectedState,
    InjectedStore,
    ToolNode,
    create_react_agent,
    tool,
    tools_condition,
)
from stategraph.prebuilt.chat_agent_executor import NEED_MORE_STEPS
from stategraph.runtime import Runtime
from stategraph.store.memory import InMemoryStore
from stategraph.types import Command, interrupt

from .helpers import AsyncOnlyChatModel, FakeChatModel, Runner, ai_calls, call, contents


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def two_calls_then_answer() -> FakeChatModel:
    return FakeChatModel(
        [
            ai_calls(call("add", {"a": 1, "b": 2}, "1"), call("multiply", {"a": 3, "b": 4}, "2")),
            AIMessage("3 and 12"),
        ]
    )


# ---------------------------------------------------------------------- the loop
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_agent_loop_end_to_end(run: Runner, version: str) -> None:
    model = two_calls_then_answer()
    agent = create_react_agent(model, [add, multiply], version=version)
    out = run.invoke(agent, {"messages": [("user", "compute")]})
    assert contents(out["messages"]) == [
        ("human", "compute"),
        ("ai", ""),
        ("tool", "3"),
        ("tool", "12"),
        ("ai", "3 and 12"),
    ]
    assert [m.tool_call_id for m in out["messages"][2:4]] == ["1", "2"]
    assert model.bind_count == 1 and model.bound == [add, multiply]
    assert contents(model.seen[1]) == contents(out["messages"][:4])
    assert list(agent.get_graph().nodes) == ["__start__", "agent", "tools", "__end__"]


def test_v1_updates_once_v2_once_per_call(run: Runner) -> None:
    def updates(version: str) -> list[tuple[str, list[str]]]:
        agent = create_react_agent(two_calls_then_answer(), [add, multiply], version=version)
        chunks = run.stream(agent, {"messages": [("user", "go")]}, stream_mode="updates")
        return [
            (node, [m.content for m in update["messages"]])
            for chunk in chunks
            for node, update in chunk.items()
        ]

    assert updates("v1") == [("agent", [""]), ("tools", ["3", "12"]), ("agent", ["3 and 12"])]
    v2 = updates("v2")
    assert v2[0] == ("agent", [""]) and v2[-1] == ("agent", ["3 and 12"])
    assert sorted(v2[1:3]) == [("tools", ["12"]), ("tools", ["3"])]


def test_no_tools_means_a_single_model_call(run: Runner) -> None:
    model = FakeChatModel([AIMessage("hello")])
    agent = create_react_agent(model, [])
    out = run.invoke(agent, {"messages": [("user", "hi")]})
    assert contents(out["messages"]) == [("human", "hi"), ("ai", "hello")]
    assert model.bind_count == 0
    assert list(agent.get_graph().nodes) == ["__start__", "agent", "__end__"]


def test_dict_tools_are_bound_but_not_run(run: Runner) -> None:
    builtin = {"type": "web_search"}
    model = FakeChatModel([AIMessage("searched")])
    agent = create_react_agent(model, [builtin])
    assert model.bound == [builtin]
    assert list(agent.get_graph().nodes) == ["__start__", "agent", "__end__"]
    assert run.invoke(agent, {"messages": [("user", "q")]})["messages"][-1].content == "searched"


def test_tool_node_instance_as_tools(run: Runner) -> None:
    model = FakeChatModel([ai_calls(call("boom", {}, "1")), AIMessage("recovered")])

    def boom() -> str:
        """Explodes."""
        raise RuntimeError("kaput")

    agent = create_react_agent(model, ToolNode([boom], handle_tool_errors=True))
    out = run.invoke(agent, {"messages": [("user", "x")]})
    assert out["messages"][2].content == "Error: RuntimeError('kaput')\n Please fix your mistakes."
    assert out["messages"][-1].content == "recovered"
    assert [t.name for t in model.bound or []] == ["boom"]


def test_tool_errors_by_default_report_bad_arguments(run: Runner) -> None:
    model = FakeChatModel([ai_calls(call("add", {"a": "one"}, "1")), AIMessage("sorry")])
    out = run.invoke(create_react_agent(model, [add]), {"messages": [("user", "x")]})
    assert out["messages"][2].status == "error"
    assert out["messages"][2].content.startswith("Error invoking tool 'add' with kwargs")


# ---------------------------------------------------------------------- persistence / HITL
def test_thread_continuity_with_a_checkpointer(run: Runner) -> None:
    model = FakeChatModel([AIMessage("first answer"), AIMessage("second answer")])
    agent = create_react_agent(model, [add], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "chat-1"}}
    run.invoke(agent, {"messages": [("user", "one")]}, config)
    out = run.invoke(agent, {"messages": [("user", "two")]}, config)
    assert contents(out["messages"]) == [
        ("human", "one"),
        ("ai", "first answer"),
        ("human", "two"),
        ("ai", "second answer"),
    ]
    assert contents(model.seen[1]) == contents(out["messages"][:3])


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_interrupt_before_tools_then_resume(run: Runner, version: str) -> None:
    model = FakeChatModel([ai_calls(call("add", {"a": 2, "b": 3}, "1")), AIMessage("five")])
    agent = create_react_agent(
        model, [add], checkpointer=InMemorySaver(), interrupt_before=["tools"], version=version
    )
    config = {"configurable": {"thread_id": f"hitl-{version}"}}
    paused = run.invoke(agent, {"messages": [("user", "2+3?")]}, config)
    assert contents(paused["messages"]) == [("human", "2+3?"), ("ai", "")]
    assert agent.get_state(config).next == ("tools",)
    done = run.invoke(agent, None, config)
    assert contents(done["messages"]) == [
        ("human", "2+3?"),
        ("ai", ""),
        ("tool", "5"),
        ("ai", "five"),
    ]
    assert agent.get_state(config).next == ()


def test_interrupt_after_agent(run: Runner) -> None:
    model = FakeChatModel([ai_calls(call("add", {"a": 1, "b": 2})), AIMessage("three")])
    agent = create_react_agent(
        model, [add], checkpointer=InMemorySaver(), interrupt_after=["agent"], version="v1"
    )
    config = {"configurable": {"thread_id": "after"}}
    paused = run.invoke(agent, {"messages": [("user", "1+2")]}, config)
    assert contents(paused["messages"]) == [("human", "1+2"), ("ai", "")]
    assert agent.get_state(config).next == ("tools",)
    paused = run.invoke(agent, None, config)
    assert contents(paused["messages"])[-2:] == [("tool", "3"), ("ai", "three")]
    assert agent.get_state(config).next == ()


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_tool_asking_a_human_resumes(run: Runner, version: str) -> None:
    def ask_human(question: str) -> str:
        """Ask the human a question."""
        return f"human: {interrupt(question)}"

    model = FakeChatModel([ai_calls(call("ask_human", {"question": "deploy?"})), AIMessage("ok")])
    agent = create_react_agent(model, [ask_human], checkpointer=InMemorySaver(), version=version)
    config = {"configurable": {"thread_id": f"ask-{version}"}}
    paused = run.invoke(agent, {"messages": [("user", "ship it")]}, config)
    assert [i.value for i in paused["__interrupt__"]] == ["deploy?"]
    done = run.invoke(agent, Command(resume="yes"), config)
    assert contents(done["messages"])[-2:] == [("tool", "human: yes"), ("ai", "ok")]
    assert len(model.seen) == 2


# ---------------------------------------------------------------------- prompts
@pytest.mark.parametrize(
    "prompt",
    [
        "Be brief.",
        SystemMessage("Be brief."),
        lambda state: [SystemMessage("Be brief."), *state["messages"]],
    ],
    ids=["str", "system-message", "callable"],
)
def test_prompt_variants(run: Runner, prompt: Any) -> None:
    model = FakeChatModel([AIMessage("ok")])
    out = run.invoke(
        create_react_agent(model, [add], prompt=prompt), {"messages": [("user", "hi")]}
    )
    assert contents(model.seen[0]) == [("system", "Be brief."), ("human", "hi")]
    assert contents(out["messages"]) == [("human", "hi"), ("ai", "ok")]


def test_prompt_object_with_invoke(run: Runner) -> None:
    class Template:
        def invoke(self, state: dict[str, Any]) -> list[Any]:
            return [("system", f"{len(state['messages'])} messages so far"), *state["messages"]]

    model = FakeChatModel([AIMessage("ok")])
    run.invoke(create_react_agent(model, [], prompt=Template()), {"messages": [("user", "hi")]})
    assert contents(model.seen[0]) == [("system", "1 messages so far"), ("human", "hi")]


async def test_async_prompt_needs_ainvoke() -> None:
    async def prompt(state: dict[str, Any]) -> list[Any]:
        await asyncio.sleep(0)
        return [SystemMessage("async prompt"), *state["messages"]]

    model = FakeChatModel([AIMessage("ok")])
    agent = create_react_agent(model, [], prompt=prompt)
    await agent.ainvoke({"messages": [("user", "hi")]})
    assert contents(model.seen[0]) == [("system", "async prompt"), ("human", "hi")]
    with pytest.raises(TypeError, match="Node 'agent' is an async function"):
        agent.invoke({"messages": [("user", "hi")]})


# ---------------------------------------------------------------------- models
def test_plain_callable_model(run: Runner) -> None:
    seen: list[int] = []

    def model(messages: list[Any]) -> Any:
        seen.append(len(messages))
        return "plain text answer"

    out = run.invoke(create_react_agent(model, [add]), {"messages": [("user", "hi")]})
    assert seen == [1]
    assert contents(out["messages"]) == [("human", "hi"), ("ai", "plain text answer")]


def test_async_only_model(run: Runner) -> None:
    model = AsyncOnlyChatModel([ai_calls(call("add", {"a": 1, "b": 1})), AIMessage("two")])
    agent = create_react_agent(model, [add])
    if not run.is_async:
        with pytest.raises(TypeError, match="Node 'agent' is an async function"):
            run.invoke(agent, {"messages": [("user", "1+1")]})
        return
    out = run.invoke(agent, {"messages": [("user", "1+1")]})
    assert contents(out["messages"])[-2:] == [("tool", "2"), ("ai", "two")]


def test_dynamic_model_is_chosen_per_step(run: Runner) -> None:
    small = FakeChatModel([ai_calls(call("add", {"a": 1, "b": 1}), id="small-1")])
    large = FakeChatModel([AIMessage("done by large", id="large-1")])
    chosen: list[tuple[int, bool]] = []

    def pick(state: dict[str, Any], runtime: Runtime[Any]) -> FakeChatModel:
        chosen.append((len(state["messages"]), runtime.context["tier"]))
        return small if len(state["messages"]) == 1 else large

    agent = create_react_agent(pick, [add], context_schema=dict)
    out = run.invoke(agent, {"messages": [("user", "x")]}, context={"tier": "pro"})
    assert chosen == [(1, "pro"), (3, "pro")]
    assert contents(out["messages"]) == [
        ("human", "x"),
        ("ai", ""),
        ("tool", "2"),
        ("ai", "done by large"),
    ]
    assert small.bind_count == 0 and large.bind_count == 0


def test_named_agent_names_its_messages(run: Runner) -> None:
    model = FakeChatModel([ai_calls(call("add", {"a": 1, "b": 1})), AIMessage("two")])
    agent = create_react_agent(model, [add], name="calculator")
    assert agent.name == "calculator"
    out = run.invoke(agent, {"messages": [("user", "1+1")]})
    assert [(m.type, m.name) for m in out["messages"]] == [
        ("human", None),
        ("ai", "calculator"),
        ("tool", "add"),
        ("ai", "calculator"),
    ]


# ---------------------------------------------------------------------- step budget
def looping_model() -> FakeChatModel:
    return FakeChatModel([ai_calls(call("add", {"a": 1, "b": 1}))], cycle=True)


@pytest.mark.parametrize(("limit", "model_calls"), [(2, 1), (4, 2), (6, 3)])
def test_out_of_steps_answers_sorry(run: Runner, limit: int, model_calls: int) -> None:
    model = looping_model()
    out = run.invoke(
        create_react_agent(model, [add]),
        {"messages": [("user", "loop")]},
        {"recursion_limit": limit},
    )
    assert len(model.seen) == model_calls
    last = out["messages"][-1]
    assert (last.type, last.content, last.tool_calls) == ("ai", NEED_MORE_STEPS, [])
    assert last.id == f"ai-{model_calls}"
    assert [m.type for m in out["messages"]] == ["human"] + ["ai", "tool"] * (model_calls - 1) + [
        "ai"
    ]


@pytest.mark.parametrize("limit", [1, 3, 5])
def test_odd_limits_hit_the_recursion_error(run: Runner, limit: int) -> None:
    with pytest.raises(GraphRecursionError):
        run.invoke(
            create_react_agent(looping_model(), [add]),
            {"messages": [("user", "loop")]},
            {"recursion_limit": limit},
        )


# ---------------------------------------------------------------------- return_direct
def test_return_direct_tool_ends_the_run(run: Runner) -> None:
    @tool(return_direct=True)
    def final_answer(text: str) -> str:
        """Answer directly."""
        return text.upper()

    model = FakeChatModel([ai_calls(call("final_answer", {"text": "done"}))])
    agent = create_react_agent(model, [final_answer, add])
    out = run.invoke(agent, {"messages": [("user", "x")]})
    assert contents(out["messages"]) == [("human", "x"), ("ai", ""), ("tool", "DONE")]
    assert len(model.seen) == 1


def test_non_direct_tool_still_loops_when_a_direct_tool_exists(run: Runner) -> None:
    @tool(return_direct=True)
    def final_answer(text: str) -> str:
        """Answer directly."""
        return text

    model = FakeChatModel([ai_calls(call("add", {"a": 1, "b": 1})), AIMessage("two")])
    out = run.invoke(create_react_agent(model, [final_answer, add]), {"messages": [("user", "x")]})
    assert contents(out["messages"])[-2:] == [("tool", "2"), ("ai", "two")]


# ---------------------------------------------------------------------- structured output
class StructuredModel(FakeChatModel):
    def __init__(self, responses: list[AIMessage]) -> None:
        super().__init__(responses)
        self.structured_inputs: list[list[Any]] = []

    def with_structured_output(self, schema: Any) -> Any:
        outer = self

        class Structured:
            def invoke(self, messages: list[Any]) -> Any:
                outer.structured_inputs.append(list(messages))
                return schema(answer=messages[-1].content)

        return Structured()


def test_response_format_builds_structured_response(run: Runner) -> None:
    from pydantic import BaseModel

    class Answer(BaseModel):
        answer: str

    model = StructuredModel([ai_calls(call("add", {"a": 2, "b": 2})), AIMessage("four")])
    agent = create_react_agent(model, [add], response_format=("Summarize.", Answer))
    out = run.invoke(agent, {"messages": [("user", "2+2")]})
    assert out["structured_response"] == Answer(answer="four")
    assert contents(model.structured_inputs[0])[0] == ("system", "Summarize.")
    assert "generate_structured_response" in agent.get_graph().nodes


def test_response_format_needs_with_structured_output() -> None:
    with pytest.raises(TypeError, match="with_structured_output"):
        create_react_agent(FakeChatModel([]), [add], response_format=dict)


# ---------------------------------------------------------------------- state schema
class CustomState(AgentState):
    user_name: str


def test_custom_state_schema_reaches_tools(run: Runner) -> None:
    def greet(state: Annotated[dict, InjectedState]) -> str:
        """Greet the user."""
        return f"hello {state['user_name']}"

    model = FakeChatModel([ai_calls(call("greet")), AIMessage("greeted")])
    agent = create_react_agent(model, [greet], state_schema=CustomState)
    out = run.invoke(agent, {"messages": [("user", "hi")], "user_name": "Ada"})
    assert out["messages"][2].content == "hello Ada"
    assert out["user_name"] == "Ada"


def test_state_schema_must_have_the_agent_keys() -> None:
    with pytest.raises(ValueError, match=r"Missing required key\(s\) \['remaining_steps'\]"):
        create_react_agent(FakeChatModel([]), [add], state_schema=MessagesState)


def test_dangling_tool_call_in_history_is_rejected(run: Runner) -> None:
    model = FakeChatModel([AIMessage("never")])
    agent = create_react_agent(model, [add])
    history = [
        HumanMessage("a"),
        ai_calls(call("add", {"a": 1, "b": 1}, "lost")),
        HumanMessage("b"),
    ]
    with pytest.raises(ValueError, match="do not have a corresponding ToolMessage"):
        run.invoke(agent, {"messages": history})
    assert model.seen == []


def test_bad_arguments_are_reported() -> None:
    with pytest.raises(TypeError, match="does not load models by name"):
        create_react_agent("openai:gpt-4o", [add])
    with pytest.raises(TypeError, match="cannot use 42 as a model"):
        create_react_agent(42, [add])
    with pytest.raises(ValueError, match="Invalid version 'v3'"):
        create_react_agent(FakeChatModel([]), [add], version="v3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="prompt=42"):
        create_react_agent(FakeChatModel([]), [add], prompt=42)
    with pytest.raises(TypeError, match="must return an AIMessage"):
        create_react_agent(lambda messages: 42, []).invoke({"messages": [("user", "x")]})


def test_tools_condition_variants() -> None:
    with_calls = ai_calls(call("add"))
    assert tools_condition({"messages": [with_calls]}) == "tools"
    assert tools_condition([HumanMessage("x"), with_calls]) == "tools"
    assert tools_condition({"messages": [AIMessage("done")]}) == "__end__"
    assert tools_condition({"chat": [with_calls]}, messages_key="chat") == "tools"

    class Obj:
        messages = [with_calls]

    assert tools_condition(Obj()) == "tools"
    with pytest.raises(ValueError, match="found no messages in its input state"):
        tools_condition({"messages": []})
    with pytest.raises(ValueError, match="key 'messages'"):
        tools_condition({"other": [with_calls]})


class ModelState(BaseModel):
    messages: Annotated[list, add_messages]
    remaining_steps: RemainingSteps = 25
    topic: str = "none"


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_pydantic_state_store_and_checkpointer(run: Runner, version: str) -> None:
    def look(
        state: Annotated[Any, InjectedState],
        topic: Annotated[str, InjectedState("topic")],
        store: Annotated[Any, InjectedStore()],
    ) -> str:
        """Look up the topic."""
        return f"{type(state).__name__}:{topic}:{store.get(('facts',), topic).value['v']}"

    store = InMemoryStore()
    store.put(("facts",), "cats", {"v": "purr"})
    model = FakeChatModel([ai_calls(call("look", {}, "1"), call("look", {}, "2")), AIMessage("ok")])
    agent = create_react_agent(
        model,
        [look],
        state_schema=ModelState,
        store=store,
        checkpointer=InMemorySaver(),
        version=version,
    )
    config = {"configurable": {"thread_id": f"p-{version}"}}
    out = run.invoke(agent, {"messages": [("user", "hi")], "topic": "cats"}, config)
    assert contents(out["messages"]) == [
        ("human", "hi"),
        ("ai", ""),
        ("tool", "ModelState:cats:purr"),
        ("tool", "ModelState:cats:purr"),
        ("ai", "ok"),
    ]
    assert agent.get_state(config).values["topic"] == "cats"
