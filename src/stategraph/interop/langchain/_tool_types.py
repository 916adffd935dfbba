"""stategraph's tool vocabulary seen as langchain-core's, once langchain-core is in use.

langchain-core decides two things by class:

* a tool invoked with a tool call wraps its return value in a ``ToolMessage`` unless
  the value is a ``ToolOutputMixin`` — so a ``Command`` a LangChain ``@tool`` returns
  (the usual state-update / handoff tool) must be one, or its update is lost and the
  message content becomes the command's repr;
* a tool parameter is hidden from the model and filled by the caller when its
  annotation carries an ``InjectedToolArg`` — so ``Annotated[dict, InjectedState]`` in a
  LangChain ``@tool`` must be one, or the model is asked for the state.

stategraph does not depend on langchain-core, so its classes cannot name langchain's
at definition time. :func:`adopt_langchain_tool_types` adds langchain's classes as
extra bases of stategraph's when the bridge loads (``Command`` becomes a
``ToolOutputMixin``; ``InjectedToolArg`` and its subclasses become langchain's
``InjectedToolArg``, ``InjectedToolCallId`` langchain's ``InjectedToolCallId``). The
classes keep their identity, fields and behaviour; only ``isinstance`` /
``issubclass`` against langchain's classes change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["adopt_langchain_tool_types", "as_langchain_tool"]


def _add_base(cls: type, base: type) -> None:
    if issubclass(cls, base):
        return
    bases = tuple(b for b in cls.__bases__ if b is not object)
    cls.__bases__ = (*bases, base)


def adopt_langchain_tool_types() -> None:
    """Make stategraph's ``Command`` and injection markers langchain-core's too (idempotent)."""
    from langchain_core.messages.tool import ToolOutputMixin
    from langchain_core.tools import InjectedToolArg as LangChainInjectedToolArg
    from langchain_core.tools import InjectedToolCallId as LangChainInjectedToolCallId

    from stategraph.prebuilt import _injection
    from stategraph.types import Command

    _add_base(Command, ToolOutputMixin)
    _add_base(_injection.InjectedToolArg, LangChainInjectedToolArg)
    _add_base(_injection.InjectedToolCallId, LangChainInjectedToolCallId)


def as_langchain_tool(func: Callable[..., Any]) -> Any:
    """A plain function given to ``ToolNode`` as a LangChain tool, as LangGraph shows it
    in ``tools_by_name`` (so a model can be bound to the node's tools, as LangChain's
    ``create_agent`` does).

    ``None`` when LangChain cannot make one (e.g. the function has no docstring).
    """
    from langchain_core.tools import StructuredTool

    try:
        return (
            StructuredTool.from_function(func)
            if not _is_coroutine(func)
            else (StructuredTool.from_function(coroutine=func))
        )
    except (ValueError, TypeError):
        return None


def _is_coroutine(func: Any) -> bool:
    import inspect

    return inspect.iscoroutinefunction(func)
