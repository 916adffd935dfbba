"""Type variables of the public generic classes (as ``langgraph.typing``).

Defaults (PEP 696) let a type checker infer ``StateGraph(State)`` without an
annotation: the context defaults to ``None`` and the input and output schemas to
the state schema.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import TypeVar

__all__ = [
    "StateT",
    "StateT_co",
    "StateT_contra",
    "ContextT",
    "ContextT_contra",
    "InputT",
    "OutputT",
    "NodeInputT",
    "NodeInputT_contra",
]

StateT = TypeVar("StateT", default=Any)
"""The state schema of a graph."""

StateT_co = TypeVar("StateT_co", covariant=True)
"""Covariant state type (for protocols that only return states)."""

StateT_contra = TypeVar("StateT_contra", contravariant=True)
"""Contravariant state type (for callables that receive states)."""

ContextT = TypeVar("ContextT", default=None)
"""The run-scoped context schema (``invoke(..., context=...)``); ``None`` when unused."""

ContextT_contra = TypeVar("ContextT_contra", contravariant=True, default=None)
"""Contravariant context type."""

InputT = TypeVar("InputT", default=StateT)
"""The input schema of a graph; the state schema unless given."""

OutputT = TypeVar("OutputT", default=StateT)
"""The output schema of a graph; the state schema unless given."""

NodeInputT = TypeVar("NodeInputT")
"""What one node receives."""

NodeInputT_contra = TypeVar("NodeInputT_contra", contravariant=True)
"""Contravariant node input type."""
