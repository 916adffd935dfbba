"""The prebuilt agent's model call as LangChain runnables, so tracers see LangGraph's
run tree: a ``call_model`` chain run and, beside it under the agent node, a
``RunnableSequence`` of the ``Prompt`` and the model (``seq:step:1`` / ``seq:step:2``).

Used by ``create_react_agent`` only when the model is a LangChain runnable and the
application uses langchain-core (the agent finds it through
:mod:`stategraph._bridges`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.config import var_child_runnable_config

__all__ = ["acall_model_chain", "anamed_chain", "call_model_chain", "named_chain"]


def call_model_chain(
    state: Any,
    prompt: Callable[[Any], Any],
    model: Any,
    finish: Callable[[Any], Any],
    view: Any = None,
) -> Any:
    """Run ``prompt | model`` inside a ``call_model`` chain run given ``state``; the
    sequence gets ``view`` (the model's view of the state, e.g. a pre-model hook's
    messages) or the state. Returns what ``finish`` makes of the model's reply (the
    node's update)."""
    outer = var_child_runnable_config.get()
    sequence = RunnableLambda(prompt, name="Prompt") | model
    given = state if view is None else view

    def call_model(state: Any) -> Any:
        # the sequence hangs from the node, beside call_model, as under LangGraph
        return finish(sequence.invoke(given, outer))

    return RunnableLambda(call_model, name="call_model").invoke(state, _chain_config(outer))


async def acall_model_chain(
    state: Any,
    prompt: Callable[[Any], Awaitable[Any]],
    model: Any,
    finish: Callable[[Any], Any],
    view: Any = None,
) -> Any:
    """The asynchronous twin of :func:`call_model_chain`."""
    outer = var_child_runnable_config.get()
    sequence = RunnableLambda(_never_sync, afunc=prompt, name="Prompt") | model
    given = state if view is None else view

    async def call_model(state: Any) -> Any:
        return finish(await sequence.ainvoke(given, outer))

    return await RunnableLambda(_never_sync, afunc=call_model, name="call_model").ainvoke(
        state, _chain_config(outer)
    )


def named_chain(name: str, state: Any, work: Callable[[Any, Any], Any]) -> Any:
    """Run ``work(state, config)`` inside a chain run called ``name``, as LangGraph runs
    a prebuilt node's function (``generate_structured_response``); ``config`` is the
    node's, so the runnables ``work`` calls hang from the node beside that run."""
    outer = var_child_runnable_config.get()

    def body(state: Any) -> Any:
        return work(state, outer)

    return RunnableLambda(body, name=name).invoke(state, _chain_config(outer))


async def anamed_chain(name: str, state: Any, work: Callable[[Any, Any], Awaitable[Any]]) -> Any:
    """The asynchronous twin of :func:`named_chain`."""
    outer = var_child_runnable_config.get()

    async def body(state: Any) -> Any:
        return await work(state, outer)

    return await RunnableLambda(_never_sync, afunc=body, name=name).ainvoke(
        state, _chain_config(outer)
    )


def _chain_config(config: Any) -> Any:
    # LangGraph's call_model is its own callable, not a LangChain runnable: its run does
    # not copy the configurable checkpoint_ns into its metadata as runnables do
    if not config or "checkpoint_ns" not in (config.get("configurable") or {}):
        return config
    configurable = {k: v for k, v in config["configurable"].items() if k != "checkpoint_ns"}
    return {**config, "configurable": configurable}


def _never_sync(state: Any) -> Any:
    raise TypeError("the agent's model chain runs asynchronously here: use ainvoke()")
