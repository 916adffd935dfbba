"""``ToolRuntime`` (what a tool receives about its run) and ``ToolCallRequest`` (what a
``ToolNode`` wrapper receives about one tool call)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

__all__ = ["ToolRuntime", "ToolCallRequest", "current_tool_runtime"]

ContextT = TypeVar("ContextT")
StateT = TypeVar("StateT")


@dataclass
class ToolRuntime(Generic[ContextT, StateT]):
    """The run a tool call belongs to, injected into a tool parameter typed ``ToolRuntime``.

    ``def lookup(query: str, runtime: ToolRuntime) -> str`` receives it (the parameter
    is hidden from the model's schema, like the ``Injected*`` markers):

    * ``state``: the graph state the tool node received;
    * ``context``: the run's ``context`` (as ``Runtime.context``);
    * ``config``: the running task's config;
    * ``stream_writer``: writes to ``stream_mode="custom"``;
    * ``tool_call_id``: the id of the tool call being run;
    * ``store``: the graph's store (or ``None``);
    * ``tools``: the tools of the tool node;
    * ``execution_info`` / ``server_info``: as on ``Runtime`` when available.
    """

    state: StateT
    context: ContextT
    config: dict[str, Any]
    stream_writer: Callable[[Any], None]
    tool_call_id: str | None
    store: Any
    tools: list[Any] = field(default_factory=list)
    execution_info: Any = None
    server_info: Any = None


def _no_writer(_chunk: Any) -> None:
    return None


def current_tool_runtime(state: Any, tool_call_id: str | None, tools: list[Any]) -> ToolRuntime:
    """A :class:`ToolRuntime` for a call made in the running task (or outside any graph)."""
    from stategraph._context import CURRENT_TASK

    ctx = CURRENT_TASK.get()
    if ctx is None:
        return ToolRuntime(
            state=state,
            context=None,
            config={},
            stream_writer=_no_writer,
            tool_call_id=tool_call_id,
            store=None,
            tools=list(tools),
        )
    runtime = ctx.runtime
    return ToolRuntime(
        state=state,
        context=runtime.context,
        config=ctx.config,
        stream_writer=ctx.stream_writer,
        tool_call_id=tool_call_id,
        store=runtime.store,
        tools=list(tools),
        execution_info=getattr(runtime, "execution_info", None),
        server_info=getattr(runtime, "server_info", None),
    )


@dataclass
class ToolCallRequest:
    """One tool call on its way to execution, as ``ToolNode(wrap_tool_call=...)`` sees it.

    ``tool_call``: the call (name, args, id); ``tool``: the tool that will run it (``None``
    for an unknown name); ``state``: the tool node's state; ``runtime``: the call's
    :class:`ToolRuntime`. A wrapper passes the request (or a changed copy made with
    :meth:`override`) to ``execute`` to run it, or returns a ``ToolMessage`` or
    ``Command`` of its own instead.
    """

    tool_call: dict[str, Any]
    tool: Any
    state: Any
    runtime: ToolRuntime | None

    def override(self, **overrides: Any) -> ToolCallRequest:
        """A copy with some of ``tool_call``, ``tool``, ``state``, ``runtime`` replaced."""
        unknown = set(overrides) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise TypeError(
                f"ToolCallRequest.override() got unknown field(s) {sorted(unknown)}; it takes "
                "tool_call, tool, state and runtime."
            )
        return dataclasses.replace(self, **overrides)
