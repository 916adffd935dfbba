"""LangGraph's import path of ``RemoteGraph`` (``langgraph.pregel.remote``).

The client lives in its own room, :mod:`stategraph.remote`. This path is that room's
``_graph`` module under LangGraph's name (one module object, two names), so whatever
LangGraph users do with this module reaches the code that runs: importing
``RemoteGraph``, ``RemoteError`` and ``StreamPart``, or patching a helper such as
``_merge_tracing_headers`` in a test.
"""

import sys

from stategraph.remote import _graph
from stategraph.remote._graph import RemoteError, RemoteGraph, StreamPart

__all__ = ["RemoteGraph", "RemoteError", "StreamPart"]

sys.modules[__name__] = _graph
