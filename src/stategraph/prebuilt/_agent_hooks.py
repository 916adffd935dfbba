"""Pieces of ``create_react_agent``'s pre- and post-model hooks.

A ``pre_model_hook`` node runs before each model call. It may update the state (e.g.
trim ``messages`` for good with ``RemoveMessage``), or return ``llm_input_messages``:
the model's input for this call only, the state's ``messages`` staying as they are.
A ``post_model_hook`` node runs after each model call, before routing (guardrails,
human review); the route then goes to the tools for any unanswered tool call, back to
the model when the last message is a tool result, and otherwise to the end.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from typing import Any

from typing_extensions import NotRequired, TypedDict

from stategraph.messages import AnyMessage
from stategraph.prebuilt._agent_parts import state_messages
from stategraph.prebuilt.tool_node import TOOL_CALL_WITH_CONTEXT
from stategraph.types import Send

__all__ = ["LLM_INPUT", "with_llm_input", "model_input_state", "post_hook_router", "as_node"]

LLM_INPUT = "llm_input_messages"
"""State key a pre-model hook sets to give the model its input for one call."""


def with_llm_input(state_schema: Any) -> Any:
    """``state_schema`` plus an optional ``llm_input_messages`` list (same reducers)."""
    fields = getattr(state_schema, "model_fields", None)
    if isinstance(fields, Mapping):
        from pydantic import create_model

        return create_model(
            f"{state_schema.__name__}WithLLMInput",
            __base__=state_schema,
            **{LLM_INPUT: (list[AnyMessage] | None, None)},  # type: ignore[call-overload]
        )
    try:
        hints = typing.get_type_hints(state_schema, include_extras=True)
    except Exception as exc:
        raise TypeError(
            f"pre_model_hook needs a TypedDict or pydantic state_schema; cannot read the "
            f"fields of {state_schema!r}: {exc}"
        ) from exc
    hints[LLM_INPUT] = NotRequired[list[AnyMessage]]
    return TypedDict(f"{state_schema.__name__}WithLLMInput", hints)  # type: ignore[operator]


def model_input_state(state: Any) -> Any:
    """The state the prompt and model see: ``messages`` replaced by the hook's input."""
    if isinstance(state, Mapping):
        llm_input = state.get(LLM_INPUT)
        return {**state, "messages": llm_input} if llm_input else state
    llm_input = getattr(state, LLM_INPUT, None)
    if not llm_input:
        return state
    return state.model_copy(update={"messages": llm_input})


def post_hook_router(
    version: str, entry: str, after_agent: str, tools_enabled: bool
) -> Callable[[Any], Any]:
    """Route after the post-model hook: pending tool calls, a tool result, or done."""

    def route_after_post_model_hook(state: Any) -> Any:
        messages = state_messages(state)
        if not messages:
            return after_agent
        answered = {
            str(getattr(m, "tool_call_id", ""))
            for m in messages
            if getattr(m, "type", None) == "tool"
        }
        last_ai = next((m for m in reversed(messages) if getattr(m, "type", None) == "ai"), None)
        pending = [
            c
            for c in (getattr(last_ai, "tool_calls", None) or [])
            if str(c.get("id")) not in answered
        ]
        if pending and tools_enabled:
            if version == "v1":
                return "tools"
            return [
                Send("tools", {"__type": TOOL_CALL_WITH_CONTEXT, "tool_call": c, "state": state})
                for c in pending
            ]
        if getattr(messages[-1], "type", None) == "tool":
            return entry
        return after_agent

    return route_after_post_model_hook


def as_node(hook: Any, label: str) -> Any:
    """A hook as a graph node: functions as they are, runnables through ``invoke``."""
    if callable(hook):
        return hook
    invoke = getattr(hook, "invoke", None)
    if callable(invoke):
        ainvoke = getattr(hook, "ainvoke", None)

        def run_hook(state: Any) -> Any:
            return invoke(state)

        if callable(ainvoke):
            from stategraph.pregel._call import ASYNC_TWIN

            async def arun_hook(state: Any) -> Any:
                return await ainvoke(state)

            setattr(run_hook, ASYNC_TWIN, arun_hook)
        return run_hook
    raise TypeError(
        f"create_react_agent got {label}={hook!r:.100}; pass a function (state) -> update, "
        "or an object with invoke(state)."
    )
