"""The exception hierarchy of stategraph.

Control-flow exceptions derive from :class:`GraphBubbleUp`; they are never retried and
never swallowed by the runtime. Every other error names the node, key or channel
involved and says what to do about it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal

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
    "InvalidIdentifierError",
    "GraphDrained",
    "RunPreempted",
    "ThreadBusyError",
    "LeaseLostError",
    "NodeError",
    "NodeCancelledError",
    "UnknownInterruptError",
    "is_invalid_resume",
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
        from stategraph.warnings import LangGraphDeprecatedSinceV10, warn_deprecated

        warn_deprecated(
            LangGraphDeprecatedSinceV10,
            "NodeInterrupt is deprecated. Please use `stategraph.types.interrupt` instead.",
        )

        super().__init__([Interrupt(value=value, id=id or "placeholder-id")])


class ParentCommand(GraphBubbleUp):
    """Carries a ``Command(graph=Command.PARENT)`` from a subgraph to its parent."""

    args: tuple[Command]

    def __init__(self, command: Command) -> None:
        super().__init__(command)


class GraphDrained(GraphBubbleUp):
    """The run stopped at a step boundary because a drain was requested.

    Raised by ``invoke``/``stream`` after ``RunControl.request_drain(reason)``: the
    steps that ran are saved, and ``invoke(None, config)`` continues the thread.
    ``reason`` is the reason given to ``request_drain``.
    """

    def __init__(self, reason: str = "shutdown") -> None:
        self.reason = reason
        super().__init__(f"Graph drained: {reason}")


class RunPreempted(GraphDrained):
    """The run stopped at a step boundary because another run on its thread took over.

    Raised by ``invoke``/``stream`` of the running run when a new run on the same
    thread was started with ``multitask_strategy="interrupt"`` (the steps that ran stay
    saved) or ``"rollback"`` (the checkpoints this run created are then deleted).
    ``thread_id`` names the thread, ``strategy`` the strategy of the run that asked.
    """

    def __init__(self, thread_id: str, strategy: str) -> None:
        self.thread_id = thread_id
        self.strategy = strategy
        super().__init__(
            f"another run on thread '{thread_id}' took over with multitask_strategy='{strategy}'"
        )


class ThreadBusyError(RuntimeError):
    """A run could not start because another run holds its thread.

    Raised before the run changes anything, with ``multitask_strategy="reject"`` (or
    when ``"enqueue"`` waited longer than ``enqueue_timeout``). ``thread_id`` names
    the thread and ``holder_run_id`` the run holding it (``None`` when the thread is
    free but other runs are queued for it).
    """

    def __init__(self, message: str, *, thread_id: str, holder_run_id: str | None) -> None:
        self.thread_id = thread_id
        self.holder_run_id = holder_run_id
        super().__init__(message)


class LeaseLostError(RuntimeError):
    """A writer tried to save to a thread whose lease it no longer holds.

    The checkpoint saver checks the run's fencing token in the same transaction as
    every ``put``/``put_writes``: once the lease expired (the process was paused or
    cut off longer than ``lease_timeout``) or another run took the thread over, the
    old writer's saves fail with this error and nothing of them is stored.
    """

    def __init__(self, thread_id: str, token: int, detail: str = "") -> None:
        self.thread_id = thread_id
        self.token = token
        super().__init__(
            f"The lease on thread '{thread_id}' (fencing token {token}) is no longer held"
            + (f": {detail}" if detail else "")
            + ". Another run may own the thread now; nothing was saved by this call. "
            "Start a new run to continue the thread (invoke(None, config) resumes it)."
        )


@dataclass(frozen=True)
class NodeError:
    """What an error handler receives about the failure it handles.

    ``node`` is the name of the node that failed (after its retries); ``error`` the
    exception it raised. On a resumed run (the handler had not finished when the run
    stopped) ``error`` is rebuilt from the saved record, so it may be the error's text
    instead of the original exception object.
    """

    node: str
    error: BaseException | str


class NodeCancelledError(Exception):
    """A node raised ``asyncio.CancelledError`` by itself (the run was not cancelled).

    The run fails with this error, naming the node, instead of treating the node as
    cancelled by the caller; the original ``CancelledError`` is its ``__cause__``.
    """

    def __init__(self, node: str, message: str | None = None) -> None:
        self.node = node
        super().__init__(
            message
            or f"Node '{node}' raised asyncio.CancelledError. Raise another exception to "
            "fail the node, or let the caller cancel the run."
        )


class UnknownInterruptError(Exception):
    """A resume value does not match the interrupts that are waiting.

    ``reason`` is ``"not_pending"`` (the resume names interrupt ids in
    ``interrupt_ids`` that are not waiting), ``"empty_map"`` (an empty map) or
    ``"ambiguous"`` (one bare value while several interrupts wait). ``pending_ids``
    lists the interrupts still waiting. Nothing was written: they can still be answered.
    """

    def __init__(
        self,
        message: str,
        *,
        reason: Literal["not_pending", "empty_map", "ambiguous"],
        interrupt_ids: Sequence[str] = (),
        pending_ids: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.interrupt_ids = tuple(interrupt_ids)
        self.pending_ids = tuple(pending_ids)


INVALID_RESUME_NOTE = (
    "The resume value does not fit the interrupt's response_schema; the interrupt is "
    "still waiting and can be answered again."
)
"""Note added to the ``ValidationError`` an ``interrupt()`` raises for an invalid answer."""


def is_invalid_resume(error: BaseException) -> bool:
    """Whether ``error`` is an ``interrupt()`` rejecting a resume value.

    ``interrupt(..., response_schema=...)`` raises a pydantic ``ValidationError`` when
    the answer does not fit the schema; the interrupt then stays open and can be
    answered again. Other ``ValidationError`` s (and any other error) return False.
    """
    return INVALID_RESUME_NOTE in (getattr(error, "__notes__", None) or ())


class EmptyInputError(Exception):
    """The graph was invoked with empty input where input is required."""


class EmptyChannelError(Exception):
    """A channel was read before anything was written to it."""


class TaskNotFound(Exception):
    """A task referenced by id does not exist in the current checkpoint."""


class CheckpointNotFoundError(LookupError):
    """A ``checkpoint_id`` named in the config does not exist in the saver."""


class InvalidIdentifierError(ValueError):
    """A thread id, checkpoint namespace or id, or store key that no saver or store
    accepts: it contains a NUL character (``"\\x00"``), which PostgreSQL cannot store,
    so every saver and store refuses it, before writing anything."""


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


def sync_timeout_error(what: str) -> ValueError:
    """The error for a timeout set on something synchronous (``what`` names it)."""
    return ValueError(
        f"{what} has a timeout, but timeouts are only supported for async nodes: a "
        "running thread cannot be stopped safely. Make it an async function, or remove "
        "the timeout."
    )
