"""The ``StateGraph`` builder and its companions (messages state, START/END)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["StateGraph", "START", "END", "MessagesState", "add_messages", "CompiledStateGraph"]

if TYPE_CHECKING:
    from stategraph.constants import END, START
    from stategraph.graph.message import MessagesState, add_messages
    from stategraph.graph.state import CompiledStateGraph, StateGraph

from stategraph.constants import END, START


def __getattr__(name: str) -> Any:
    if name in ("StateGraph", "CompiledStateGraph"):
        from stategraph.graph import state

        return getattr(state, name)
    if name in ("MessagesState", "add_messages"):
        from stategraph.graph import message

        return getattr(message, name)
    raise AttributeError(f"module 'stategraph.graph' has no attribute {name!r}")
