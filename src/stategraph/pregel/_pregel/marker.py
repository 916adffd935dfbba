"""The marker base class of every compiled graph.

Modules below :class:`~stategraph.pregel.Pregel` (nodes, drawing) ask "is this object a
graph?" with ``isinstance(obj, GraphMarker)``, so they need not import ``Pregel`` (which
imports them).
"""

from __future__ import annotations

__all__ = ["GraphMarker"]


class GraphMarker:
    """Base class of :class:`~stategraph.pregel.Pregel`: marks an object as a compiled graph."""

    __slots__ = ()
