"""The builder room: ``StateGraph`` and its companions (messages state, START/END).

``StateGraph`` declares a graph's state schema, nodes and edges; ``compile()`` checks
them and turns them into a ``CompiledStateGraph``, a :class:`~stategraph.pregel.Pregel`
with channels and nodes that the runtime (:mod:`stategraph.pregel`) runs. The builder
sits above the runtime and below ``prebuilt``/``func``.
"""

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
