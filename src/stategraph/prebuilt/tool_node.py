"""``ToolNode``: a graph node that runs the tool calls of the last AI message.

Also home of :func:`tools_condition` and the injection markers, at the module path
LangGraph uses (``langgraph.prebuilt.tool_node``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal

from typing_extensions import TypedDict

from stategraph.constants import END
from stategraph.errors import GraphBubbleUp
from stategraph.messages import ToolCall, ToolMessage, convert_to_messages
from stategraph.observe._tool_calls import tool_failed, tool_finished, tool_started
from stategraph.prebuilt._injection import (
    InjectedState,
    InjectedStore,
    InjectedToolArg,
    InjectedToolCallId,
    injected_values,
)
from stategraph.prebuilt._runner import ToolRunner, as_runner
from stategraph.prebuilt._tool_node_parts import (
    Parsed,
    check_list,
    checked_call,
    checked_result,
    current_config,
    current_graph_state,
    current_store,
    is_tool_call_list,
    last_ai,
)
from stategraph.prebuilt._tool_output import (
    ErrorHandler,
    default_handle_tool_errors,
    error_content,
    invalid_tool_message,
    result_to_output,
)
from stategraph.prebuilt._tool_runtime import ToolCallRequest, ToolRuntime, current_tool_runtime
from stategraph.prebuilt._tools import ToolInvocationError, is_async_only
from stategraph.types import Command

__all__ = [
    "ToolNode",
    "AsyncToolNode",
    "tools_condition",
    "InjectedState",
    "InjectedStore",
    "InjectedToolArg",
    "InjectedToolCallId",
    "ToolInvocationError",
    "ToolRuntime",
    "ToolCallRequest",
    "ToolCallWrapper",
    "AsyncToolCallWrapper",
    "default_handle_tool_errors",
    "TOOL_CALL_WITH_CONTEXT",
    "ToolCallWithContext",
]

ToolCallWrapper = Callable[[ToolCallRequest, Callable[[ToolCallRequest], Any]], Any]
"""``wrap_tool_call(request, execute) -> ToolMessage | Command``."""
AsyncToolCallWrapper = Callable[
    [ToolCallRequest, Callable[[ToolCallRequest], Awaitable[Any]]], Awaitable[Any]
]
"""``async awrap_tool_call(request, execute) -> ToolMessage | Command``."""

TOOL_CALL_WITH_CONTEXT = "tool_call_with_context"
"""``__type`` of the ``Send`` payload carrying one tool call and the state (agent v2)."""


ToolCallWithContext = TypedDict(
    "ToolCallWithContext",
    {"__type": Literal["tool_call_with_context"], "tool_call": ToolCall, "state": Any},
)
"""The ``Send`` payload a v2 agent gives the tool node: one tool call and the state."""


class ToolNode:
    """Runs every tool call of the last ``AIMessage`` and returns one ``ToolMessage`` each.

    Use it as a graph node: ``builder.add_node("tools", ToolNode([search, add]))``.
    The input is the graph state (the messages under ``messages_key``), a list of
    messages, a ``Send`` payload ``{"__type": "tool_call_with_context", "tool_call":
    ..., "state": ...}``, or a list of tool calls (``Send("tools", [tool_call])``, as
    LangChain's ``create_agent`` sends them; injected state is then the graph's). The output is ``{messages_key: [ToolMessage, ...]}`` in
    tool-call order (a plain list for list input); when a tool returns a ``Command`` the
    output is a list of ``Command`` s and ``{messages_key: [message]}`` updates, still
    in tool-call order.

    ``tools`` are plain functions (sync or async), :class:`~stategraph.prebuilt.Tool` s
    or duck-typed objects with ``name`` and ``invoke``/``ainvoke``.

    A tool parameter typed :class:`ToolRuntime` receives the call's runtime (state,
    context, config, stream writer, tool call id, store, tools), hidden from the model.

    ``wrap_tool_call(request, execute)`` (and ``awrap_tool_call`` for async runs) wraps
    each call: it gets a :class:`ToolCallRequest` and a function running it (with the
    node's error handling), and returns a ``ToolMessage`` or ``Command`` — to retry,
    rewrite arguments (``request.override(tool_call=...)``), cache, or answer without
    running the tool. In async runs without ``awrap_tool_call`` the sync wrapper runs
    in a worker thread.

    ``handle_tool_errors`` decides what happens when a tool raises:

    * default: invalid arguments (:class:`~stategraph.prebuilt.ToolInvocationError`)
      become an error ``ToolMessage`` the model can react to; other errors propagate;
    * ``True``: every exception becomes ``"Error: {exc!r}\\n Please fix your mistakes."``;
    * a ``str``: every exception becomes that text;
    * a callable ``(exc) -> str``: handles the exception types its first parameter's
      annotation names (all exceptions when unannotated), others propagate;
    * an exception type or tuple of types: those become the default error text;
    * ``False``: every exception propagates.

    A call to an unknown tool always yields an error ``ToolMessage`` listing the valid
    names. Control-flow exceptions (``interrupt()``, parent commands) always propagate.

    Sync or async: when every tool can run synchronously, ``ToolNode(...)`` is a sync
    node; several calls run in parallel worker threads (under ``ainvoke`` the graph
    runs the node itself in a worker thread). When any tool is async-only,
    ``ToolNode(...)`` returns an :class:`AsyncToolNode`, whose calls run concurrently
    on the caller's event loop (``asyncio.gather``); such a graph needs
    ``ainvoke``/``astream``.
    """

    name: str
    tools_by_name: dict[str, Any]
    handle_tool_errors: ErrorHandler
    messages_key: str

    def __new__(cls, tools: Sequence[Any] = (), *args: Any, **kwargs: Any) -> ToolNode:
        """Pick :class:`AsyncToolNode` when a tool can only run asynchronously.

        (``tools`` defaults to empty only so ``copy``/``pickle`` can recreate instances.)
        """
        if (
            cls is ToolNode
            and isinstance(tools, Sequence)
            and not isinstance(tools, (str, bytes))
            and any(_async_only(t) for t in tools)
        ):
            cls = AsyncToolNode
        return super().__new__(cls)

    def __init__(
        self,
        tools: Sequence[Any],
        *,
        name: str = "tools",
        handle_tool_errors: ErrorHandler = default_handle_tool_errors,
        messages_key: str = "messages",
        tags: Sequence[str] | None = None,
        wrap_tool_call: ToolCallWrapper | None = None,
        awrap_tool_call: AsyncToolCallWrapper | None = None,
    ) -> None:
        check_list(tools, "ToolNode", "tools", "[search, calculator]")
        self.name = name
        self.handle_tool_errors = handle_tool_errors
        self.messages_key = messages_key
        self.tags = list(tags or ())
        for label, wrapper in (
            ("wrap_tool_call", wrap_tool_call),
            ("awrap_tool_call", awrap_tool_call),
        ):
            if wrapper is not None and not callable(wrapper):
                raise TypeError(
                    f"ToolNode '{name}' got {label}={wrapper!r}; pass a function "
                    "(request, execute) -> ToolMessage | Command."
                )
        self.wrap_tool_call = wrap_tool_call
        self.awrap_tool_call = awrap_tool_call
        self._runners: dict[str, ToolRunner] = {}
        for item in tools:
            runner = as_runner(item)
            if runner.name in self._runners:
                raise ValueError(
                    f"ToolNode got two tools named '{runner.name}'; tool names must be unique."
                )
            self._runners[runner.name] = runner
        self.tools_by_name = {n: r.public for n, r in self._runners.items()}
        self._needs_store = any(
            spec.kind == "store" for r in self._runners.values() for spec in r.injections.values()
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(tools={list(self._runners)!r}, name={self.name!r})"

    @property
    def return_direct_names(self) -> set[str]:
        """Names of the tools marked ``return_direct``."""
        return {n for n, r in self._runners.items() if r.return_direct}

    def __call__(self, input: Any) -> Any:
        """Run the tool calls synchronously (this is what the graph calls)."""
        return self.invoke(input)

    @property
    def __stategraph_async_twin__(self) -> Any:
        """What an async run awaits instead of calling the node in a worker thread."""
        return self.ainvoke

    # ------------------------------------------------------------------ input
    def _parse(self, input: Any) -> Parsed:
        if is_tool_call_list(input):
            # tool calls alone (LangChain's create_agent sends [tool_call]): the tools
            # get the graph's current state injected; the answer is a state update
            graph_state = current_graph_state()
            source = last_ai(
                graph_state.get(self.messages_key) if isinstance(graph_state, Mapping) else None
            )
            return Parsed(list(input), graph_state, False, source)
        if isinstance(input, Mapping) and input.get("__type") == TOOL_CALL_WITH_CONTEXT:
            sent_state = input.get("state")
            source = last_ai(
                sent_state.get(self.messages_key)
                if isinstance(sent_state, Mapping)
                else getattr(sent_state, self.messages_key, None)
            )
            return Parsed([input["tool_call"]], sent_state, False, source)
        messages: Any
        if isinstance(input, list):
            messages = convert_to_messages(input)
            state: Any = {self.messages_key: messages}
            list_input = True
        elif isinstance(input, Mapping):
            messages = input.get(self.messages_key)
            state, list_input = input, False
        else:
            messages = getattr(input, self.messages_key, None)
            state, list_input = input, False
        if not messages:
            raise ValueError(
                f"ToolNode '{self.name}' found no messages in its input (key "
                f"'{self.messages_key}'); give it a state with a '{self.messages_key}' list or "
                "a list of messages ending with an AIMessage that has tool_calls."
            )
        for message in reversed(messages):
            if getattr(message, "type", None) == "ai":
                calls = list(getattr(message, "tool_calls", None) or [])
                return Parsed(calls, state, list_input, message)
        raise ValueError(
            f"ToolNode '{self.name}' found no AIMessage in its input messages; the tool "
            "calls to run come from the last AIMessage."
        )

    def inject_tool_args(self, tool_call: ToolCall, input: Any, store: Any) -> ToolCall:
        """A copy of ``tool_call`` whose args include the tool's injected values.

        ``input`` is the node input (state, list of messages) the values come from.
        """
        runner = self._runners.get(tool_call["name"])
        if runner is None or not runner.injections:
            return tool_call
        state = input
        if isinstance(input, list):
            state = {self.messages_key: input}
        elif isinstance(input, Mapping) and input.get("__type") == TOOL_CALL_WITH_CONTEXT:
            state = input.get("state")
        values = injected_values(
            runner.injections,
            state=state,
            call_id=tool_call.get("id"),
            store=store,
            tool_name=runner.name,
        )
        return ToolCall(
            name=tool_call["name"],
            args={**tool_call["args"], **values},
            id=tool_call.get("id"),
            type="tool_call",
        )

    def _runtime(self, call: ToolCall, parsed: Parsed) -> ToolRuntime:
        tools = list(self.tools_by_name.values())
        return current_tool_runtime(parsed.state, call.get("id"), tools)

    def _prepare_call(
        self, call: ToolCall, parsed: Parsed, store: Any
    ) -> tuple[ToolRunner | None, dict[str, Any]]:
        runner = self._runners.get(call["name"])
        if runner is None:
            return None, {}
        args = dict(call.get("args") or {})
        if runner.injections:
            args.update(
                injected_values(
                    runner.injections,
                    state=parsed.state,
                    call_id=call.get("id"),
                    store=store,
                    tool_name=runner.name,
                    runtime=lambda: self._runtime(call, parsed),
                    config=_tool_config,
                )
            )
        return runner, args

    def _request(self, call: ToolCall, parsed: Parsed) -> ToolCallRequest:
        return ToolCallRequest(
            tool_call=dict(call),
            tool=self.tools_by_name.get(call["name"]),
            state=parsed.state,
            runtime=self._runtime(call, parsed),
        )

    def _error_message(self, exc: Exception, call: ToolCall) -> ToolMessage:
        content = error_content(exc, self.handle_tool_errors)
        if content is None:
            raise exc
        return ToolMessage(
            content,
            name=call["name"],
            tool_call_id="" if call.get("id") is None else str(call.get("id")),
            status="error",
        )

    def _finish(self, runner: ToolRunner, call: ToolCall, result: Any, parsed: Parsed) -> Any:
        return result_to_output(
            result,
            call,
            runner.name,
            runner.response_format == "content_and_artifact",
            parsed.list_input,
            self.messages_key,
        )

    def _start(
        self, call: ToolCall, parsed: Parsed, store: Any
    ) -> tuple[ToolRunner, dict[str, Any]] | ToolMessage:
        """Report the call's start; its runner and arguments (for an unknown tool, the
        message that says so instead)."""
        runner, args = self._prepare_call(call, parsed, store)
        if runner is None:
            return invalid_tool_message(call, list(self._runners))
        tool_started(call, by_library=runner.takes_tool_call)
        return runner, args

    def _failed(self, runner: ToolRunner, call: ToolCall, exc: Exception) -> ToolMessage:
        """Report the call's failure; the error message (or raise, as configured)."""
        tool_failed(call, exc, by_library=runner.takes_tool_call)
        return self._error_message(exc, call)

    def _finished(self, runner: ToolRunner, call: ToolCall, result: Any, parsed: Parsed) -> Any:
        """The call's output (a message or a command), reported as finished."""
        output = self._finish(runner, call, result, parsed)
        tool_finished(call, _reported(output, parsed), by_library=runner.takes_tool_call)
        return output

    def _combine(self, outputs: list[Any], parsed: Parsed) -> Any:
        if parsed.bridge is not None:
            outputs = [parsed.bridge.to_langchain(o) for o in outputs]
        if parsed.list_input:
            return outputs
        if not any(isinstance(o, Command) for o in outputs):
            return {self.messages_key: outputs}
        return [o if isinstance(o, Command) else {self.messages_key: [o]} for o in outputs]

    # ------------------------------------------------------------------ sync
    def _run_one(self, call: ToolCall, parsed: Parsed, store: Any) -> Any:
        wrap = self.wrap_tool_call
        if wrap is None:
            return self._execute(call, parsed, store)

        def execute(request: ToolCallRequest) -> Any:
            return self._execute(checked_call(request, self.name), parsed, store)

        return checked_result(wrap(self._request(call, parsed), execute), self.name)

    def _execute(self, call: ToolCall, parsed: Parsed, store: Any) -> Any:
        started = self._start(call, parsed, store)
        if not isinstance(started, tuple):
            return started
        runner, args = started
        try:
            result = runner.call(args, call)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return self._failed(runner, call, exc)
        return self._finished(runner, call, result, parsed)

    def invoke(self, input: Any, config: Mapping[str, Any] | None = None) -> Any:
        """Run the tool calls; several calls run in parallel threads, results in call order.

        ``max_concurrency`` in ``config`` (by default the running graph's config) bounds
        the number of threads.
        """
        parsed = self._parse(input)
        store = current_store() if self._needs_store else None
        calls = parsed.calls
        if len(calls) <= 1:
            return self._combine([self._run_one(c, parsed, store) for c in calls], parsed)
        import contextvars
        from concurrent.futures import ThreadPoolExecutor

        if config is None:
            config = current_config()
        workers = len(calls)
        limit = (config or {}).get("max_concurrency")
        if isinstance(limit, int) and limit > 0:
            workers = min(workers, limit)
        outputs: list[Any] = []
        first_error: BaseException | None = None
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="stategraph-tool") as pool:
            futures = [
                pool.submit(contextvars.copy_context().run, self._run_one, c, parsed, store)
                for c in calls
            ]
            for future in futures:
                try:
                    outputs.append(future.result())
                except BaseException as exc:
                    if first_error is None:
                        first_error = exc
        if first_error is not None:
            raise first_error
        return self._combine(outputs, parsed)

    # ------------------------------------------------------------------ async
    async def _arun_one(self, call: ToolCall, parsed: Parsed, store: Any) -> Any:
        awrap = self.awrap_tool_call
        if awrap is not None:

            async def aexecute(request: ToolCallRequest) -> Any:
                return await self._aexecute(checked_call(request, self.name), parsed, store)

            result = await awrap(self._request(call, parsed), aexecute)
            return checked_result(result, self.name)
        if self.wrap_tool_call is not None:
            import asyncio
            import contextvars

            context = contextvars.copy_context()
            return await asyncio.to_thread(context.run, self._run_one, call, parsed, store)
        return await self._aexecute(call, parsed, store)

    async def _aexecute(self, call: ToolCall, parsed: Parsed, store: Any) -> Any:
        started = self._start(call, parsed, store)
        if not isinstance(started, tuple):
            return started
        runner, args = started
        try:
            result = await runner.acall(args, call)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return self._failed(runner, call, exc)
        return self._finished(runner, call, result, parsed)

    async def ainvoke(self, input: Any, config: Mapping[str, Any] | None = None) -> Any:
        """Run the tool calls concurrently on the running event loop, results in call order.

        Async tools are awaited; sync-only tools run in worker threads. ``max_concurrency``
        in ``config`` (by default the running graph's config) bounds how many run at once.
        """
        parsed = self._parse(input)
        store = current_store() if self._needs_store else None
        calls = parsed.calls
        if len(calls) == 1:
            return self._combine([await self._arun_one(calls[0], parsed, store)], parsed)
        import asyncio

        if config is None:
            config = current_config()
        limit = (config or {}).get("max_concurrency")
        gate = asyncio.Semaphore(limit) if isinstance(limit, int) and limit > 0 else None

        async def run_one(call: ToolCall) -> Any:
            if gate is None:
                return await self._arun_one(call, parsed, store)
            async with gate:
                return await self._arun_one(call, parsed, store)

        results = await asyncio.gather(*(run_one(c) for c in calls), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return self._combine(list(results), parsed)


class AsyncToolNode(ToolNode):
    """A :class:`ToolNode` the graph awaits: tool calls run concurrently on the event loop.

    ``ToolNode(...)`` returns one automatically when a tool is async-only; build one
    directly to run sync tools from an async node too. Graphs containing it must be
    run with ``ainvoke``/``astream``.
    """

    async def __call__(self, input: Any) -> Any:
        """Run the tool calls asynchronously (this is what the graph awaits)."""
        return await self.ainvoke(input)


def _reported(output: Any, parsed: Parsed) -> Any:
    """A tool's output as observers see it: in the message family the node answers with
    (LangChain's ``ToolMessage`` when the calls came from a LangChain ``AIMessage``)."""
    if parsed.bridge is None or isinstance(output, Command):
        return output
    return parsed.bridge.to_langchain(output)


def _tool_config() -> Any:
    """The run config a tool parameter typed ``RunnableConfig`` receives (the node's)."""
    return current_config() or {}


def _async_only(item: Any) -> bool:
    if isinstance(item, ToolNode):
        return False
    return is_async_only(item)


def tools_condition(
    state: list[Any] | dict[str, Any] | Any, messages_key: str = "messages"
) -> Literal["tools", "__end__"]:
    """Route to ``"tools"`` when the last message is an AI message with tool calls, else END.

    Use as ``builder.add_conditional_edges("agent", tools_condition)``; the tool node
    must be named ``"tools"`` (or pass a ``path_map``).
    """
    if isinstance(state, list):
        messages: Any = state
    elif isinstance(state, Mapping):
        messages = state.get(messages_key)
    else:
        messages = getattr(state, messages_key, None)
    if not messages:
        raise ValueError(
            f"tools_condition found no messages in its input state (key '{messages_key}'): "
            f"{state!r:.200}. Route from a node whose state has a '{messages_key}' list."
        )
    if getattr(messages[-1], "tool_calls", None):
        return "tools"
    return END
