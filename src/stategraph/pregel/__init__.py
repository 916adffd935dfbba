"""The Pregel runtime: compiled graphs that run in bulk-synchronous super-steps."""

from stategraph.pregel.main import Pregel
from stategraph.pregel.node import NodeBuilder, PregelNode

__all__ = ["Pregel", "NodeBuilder", "PregelNode"]
