"""The exception hierarchy of stategraph.

Control-flow exceptions derive from :class:`GraphBubbleUp`; they are never retried and
never swallowed by the runtime. Every other error names the node, key or channel
involved and says what to do about it.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stategraph.types import Command, Interrupt

__all__ = [
    "ErrorCode",
    "create_error_message",
    "GraphRecursionError",
    "InvalidUpdateError",
    "GraphBubbleUp",
    "GraphInterrupt",
    "NodeInterrupt",
    "ParentCommand",
    "EmptyInputError",
    "EmptyChannelError",
    "TaskNotFound",
    "NodeTimeoutError",
    "CheckpointNotFoundError",
]

DOCS_BASE = "https://github.com/stategraph/stategraph/blob/main/docs/errors.md"


class ErrorCode(Enum):
    """Stable codes for the errors users most often hit; each has a docs section."""

    GRAPH_RECURSION_LIMIT = "GRAPH_RECURSION_LIMIT"
    INVALID_CONCURRENT_GRAPH_UPDATE = "INVALID_CONCURRENT_GRAPH_UPDATE"
    INVALID_GRAPH_NODE_RETURN_VALUE = "INVALID_GRAPH_NODE_RETURN_VALUE"
    MULTIPLE_SUBGRAPHS = "MULTIPLE_SUBGRAPHS"
    INVALID_CHAT_HISTORY = "INVALID_CHAT_HISTORY"
    MISSING_CHECKPOINTER = "MISSING_CHECKPOINTER"
    INTERRUPT_MISMATCH = "INTERRUPT_MISMATCH"
    UNKNOWN_UPDATE_KEY = "UNKNOWN_UPDATE_KEY"

    @property
    def docs_url(self) -> str:
        """Link to the section of ``docs/errors.md`` explaining this code."""
        return f"{DOCS_BASE}#{self.value.lower()}"


def create_error_message(*, message: str, error_code: ErrorCode) -> str:
    """Append the troubleshooting link of ``error_code`` to ``message``."""
    return f"{message}\nFor troubleshooting, visit: {error_code.docs_url}"


class GraphRecursionError(RecursionError):
    """The graph ran ``recursion_limit`` super-steps without finishing.

    Raise the limit with ``config={"recursion_limit": N}`` if the graph is meant to
    run that long, or add a condition that routes to ``END``.
    """


class InvalidUpdateError(Exception):
    """A node or caller tried to write a value the channel cannot accept."""


class GraphBubbleUp(Exception):
    """Base of control-flow exceptions that travel up through nodes and graphs."""


class GraphInterrupt(GraphBubbleUp):
    """Raised to pause the graph; carries the :class:`~stategraph.types.Interrupt` s."""

    def __init__(self, interrupts: Sequence[Interrupt] = ()) -> None:
        super().__init__(tuple(interrupts))

    @property
    def interrupts(self) -> tuple[Interrupt, ...]:
        """The interrupts this exception carries (may be empty for breakpoints)."""
        return tuple(self.args[0]) if self.args else ()


class NodeInterrupt(GraphInterrupt):
    """Deprecated way to interrupt from a node; prefer :func:`stategraph.types.interrupt`."""

    def __init__(self, value: Any, id: str | None = None) -> None:
        from stategraph.types import Interrupt

        super().__init__([Interrupt(value=value, id=id or "placeholder-id")])


class ParentCommand(GraphBubbleUp):
    """Carries a ``Command(graph=Command.PARENT)`` from a subgraph to its parent."""

    args: tuple[Command]

    def __init__(self, command: Command) -> None:
        super().__init__(command)


class EmptyInputError(Exception):
    """The graph was invoked with empty input where input is required."""


class EmptyChannelError(Exception):
    """A channel was read before anything was written to it."""


class TaskNotFound(Exception):
    """A task referenced by id does not exist in the current checkpoint."""


class CheckpointNotFoundError(LookupError):
    """A ``checkpoint_id`` named in the config does not exist in the saver."""


class NodeTimeoutError(Exception):
    """A node attempt ran longer than its :class:`~stategraph.types.TimeoutPolicy`.

    It is not a ``TimeoutError`` (an ``OSError``) so the default retry policy retries it.
    """

    def __init__(
        self,
        node: str,
        elapsed: float,
        *,
        kind: str = "run",
        idle_timeout: float | None = None,
        run_timeout: float | None = None,
    ) -> None:
        self.node = node
        self.elapsed = elapsed
        self.kind = kind
        self.idle_timeout = idle_timeout
        self.run_timeout = run_timeout
        self.timeout = run_timeout if kind == "run" else idle_timeout
        super().__init__(
            f"Node '{node}' timed out after {elapsed:.3f}s ({kind} timeout "
            f"{self.timeout}s). Raise the node's TimeoutPolicy or make it faster."
        )
