"""The names a scenario uses, from LangGraph or from stategraph (same public paths)."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

__all__ = ["namespace"]

_NAMES = {
    "graph": ["StateGraph", "START", "END", "MessagesState", "add_messages"],
    "types": ["Send", "Command", "interrupt", "RetryPolicy", "CachePolicy"],
    "checkpoint.memory": ["InMemorySaver"],
    "store.memory": ["InMemoryStore"],
    "cache.memory": ["InMemoryCache"],
    "prebuilt": [
        "create_react_agent",
        "ToolNode",
        "tools_condition",
        "InjectedState",
        "InjectedStore",
    ],
    "prebuilt.chat_agent_executor": ["AgentState"],
    "func": ["entrypoint", "task"],
    "config": ["get_stream_writer", "get_config", "get_store"],
    "managed": ["RemainingSteps"],
}


def namespace(lib: str) -> SimpleNamespace:
    """The scenario vocabulary from ``lib`` ("langgraph" or "stategraph")."""
    if lib not in ("langgraph", "stategraph"):
        raise ValueError(f"lib must be 'langgraph' or 'stategraph', got {lib!r}")
    ns = SimpleNamespace(lib=lib)
    for module_name, names in _NAMES.items():
        module = importlib.import_module(f"{lib}.{module_name}")
        for name in names:
            setattr(ns, name, getattr(module, name))
    return ns
