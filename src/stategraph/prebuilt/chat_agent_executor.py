"""``create_react_agent``: a tool-calling agent loop (model -> tools -> model ...) as a graph."""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, Union, cast

from pydantic import BaseModel
from typing_extensions import NotRequired, TypedDict

from stategraph.constants import END, START
from stategraph.errors import ErrorCode, create_error_message
from stategraph.graph.message import add_messages
from stategraph.managed import RemainingSteps
from stategraph.messages import AIMessage, AnyMessage, SystemMessage
from stategraph.prebuilt._agent_hooks import (
    as_node,
    model_input_state,
    post_hook_router,
    with_llm_input,
)
from stategraph.prebuilt._agent_parts import (
    ModelCaller,
    PromptRunner,
    should_bind_tools,
    state_messages,
)
from stategraph.prebuilt.tool_node import TOOL_CALL_WITH_CONTEXT, ToolNode
from stategraph.pregel._call import ASYNC_TWIN
from stategraph.types import Send

if typing.TYPE_CHECKING:
    from stategraph.graph.state import CompiledStateGraph

__all__ = [
    "AgentState",
    "AgentStatePydantic",
    "AgentStateWithStructuredResponse",
    "create_react_agent",
    "NEED_MORE_STEPS",
    "Prompt",
    "StateSchemaType",
    "StructuredResponseSchema",
]

Prompt = Union[SystemMessage, str, Callable[..., Any], Any]
"""What ``create_react_agent(prompt=...)`` accepts: a system message or its text, a
function ``(state[, config]) -> messages`` (sync or async) or a runnable."""

StateSchemaType = type
"""The type of an agent's ``state_schema`` (a ``TypedDict``, dataclass or pydantic class)."""

StructuredResponseSchema = Union[dict, type]
"""What ``response_format`` accepts: a JSON schema dict or a class (pydantic, TypedDict)."""

_should_bind_tools = should_bind_tools
"""LangGraph's private name for :func:`should_bind_tools` (langgraph-supervisor uses it)."""

NEED_MORE_STEPS = "Sorry, need more steps to process this request."
"""Content of the AI message the agent answers with when the step budget runs out."""


class AgentState(TypedDict):
    """The default state of :func:`create_react_agent`: the messages and the step budget."""

    messages: Annotated[Sequence[AnyMessage], add_messages]
    remaining_steps: NotRequired[RemainingSteps]


class AgentStatePydantic(BaseModel):
    """:class:`AgentState` as a pydantic model (attribute access, defaults).

    ``messages`` holds stategraph's or LangChain's messages alike.
    """

    messages: Annotated[Sequence[Any], add_messages]
    remaining_steps: RemainingSteps = 25


class AgentStateWithStructuredResponse(AgentState):
    """:class:`AgentState` plus the ``structured_response`` built when ``response_format`` is set."""

    structured_response: NotRequired[Any]


class _ToolCallInput(TypedDict):
    """Input schema of the v2 tools node: it only ever receives ``Send`` payloads."""

    messages: Annotated[list[AnyMessage], add_messages]


def _schema_keys(schema: Any) -> set[str]:
    fields = getattr(schema, "model_fields", None)
    if isinstance(fields, Mapping):
        return set(fields)
    import dataclasses

    if dataclasses.is_dataclass(schema):
        return {f.name for f in dataclasses.fields(schema)}
    try:
        return set(typing.get_type_hints(schema))
    except Exception:
        return set(getattr(schema, "__annotations__", {}) or {})


def _get(state: Any, key: str, default: Any = None) -> Any:
    if isinstance(state, Mapping):
        return state.get(key, default)
    return getattr(state, key, default)


def _validate_chat_history(messages: Sequence[Any]) -> None:
    """Raise when an AI tool call in the history has no answering ToolMessage."""
    answered = {str(m.tool_call_id) for m in messages if getattr(m, "type", None) == "tool"}
    missing = [
        call
        for m in messages
        if getattr(m, "type", None) == "ai"
        for call in (getattr(m, "tool_calls", None) or [])
        if str(call.get("id")) not in answered
    ]
    if missing:
        raise ValueError(
            create_error_message(
                message=(
                    "Found AIMessages with tool_calls that do not have a corresponding "
                    f"ToolMessage. Here are the first few of those tool calls: {missing[:3]}.\n\n"
                    "Every tool call (the model requesting a tool) in the message history "
                    "must be answered by a ToolMessage with the same tool_call_id before the "
                    "model is called again. Add the missing ToolMessages (or remove the "
                    "dangling AIMessage) with graph.update_state()."
                ),
                error_code=ErrorCode.INVALID_CHAT_HISTORY,
            )
        )


def create_react_agent(
    model: Any,
    tools: Sequence[Any] | ToolNode,
    *,
    prompt: Any = None,
    response_format: Any = None,
    state_schema: Any = None,
    context_schema: Any = None,
    checkpointer: Any = None,
    store: Any = None,
    interrupt_before: list[str] | None = None,
    interrupt_after: list[str] | None = None,
    debug: bool = False,
    version: Literal["v1", "v2"] = "v2",
    name: str | None = None,
    pre_model_hook: Any = None,
    post_model_hook: Any = None,
) -> CompiledStateGraph:
    """Build and compile an agent that calls ``model`` and runs its tool calls in a loop.

    The graph is ``START -> agent -> (tools_condition) -> tools -> agent ... -> END``:
    the ``agent`` node calls the model on the messages (with ``prompt`` applied); when
    the answer has tool calls the ``tools`` node runs them, otherwise the run ends.

    ``model``: an object with ``invoke(messages) -> AIMessage`` (and optionally
    ``ainvoke``; ``bind_tools(tools)`` is called once when present), a callable
    ``(messages) -> AIMessage`` (sync or async), or a dynamic model ``(state, runtime)
    -> model`` called on each step (its result is used as is, tools already bound).

    ``tools``: functions, :class:`~stategraph.prebuilt.Tool` s, duck-typed tools, or a
    ready :class:`~stategraph.prebuilt.ToolNode`. Dicts (provider built-in tools) are
    only passed to ``bind_tools``. A tool with ``return_direct=True`` ends the run
    right after it.

    ``prompt``: a ``str`` or ``SystemMessage`` (put first), a callable ``(state) ->
    messages`` or an object with ``invoke(state)``.

    ``response_format``: a schema (or ``(system prompt, schema)``); after the loop a
    ``generate_structured_response`` node calls ``model.with_structured_output(schema)``
    and stores the result under ``structured_response``.

    ``state_schema`` must have ``messages`` and ``remaining_steps`` keys (default
    :class:`AgentState`). ``version="v1"`` runs all tool calls of a turn in one tools
    task; ``"v2"`` (default) sends each call to its own task with ``Send``.

    ``pre_model_hook``: a node run before every model call (``START -> pre_model_hook
    -> agent``); it may update the state, or return ``llm_input_messages`` to give the
    model a different input for that call only (e.g. a trimmed history) while the
    state keeps every message. ``post_model_hook``: a node run after every model call;
    routing to the tools (or back, or to the end) happens after it.

    When the step budget (``recursion_limit``) is about to run out while the model
    still asks for tools, the agent answers "Sorry, need more steps to process this
    request." instead of failing with ``GraphRecursionError``.

    Returns the compiled graph (named ``name``; its AI messages carry ``name`` too).
    """
    from stategraph.graph.state import StateGraph

    if version not in ("v1", "v2"):
        raise ValueError(f"Invalid version {version!r}. Supported versions are 'v1' and 'v2'.")
    if isinstance(tools, ToolNode):
        tool_node = tools
        bind_list: list[Any] = list(tool_node.tools_by_name.values())
    else:
        tool_list = list(tools)
        tool_node = ToolNode([t for t in tool_list if not isinstance(t, dict)])
        bind_list = tool_list
    tools_enabled = bool(tool_node.tools_by_name)
    return_direct = tool_node.return_direct_names

    if state_schema is None:
        state_schema = AgentStateWithStructuredResponse if response_format else AgentState
    else:
        required = {"messages", "remaining_steps"}
        if response_format is not None:
            required.add("structured_response")
        missing = required - _schema_keys(state_schema)
        if missing:
            raise ValueError(
                f"Missing required key(s) {sorted(missing)} in state_schema "
                f"{getattr(state_schema, '__name__', state_schema)}; extend AgentState "
                "(from stategraph.prebuilt.chat_agent_executor) to add your own keys."
            )

    caller = ModelCaller(model, bind_list)
    prompter = PromptRunner(prompt)

    def finish(state: Any, response: Any) -> dict[str, Any]:
        if name is not None and getattr(response, "name", None) != name:
            response = _renamed(response, name)
        if _needs_more_steps(state, response, return_direct):
            response = _same_family(
                response, AIMessage(NEED_MORE_STEPS, id=getattr(response, "id", None))
            )
        return {"messages": [response]}

    def agent(state: Any) -> dict[str, Any]:
        view = model_input_state(state) if pre_model_hook is not None else state
        _validate_chat_history(state_messages(view))
        runtime = _runtime() if caller.kind == "dynamic" else None
        chain = _langchain_chain(caller)
        if chain is not None:
            # call_model gets the state, the prompt and model the hook's view of it
            return chain.call_model_chain(
                state,
                lambda s: prompter.chain_input(s, caller.model_input),
                caller.model,
                lambda reply: finish(state, caller.reply(reply)),
                view,
            )
        return finish(state, caller.invoke(prompter.messages(view), state, runtime))

    async def aagent(state: Any) -> dict[str, Any]:
        view = model_input_state(state) if pre_model_hook is not None else state
        _validate_chat_history(state_messages(view))
        runtime = _runtime() if caller.kind == "dynamic" else None
        chain = _langchain_chain(caller)
        if chain is not None and caller.has_native_async:

            async def prompt(s: Any) -> Any:
                return await prompter.achain_input(s, caller.model_input)

            return await chain.acall_model_chain(
                state, prompt, caller.model, lambda reply: finish(state, caller.reply(reply)), view
            )
        messages = await prompter.amessages(view)
        return finish(state, await caller.ainvoke(messages, state, runtime))

    if pre_model_hook is not None:
        builder: StateGraph[Any, Any, Any, Any] = StateGraph(
            with_llm_input(state_schema),
            context_schema=context_schema,
            input_schema=state_schema,
            output_schema=state_schema,
        )
    else:
        builder = StateGraph(state_schema, context_schema=context_schema)
    if caller.is_async or prompter.is_async:
        builder.add_node("agent", aagent)
    else:
        if caller.has_native_async:
            # sync runs call the model's invoke(); async runs await its ainvoke()
            setattr(agent, ASYNC_TWIN, aagent)
        builder.add_node("agent", agent)
    entry = "agent"
    if pre_model_hook is not None:
        entry = "pre_model_hook"
        # the hook reads the agent's own state (not a previous call's llm_input_messages)
        builder.add_node(
            entry, as_node(pre_model_hook, "pre_model_hook"), input_schema=state_schema
        )
        builder.add_edge(entry, "agent")
    builder.add_edge(START, entry)
    after_agent = END
    if response_format is not None:
        after_agent = "generate_structured_response"
        builder.add_node(after_agent, _structured_node(model, response_format))
        builder.add_edge(after_agent, END)
    if post_model_hook is not None:
        builder.add_node("post_model_hook", as_node(post_model_hook, "post_model_hook"))
        builder.add_edge("agent", "post_model_hook")
        targets = ["tools", entry, after_agent] if tools_enabled else [entry, after_agent]
        builder.add_conditional_edges(
            "post_model_hook",
            post_hook_router(version, entry, after_agent, tools_enabled),
            path_map=targets,
        )
    elif not tools_enabled:
        builder.add_edge("agent", after_agent)
    else:
        builder.add_conditional_edges(
            "agent", _router(version, after_agent), path_map=["tools", after_agent]
        )
    if tools_enabled:
        # the drawing labels the tools node with its tools, as LangGraph's does
        tools_label = {"__tools": list(tool_node.tools_by_name)}
        if version == "v2":
            builder.add_node("tools", tool_node, input_schema=_ToolCallInput, metadata=tools_label)
        else:
            builder.add_node("tools", tool_node, metadata=tools_label)
        if return_direct:
            builder.add_conditional_edges(
                "tools", _return_direct_router(return_direct, entry), path_map=[entry, END]
            )
        else:
            builder.add_edge("tools", entry)
    return builder.compile(
        checkpointer=checkpointer,
        store=store,
        interrupt_before=interrupt_before,
        interrupt_after=interrupt_after,
        debug=debug,
        name=name,
    )


def _langchain_chain(caller: ModelCaller) -> Any:
    """The LangChain bridge's agent chain when the model is a LangChain runnable (its
    call is then traced as LangGraph's ``call_model`` > ``Prompt | model``), else None."""
    if caller.kind != "runnable":
        return None
    return _langchain_chain_for(caller.model)


def _langchain_chain_for(model: Any) -> Any:
    """The LangChain bridge's agent chain module when ``model`` is a LangChain model."""
    if type(model).__module__.startswith("stategraph."):
        return None
    from stategraph._bridges import langchain_bridge

    bridge = langchain_bridge()
    if bridge is None or not bridge.is_langchain_model(model):
        return None
    import importlib

    return importlib.import_module("stategraph.interop.langchain._agent_chain")


def _runtime() -> Any:
    from stategraph.runtime import get_runtime

    return get_runtime()


def _same_family(model_reply: Any, message: AIMessage) -> Any:
    """``message`` in the message classes of ``model_reply`` (LangChain's or ours)."""
    if isinstance(model_reply, AIMessage):
        return message
    from stategraph._bridges import langchain_bridge

    bridge = langchain_bridge()
    if bridge is not None and bridge.is_langchain_message(model_reply):
        return bridge.to_langchain(message)
    return message


def _renamed(message: Any, name: str) -> Any:
    """The model's reply named after the agent. A LangChain reply (made by the model
    for this call) is named in place, as LangGraph does, so the model's and the
    chain's runs show the name too; stategraph's messages are copied."""
    if type(message).__module__.startswith("langchain_core."):
        try:
            message.name = name
            return message
        except (AttributeError, TypeError, ValueError):
            pass
    copy = getattr(message, "copy", None)
    if isinstance(message, AIMessage) and callable(copy):
        return message.copy(update={"name": name})
    model_copy = getattr(message, "model_copy", None)
    if callable(model_copy):
        return model_copy(update={"name": name})
    return message


def _needs_more_steps(state: Any, response: Any, return_direct: set[str]) -> bool:
    calls = getattr(response, "tool_calls", None) or []
    if not calls:
        return False
    remaining = _get(state, "remaining_steps")
    if remaining is None:
        return bool(_get(state, "is_last_step", False))
    all_direct = all(call.get("name") in return_direct for call in calls)
    return (remaining < 1 and all_direct) or remaining < 2


def _router(version: str, after_agent: str) -> Callable[[Any], Any]:
    def should_continue(state: Any) -> Any:
        messages = state_messages(state)
        last = messages[-1] if messages else None
        calls = getattr(last, "tool_calls", None) if getattr(last, "type", None) == "ai" else None
        if not calls:
            return after_agent
        if version == "v1":
            return "tools"
        return [
            Send("tools", {"__type": TOOL_CALL_WITH_CONTEXT, "tool_call": call, "state": state})
            for call in calls
        ]

    return should_continue


def _return_direct_router(names: set[str], entry: str = "agent") -> Callable[[Any], str]:
    def route_tool_responses(state: Any) -> str:
        for message in reversed(state_messages(state)):
            if getattr(message, "type", None) != "tool":
                break
            if getattr(message, "name", None) in names:
                return END
        return entry

    return route_tool_responses


def _structured_node(model: Any, response_format: Any) -> Callable[..., Any]:
    system_prompt: str | None = None
    schema = response_format
    if isinstance(response_format, tuple):
        system_prompt, schema = response_format
    make = getattr(model, "with_structured_output", None)
    if not callable(make):
        raise TypeError(
            f"response_format needs a model with with_structured_output(schema); "
            f"{type(model).__name__} has none. Drop response_format, or wrap the model in an "
            "object offering with_structured_output."
        )
    structured = make(schema)

    def inputs(state: Any) -> list[Any]:
        messages = state_messages(state)
        return [SystemMessage(system_prompt), *messages] if system_prompt else messages

    # with a LangChain model the call runs inside a chain run named after the node's
    # function, as LangGraph's traces show it
    chain = _langchain_chain_for(model)
    name = "generate_structured_response"
    if not hasattr(structured, "invoke"):

        async def awork(state: Any, config: Any = None) -> dict[str, Any]:
            args = (inputs(state),) if config is None else (inputs(state), config)
            return {"structured_response": await structured.ainvoke(*args)}

        async def agenerate_structured_response(state: Any) -> dict[str, Any]:
            if chain is not None:
                return cast(dict[str, Any], await chain.anamed_chain(name, state, awork))
            return await awork(state)

        return agenerate_structured_response

    def work(state: Any, config: Any = None) -> dict[str, Any]:
        args = (inputs(state),) if config is None else (inputs(state), config)
        return {"structured_response": structured.invoke(*args)}

    def generate_structured_response(state: Any) -> dict[str, Any]:
        if chain is not None:
            return cast(dict[str, Any], chain.named_chain(name, state, work))
        return work(state)

    return generate_structured_response
