"""Model and prompt adapters used by :func:`~stategraph.prebuilt.create_react_agent`."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from stategraph.messages import AIMessage, BaseMessage, SystemMessage, convert_to_messages

__all__ = [
    "ModelCaller",
    "PromptRunner",
    "coerce_ai_message",
    "should_bind_tools",
    "state_messages",
]


def _is_async_callable(func: Any) -> bool:
    if inspect.iscoroutinefunction(func):
        return True
    call = getattr(func, "__call__", None)  # noqa: B004
    return not inspect.isfunction(func) and inspect.iscoroutinefunction(call)


def _required_positional(func: Any) -> int:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return 1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for p in params if p.kind in kinds and p.default is inspect.Parameter.empty)


def state_messages(state: Any, key: str = "messages") -> list[Any]:
    """The message list of ``state`` (a dict or a state object)."""
    if isinstance(state, Mapping):
        return list(state.get(key) or [])
    return list(getattr(state, key, None) or [])


def coerce_ai_message(value: Any, source: str) -> Any:
    """The model's answer as a message: AI messages as they are, strings/dicts converted."""
    if isinstance(value, BaseMessage) or (
        hasattr(value, "type") and hasattr(value, "content") and hasattr(value, "id")
    ):
        return value
    if isinstance(value, str):
        return AIMessage(value)
    if isinstance(value, Mapping):
        data = dict(value)
        if "role" not in data and "type" not in data:
            data["role"] = "assistant"
        return convert_to_messages([data])[0]
    from stategraph._context import CURRENT_TASK

    ctx = CURRENT_TASK.get()
    where = f"Node '{ctx.task_name}': the" if ctx is not None else "The"
    raise TypeError(
        f"{where} model ({source}) returned {type(value).__name__} {value!r:.200}; it must "
        "return an AIMessage (or a str / message dict). Make the model's invoke()/ainvoke() "
        "return a message, or wrap it in a function that converts its result."
    )


def _for_model(model: Any, messages: list[Any]) -> list[Any]:
    """The model's input in its own message classes (LangChain models get LangChain's)."""
    if type(model).__module__.startswith("stategraph."):
        return messages
    from stategraph._bridges import langchain_bridge

    bridge = langchain_bridge()
    if bridge is None or not bridge.is_langchain_model(model):
        return messages
    return bridge.to_langchain_messages(messages)


def _tool_name(tool: Any) -> str | None:
    if isinstance(tool, str):
        return tool
    if isinstance(tool, Mapping):
        function = tool.get("function")
        if isinstance(function, Mapping):
            return function.get("name")
        return tool.get("name")
    return getattr(tool, "name", None) or getattr(tool, "__name__", None)


def _bound_tools(model: Any) -> list[Any] | None:
    """The tools already bound to ``model`` (a LangChain ``RunnableBinding`` of a chat
    model, possibly first in a sequence), or ``None`` when none are."""
    steps = getattr(model, "steps", None)
    if isinstance(steps, list) and steps:
        model = steps[0]
    kwargs = getattr(model, "kwargs", None)
    if hasattr(model, "bound") and isinstance(kwargs, Mapping):  # a RunnableBinding
        tools = kwargs.get("tools")
        if tools is not None:
            return list(tools)
    return None


def should_bind_tools(model: Any, tools: list[Any], num_builtin: int = 0) -> bool:
    """Whether the agent must call ``model.bind_tools(tools)``: not when the model
    already has tools bound, which must then be exactly ``tools``.

    Raises ``ValueError`` naming the tools when the bound ones and ``tools`` differ.
    """
    bound = _bound_tools(model)
    if bound is None:
        return True
    expected = [t for t in tools if not isinstance(t, Mapping)]
    if len(bound) != len(expected) + num_builtin:
        raise ValueError(
            f"The model already has {len(bound)} tool(s) bound, but the agent was given "
            f"{len(expected) + num_builtin}; bind the same tools to the model as you pass "
            "to the agent, or pass the model without bound tools."
        )
    bound_names = {_tool_name(t) for t in bound}
    missing = [n for n in (_tool_name(t) for t in expected) if n not in bound_names]
    if missing:
        raise ValueError(
            f"Tool(s) {missing} were given to the agent but are not bound to the model "
            f"(bound: {sorted(n for n in bound_names if n)}); bind the same tools to both."
        )
    return False


class ModelCaller:
    """Calls the agent's model, whatever shape it has.

    * an object with ``invoke(messages)`` (and/or ``ainvoke``); ``bind_tools(tools)``
      is called once at build time when present and there are tools;
    * a dynamic model: a callable ``(state, runtime) -> model`` (two required positional
      parameters), called on every step; the model it returns is used as is;
    * a callable ``(messages) -> AIMessage`` (sync or async).
    """

    __slots__ = ("is_async", "kind", "model", "raw")

    def __init__(self, model: Any, tools: list[Any]) -> None:
        if isinstance(model, str):
            raise TypeError(
                f"create_react_agent got the model name {model!r}; stategraph does not load "
                "models by name. Pass a model object with invoke(messages), or a callable "
                "(messages) -> AIMessage."
            )
        self.raw = model
        if hasattr(model, "invoke") or hasattr(model, "ainvoke"):
            bind = getattr(model, "bind_tools", None)
            if tools and callable(bind) and should_bind_tools(model, tools):
                model = bind(tools)
            self.kind = "runnable"
            self.is_async = not hasattr(model, "invoke")
        elif callable(model):
            self.is_async = _is_async_callable(model)
            self.kind = "dynamic" if _required_positional(model) >= 2 else "callable"
        else:
            raise TypeError(
                f"create_react_agent cannot use {model!r} as a model: pass an object with "
                "invoke(messages) / ainvoke(messages), or a callable (messages) -> AIMessage."
            )
        self.model = model

    @property
    def has_native_async(self) -> bool:
        """Whether the model has both ``invoke`` and ``ainvoke`` (async runs then await the
        latter instead of running the former in a worker thread)."""
        model = self.model
        return self.kind == "runnable" and hasattr(model, "invoke") and hasattr(model, "ainvoke")

    def _source(self) -> str:
        return getattr(self.raw, "__name__", None) or type(self.raw).__name__

    def model_input(self, messages: list[Any]) -> list[Any]:
        """``messages`` in the model's own message classes."""
        return _for_model(self.model, messages)

    def reply(self, result: Any) -> Any:
        """The model's result as an AI message (checked)."""
        return coerce_ai_message(result, self._source())

    def invoke(self, messages: list[Any], state: Any, runtime: Any) -> Any:
        """Call the model synchronously and return its AI message."""
        model = self.model
        if self.kind == "dynamic":
            model = model(state, runtime)
            if inspect.isawaitable(model):
                raise TypeError(
                    "The dynamic model function returned an awaitable; make it synchronous "
                    "or run the agent with ainvoke()/astream()."
                )
        if self.kind == "callable":
            return coerce_ai_message(model(messages), self._source())
        return coerce_ai_message(model.invoke(_for_model(model, messages)), self._source())

    async def ainvoke(self, messages: list[Any], state: Any, runtime: Any) -> Any:
        """Call the model asynchronously and return its AI message."""
        model = self.model
        if self.kind == "dynamic":
            model = model(state, runtime)
            if inspect.isawaitable(model):
                model = await model
        if self.kind == "callable":
            result = model(messages)
            if inspect.isawaitable(result):
                result = await result
            return coerce_ai_message(result, self._source())
        messages = _for_model(model, messages)
        ainvoke = getattr(model, "ainvoke", None)
        if ainvoke is not None:
            return coerce_ai_message(await ainvoke(messages), self._source())
        import asyncio

        result = await asyncio.to_thread(model.invoke, messages)
        return coerce_ai_message(result, self._source())


def _config_style(func: Any) -> str | None:
    """How a prompt function wants the run config: "positional" (a second positional
    parameter, ``def prompt(state, config)``), "keyword" (a keyword-only ``config``) or
    ``None`` (it does not)."""
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if len([p for p in params if p.kind in kinds]) >= 2:
        return "positional"
    if any(p.name == "config" and p.kind is inspect.Parameter.KEYWORD_ONLY for p in params):
        return "keyword"
    return None


def _run_config() -> Any:
    from stategraph.config import get_config

    try:
        return get_config()
    except RuntimeError:  # called outside a running graph
        return {}


class PromptRunner:
    """Builds the model input from the state according to ``prompt``.

    ``None``: the state's messages; a ``str`` or ``SystemMessage``: that system message
    first; a callable ``(state) -> messages`` or ``(state, config) -> messages`` (sync or
    async; the run's config is passed as ``config``) or an object with
    ``invoke(state)``: whatever it returns.
    """

    __slots__ = ("config_style", "is_async", "kind", "prompt", "system")

    def __init__(self, prompt: Any, messages_key: str = "messages") -> None:
        self.prompt = prompt
        self.system: Any = None
        self.is_async = False
        self.config_style: str | None = None
        if prompt is None:
            self.kind = "none"
        elif isinstance(prompt, str):
            self.kind = "system"
            self.system = SystemMessage(prompt)
        elif getattr(prompt, "type", None) == "system" and hasattr(prompt, "content"):
            self.kind = "system"
            self.system = prompt
        elif hasattr(prompt, "invoke") or hasattr(prompt, "ainvoke"):
            self.kind = "runnable"
            self.is_async = not hasattr(prompt, "invoke")
        elif callable(prompt):
            self.kind = "callable"
            self.is_async = _is_async_callable(prompt)
            self.config_style = _config_style(prompt)
        else:
            raise TypeError(
                f"create_react_agent got prompt={prompt!r}; use a str, a SystemMessage, a "
                "callable (state) -> list of messages, or an object with invoke(state)."
            )

    def messages(self, state: Any) -> list[Any]:
        """The model input for ``state`` (sync prompts only)."""
        if self.kind == "none":
            return state_messages(state)
        if self.kind == "system":
            return [self.system, *state_messages(state)]
        if self.kind == "runnable":
            result = self.prompt.invoke(state)
        else:
            result = self._call(state)
        return _as_message_list(result)

    def chain_input(self, state: Any, convert: Callable[[list[Any]], list[Any]]) -> Any:
        """What the agent's ``Prompt`` step yields when the model is a LangChain one: a
        prompt function's own result when the model takes it as it is (a list of
        LangChain messages, ``(role, text)`` pairs, strings or dicts), as LangGraph
        passes it on; else the messages, ``convert``-ed for the model."""
        if self.kind != "callable":
            return convert(self.messages(state))
        result = self._call(state)
        return result if _model_ready(result) else convert(_as_message_list(result))

    async def achain_input(self, state: Any, convert: Callable[[list[Any]], list[Any]]) -> Any:
        """The asynchronous twin of :meth:`chain_input`."""
        if self.kind != "callable":
            return convert(await self.amessages(state))
        result = self._call(state)
        if inspect.isawaitable(result):
            result = await result
        return result if _model_ready(result) else convert(_as_message_list(result))

    def _call(self, state: Any) -> Any:
        if self.config_style == "positional":
            return self.prompt(state, _run_config())
        if self.config_style == "keyword":
            return self.prompt(state, config=_run_config())
        return self.prompt(state)

    async def amessages(self, state: Any) -> list[Any]:
        """The model input for ``state``, awaiting async prompts."""
        if self.kind in ("none", "system"):
            return self.messages(state)
        if self.kind == "runnable":
            ainvoke = getattr(self.prompt, "ainvoke", None)
            result = await ainvoke(state) if ainvoke is not None else self.prompt.invoke(state)
        else:
            result = self._call(state)
            if inspect.isawaitable(result):
                result = await result
        return _as_message_list(result)


def _model_ready(result: Any) -> bool:
    """Whether a LangChain chat model takes ``result`` as its input as it is."""
    if not isinstance(result, list):
        return False
    return all(
        isinstance(item, (str, tuple, dict)) or type(item).__module__.startswith("langchain_core.")
        for item in result
    )


def _as_message_list(result: Any) -> list[Any]:
    messages = getattr(result, "to_messages", None)
    if callable(messages):  # a prompt value (e.g. a rendered chat prompt template)
        result = messages()
    return convert_to_messages(result)
