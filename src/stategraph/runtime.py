"""The :class:`Runtime` object a node can receive: context, store, writer, previous."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from stategraph._context import current_task

if TYPE_CHECKING:
    from stategraph.store.base import BaseStore
    from stategraph.types import StreamWriter

__all__ = ["Runtime", "get_runtime"]

ContextT = TypeVar("ContextT")


def _no_op_writer(_chunk: Any) -> None:
    """Stream writer used when no ``custom`` stream is being consumed."""


def _no_op_heartbeat() -> None:
    """Heartbeat used when the node has no idle timeout."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Runtime(Generic[ContextT]):
    """Run-scoped dependencies handed to nodes that declare a ``runtime`` parameter.

    ``context`` is the object passed as ``invoke(..., context=...)`` (typed by the
    graph's ``context_schema``); ``store`` the graph's long-term memory store;
    ``stream_writer`` emits ``custom`` stream chunks; ``previous`` is the value the
    functional API's entrypoint returned on the previous run of the thread;
    ``heartbeat()`` keeps a node with an idle timeout alive.
    """

    context: ContextT = field(default=None)  # type: ignore[assignment]
    store: BaseStore | None = None
    stream_writer: StreamWriter = _no_op_writer
    previous: Any = None
    heartbeat: Callable[[], None] = _no_op_heartbeat
    """Record progress for the node's ``TimeoutPolicy.idle_timeout`` (long work that
    writes nothing should call it now and then)."""

    def override(self, **overrides: Any) -> Runtime[ContextT]:
        """Return a copy with the given fields replaced; this runtime is unchanged."""
        return replace(self, **overrides)

    def merge(self, other: Runtime[ContextT]) -> Runtime[ContextT]:
        """Return a copy where every field set (non-default) on ``other`` wins."""
        return Runtime(
            context=other.context if other.context is not None else self.context,
            store=other.store or self.store,
            stream_writer=(
                other.stream_writer
                if other.stream_writer is not _no_op_writer
                else self.stream_writer
            ),
            previous=other.previous if other.previous is not None else self.previous,
        )


DEFAULT_RUNTIME: Runtime[Any] = Runtime()


def get_runtime(context_schema: type[ContextT] | None = None) -> Runtime[ContextT]:
    """The :class:`Runtime` of the running task.

    ``context_schema`` only helps type checkers; it is not validated here.
    """
    runtime: Runtime[ContextT] = current_task("get_runtime()").runtime
    return runtime
