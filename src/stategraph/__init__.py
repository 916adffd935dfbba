"""stategraph: LangGraph's programming model, written from scratch, lighter and faster.

The most used names are re-exported here lazily, so ``import stategraph`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "StateGraph",
    "START",
    "END",
    "Send",
    "Command",
    "interrupt",
    "MessagesState",
    "add_messages",
]

_LAZY = {
    "StateGraph": "stategraph.graph.state",
    "START": "stategraph.constants",
    "END": "stategraph.constants",
    "Send": "stategraph.types",
    "Command": "stategraph.types",
    "interrupt": "stategraph.types",
    "MessagesState": "stategraph.graph.message",
    "add_messages": "stategraph.graph.message",
}

if TYPE_CHECKING:
    from stategraph.constants import END, START
    from stategraph.graph.message import MessagesState, add_messages
    from stategraph.graph.state import StateGraph
    from stategraph.types import Command, Send, interrupt


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'stategraph' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
