"""Callback handlers: LangChain's callback protocol and LangGraph's graph lifecycle callbacks.

Pass handlers in ``config["callbacks"]`` (a list, one handler, or a LangChain callback
manager). During the run each handler receives, under LangChain's method names and
keyword arguments (``run_id``, ``parent_run_id``, ``tags``, ``metadata``, ``name``):

* ``on_chain_start`` / ``on_chain_end`` / ``on_chain_error`` for the graph, for each
  node (tags ``graph:step:N``), for each routing function of a conditional edge and
  for each subgraph;
* ``on_custom_event`` for :func:`dispatch_custom_event`;
* ``on_tool_start`` / ``on_tool_end`` / ``on_tool_error`` for ``ToolNode`` tool calls;
* ``on_chat_model_start`` / ``on_llm_new_token`` / ``on_llm_end`` / ``on_llm_error``
  for chat models called inside nodes.

So a LangChain handler (LangSmith's tracer, Langfuse's, your own) works unchanged, and
stategraph does not import ``langchain_core`` to call it. :class:`BaseCallbackHandler`
is a convenient base class with every method a no-op.

:class:`GraphCallbackHandler` handlers also receive the graph lifecycle events of
LangGraph 1.2: ``on_interrupt`` (:class:`GraphInterruptEvent`) when a run pauses, and
``on_resume`` (:class:`GraphResumeEvent`) when a run (or a subgraph) continues from a
checkpoint. Methods may be coroutines; asynchronous runs await them.

A handler that raises is logged once and ignored, so a broken handler never fails a
run, unless the handler sets ``raise_error = True``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Union
from uuid import UUID

from stategraph._failures import report_failure
from stategraph._sync_await import resolve

if TYPE_CHECKING:
    from typing_extensions import Self, TypeAlias

    from stategraph.types import Interrupt

__all__ = [
    "BaseCallbackHandler",
    "GraphCallbackHandler",
    "GraphCallbacks",
    "GraphInterruptEvent",
    "GraphLifecycleEvent",
    "GraphLifecycleStatus",
    "GraphResumeEvent",
    "adispatch_custom_event",
    "ahandle_event",
    "dispatch_custom_event",
    "get_async_graph_callback_manager_for_config",
    "get_sync_graph_callback_manager_for_config",
    "handle_event",
]

GraphLifecycleStatus = Literal[
    "input", "pending", "done", "interrupt_before", "interrupt_after", "out_of_steps"
]
"""Where the run stood when a lifecycle event fired (``"pending"`` while tasks wait)."""


@dataclass(frozen=True)
class GraphInterruptEvent:
    """The run paused: ``interrupt()`` calls (``interrupts``) or a static breakpoint
    (``status`` ``"interrupt_before"``/``"interrupt_after"``, no interrupts).

    Fired for the run that returns the interrupt to its caller (a pause inside a
    subgraph is reported by the outermost run); ``checkpoint_id`` is the checkpoint to
    resume from, ``checkpoint_ns`` the namespace of the graph (``()`` at the root).
    """

    run_id: UUID | None
    status: GraphLifecycleStatus
    checkpoint_id: str
    checkpoint_ns: tuple[str, ...]
    interrupts: tuple[Interrupt, ...]


@dataclass(frozen=True)
class GraphResumeEvent:
    """A run continues from a saved checkpoint (input ``None`` or a ``Command``).

    Fired by every graph that resumes, subgraphs included (their ``checkpoint_ns`` is
    not empty); ``checkpoint_id`` is the checkpoint the graph continues from.
    """

    run_id: UUID | None
    status: GraphLifecycleStatus
    checkpoint_id: str
    checkpoint_ns: tuple[str, ...]


GraphLifecycleEvent: TypeAlias = Union[GraphInterruptEvent, GraphResumeEvent]


class BaseCallbackHandler:
    """A handler of LangChain's callback protocol whose methods all do nothing.

    Override the ones you need. The ``ignore_*`` flags skip whole groups of events;
    ``raise_error = True`` lets the handler's exceptions fail the run (otherwise they
    are logged once and ignored).
    """

    raise_error: bool = False
    run_inline: bool = False
    ignore_chain: bool = False
    ignore_llm: bool = False
    ignore_chat_model: bool = False
    ignore_agent: bool = False
    ignore_retriever: bool = False
    ignore_retry: bool = False
    ignore_custom_event: bool = False

    def on_chain_start(
        self, serialized: dict[str, Any] | None, inputs: Any, *, run_id: UUID, **kwargs: Any
    ) -> Any:
        """A graph, node, routing function or subgraph starts."""

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> Any:
        """It returned ``outputs``."""

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> Any:
        """It raised ``error`` (``GraphInterrupt`` when a node paused)."""

    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[Any]],
        *,
        run_id: UUID,
        **kwargs: Any,
    ) -> Any:
        """A chat model is called with ``messages`` (one list per prompt)."""

    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: list[str],
        *,
        run_id: UUID,
        **kwargs: Any,
    ) -> Any:
        """A text model is called (also the fallback of ``on_chat_model_start``)."""

    def on_llm_new_token(self, token: str, *, run_id: UUID, **kwargs: Any) -> Any:
        """The model streamed ``token`` (the message chunk is ``kwargs["chunk"]``)."""

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> Any:
        """The model call ended with ``response`` (``generations`` of messages)."""

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> Any:
        """The model call raised ``error``."""

    def on_tool_start(
        self, serialized: dict[str, Any] | None, input_str: str, *, run_id: UUID, **kwargs: Any
    ) -> Any:
        """A tool call starts (its arguments are ``kwargs["inputs"]``)."""

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> Any:
        """The tool returned ``output``."""

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> Any:
        """The tool raised ``error``."""

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kwargs: Any) -> Any:
        """Node code dispatched a custom event (:func:`dispatch_custom_event`)."""


class GraphCallbackHandler(BaseCallbackHandler):
    """Base class for graph lifecycle callbacks (LangGraph's ``GraphCallbackHandler``).

    Pass an instance in ``config["callbacks"]``. Only handlers of this class receive
    :meth:`on_interrupt` and :meth:`on_resume`; they also receive the chain callbacks
    of :class:`BaseCallbackHandler`.
    """

    def on_interrupt(self, event: GraphInterruptEvent) -> Any:
        """The run paused (see :class:`GraphInterruptEvent`)."""

    def on_resume(self, event: GraphResumeEvent) -> Any:
        """The run (or a subgraph) continues from a checkpoint (see :class:`GraphResumeEvent`)."""


GraphCallbacks: TypeAlias = Any
"""What ``config["callbacks"]`` may hold: a handler, a list of handlers, or a manager
(any object with a ``handlers`` list, LangChain's managers included), or ``None``."""


def is_graph_handler(handler: Any) -> bool:
    """Whether ``handler`` receives graph lifecycle events (ours, or LangGraph's class)."""
    if isinstance(handler, GraphCallbackHandler):
        return True
    return any(c.__name__ == "GraphCallbackHandler" for c in type(handler).__mro__)


def is_tracer(handler: Any) -> bool:
    """Whether ``handler`` records traces (a LangChain ``BaseTracer``, e.g. LangSmith's):
    those record a node's input and output through its ``TracePolicy``."""
    return any(c.__name__ == "BaseTracer" for c in type(handler).__mro__)


def _is_handler(obj: Any) -> bool:
    return any(callable(getattr(obj, m, None)) for m in _PROTOCOL)


_PROTOCOL = (
    "on_chain_start",
    "on_chain_end",
    "on_chain_error",
    "on_chat_model_start",
    "on_llm_start",
    "on_llm_new_token",
    "on_llm_end",
    "on_llm_error",
    "on_tool_start",
    "on_tool_end",
    "on_tool_error",
    "on_custom_event",
    "on_interrupt",
    "on_resume",
)


class CallbackSetup:
    """``config["callbacks"]`` read once: the handlers, plus the parent run, tags and
    metadata a LangChain callback manager carries (a graph called inside a LangChain
    runnable nests under that runnable's run)."""

    __slots__ = ("handlers", "metadata", "parent_run_id", "tags")

    def __init__(
        self,
        handlers: list[Any],
        parent_run_id: UUID | None = None,
        tags: Sequence[str] = (),
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.handlers = handlers
        self.parent_run_id = parent_run_id
        self.tags = list(tags)
        self.metadata = dict(metadata or {})


def read_callbacks(callbacks: Any) -> CallbackSetup:
    """Normalize what ``config["callbacks"]`` holds (see :data:`GraphCallbacks`).

    Raises ``TypeError`` naming the offending value when it holds something that is
    not a handler.
    """
    if callbacks is None:
        return CallbackSetup([])
    if isinstance(callbacks, (list, tuple)):
        handlers = list(callbacks)
        bad = [h for h in handlers if not _is_handler(h)]
        if bad:
            raise TypeError(
                f'config["callbacks"] holds {bad[0]!r}, which is not a callback handler: '
                "give objects with LangChain's callback methods (on_chain_start, ...), e.g. "
                "subclasses of stategraph.callbacks.BaseCallbackHandler."
            )
        return CallbackSetup(handlers)
    inner = getattr(callbacks, "handlers", None)
    if isinstance(inner, list):
        # a callback manager (ours or LangChain's): its handlers and its place in a trace
        tags = list(getattr(callbacks, "inheritable_tags", None) or [])
        metadata = dict(getattr(callbacks, "inheritable_metadata", None) or {})
        parent = getattr(callbacks, "parent_run_id", None)
        return CallbackSetup(list(inner), parent, tags, metadata)
    if _is_handler(callbacks):
        return CallbackSetup([callbacks])
    raise TypeError(
        f'config["callbacks"] must be a handler, a list of handlers or a callback manager, '
        f"got {type(callbacks).__name__}."
    )


def _call_one(handler: Any, event_name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    method = getattr(handler, event_name, None)
    if method is None:
        return None
    try:
        result = method(*args, **kwargs)
    except NotImplementedError:
        if event_name == "on_chat_model_start":
            return _call_one(handler, "on_llm_start", (args[0], _prompts(args[1])), kwargs)
        return None
    except Exception as exc:
        if getattr(handler, "raise_error", False):
            raise
        report_failure(handler, exc, event_name)
        return None
    if result is not None and inspect.isawaitable(result):
        return _guard(handler, event_name, result)
    return None


async def _guard(handler: Any, event_name: str, awaitable: Awaitable[Any]) -> None:
    try:
        await awaitable
    except NotImplementedError:
        pass
    except Exception as exc:
        if getattr(handler, "raise_error", False):
            raise
        report_failure(handler, exc, event_name)


_ROLES = {"human": "Human", "ai": "AI", "system": "System", "tool": "Tool", "function": "Function"}


def _prompts(messages: list[list[Any]]) -> list[str]:
    """Each prompt's messages as one ``Role: content`` text (for ``on_llm_start``)."""
    out = []
    for batch in messages:
        lines = []
        for message in batch:
            kind = str(getattr(message, "type", "") or "")
            role = _ROLES.get(kind, kind.capitalize() or "Message")
            lines.append(f"{role}: {getattr(message, 'content', message)}")
        out.append("\n".join(lines))
    return out


def handle_event(
    handlers: Sequence[Any],
    event_name: str,
    ignore_condition_name: str | None,
    *args: Any,
    **kwargs: Any,
) -> Any:
    """Call ``event_name`` on every handler that has it and does not set
    ``ignore_condition_name``; a handler's error is logged once (or raised with
    ``raise_error``). Returns ``None``, or an awaitable when a handler is a coroutine
    (await it, or run it to completion, to finish the event)."""
    pending: list[Awaitable[Any]] = []
    for handler in handlers:
        if ignore_condition_name is not None and getattr(handler, ignore_condition_name, False):
            continue
        result = _call_one(handler, event_name, args, kwargs)
        if result is not None:
            pending.append(result)
    if not pending:
        return None
    return _all(pending)


async def ahandle_event(
    handlers: Sequence[Any],
    event_name: str,
    ignore_condition_name: str | None,
    *args: Any,
    **kwargs: Any,
) -> None:
    """Async twin of :func:`handle_event`: coroutine handlers are awaited."""
    result = handle_event(handlers, event_name, ignore_condition_name, *args, **kwargs)
    if result is not None:
        await result


async def _all(pending: list[Awaitable[Any]]) -> None:
    for item in pending:
        await item


def _run_to_end(result: Any) -> None:
    if result is not None:
        resolve(result)


class _GraphCallbackManager:
    """Dispatches graph lifecycle events to the :class:`GraphCallbackHandler` s among
    its handlers (others are kept, and ignored for these events)."""

    def __init__(
        self,
        handlers: Sequence[Any] = (),
        inheritable_handlers: Sequence[Any] | None = None,
        parent_run_id: UUID | None = None,
        *,
        run_id: UUID | None = None,
    ) -> None:
        self.handlers: list[Any] = list(handlers)
        self.inheritable_handlers: list[Any] = list(inheritable_handlers or ())
        self.parent_run_id = parent_run_id
        self.run_id = run_id

    @property
    def is_async(self) -> bool:
        """Whether :meth:`on_interrupt`/:meth:`on_resume` are coroutines."""
        return False

    @property
    def graph_handlers(self) -> list[Any]:
        """The handlers that receive lifecycle events."""
        return [h for h in self.handlers if is_graph_handler(h)]

    def add_handler(self, handler: Any, inherit: bool = True) -> None:
        """Add ``handler`` (any handler is accepted; only graph handlers get events)."""
        if handler not in self.handlers:
            self.handlers.append(handler)
        if inherit and handler not in self.inheritable_handlers:
            self.inheritable_handlers.append(handler)

    def remove_handler(self, handler: Any) -> None:
        """Remove ``handler``."""
        if handler in self.handlers:
            self.handlers.remove(handler)
        if handler in self.inheritable_handlers:
            self.inheritable_handlers.remove(handler)

    def set_handlers(self, handlers: Sequence[Any], inherit: bool = True) -> None:
        """Replace the handlers."""
        self.handlers = []
        self.inheritable_handlers = []
        for handler in handlers:
            self.add_handler(handler, inherit)

    def copy(self, *, run_id: UUID | object | None = ...) -> Any:
        """A copy (with another ``run_id`` if given)."""
        new = type(self)(
            self.handlers,
            self.inheritable_handlers,
            self.parent_run_id,
            run_id=self.run_id if run_id is ... else run_id,  # type: ignore[arg-type]
        )
        return new

    @classmethod
    def configure(cls, callbacks: Any = None, *, run_id: UUID | None = None) -> Any:
        """A manager over the handlers of ``callbacks`` (see :data:`GraphCallbacks`)."""
        setup = read_callbacks(callbacks)
        return cls(setup.handlers, setup.handlers, setup.parent_run_id, run_id=run_id)

    @classmethod
    def for_config(cls, config: Any, run_id: UUID | None) -> Self:
        """A manager over the graph handlers only of ``config["callbacks"]``."""
        manager = cls.configure((config or {}).get("callbacks"), run_id=run_id)
        manager.set_handlers([h for h in manager.handlers if is_graph_handler(h)])
        return manager

    def on_interrupt(self, event: GraphInterruptEvent) -> Any:
        """Send ``event`` to every graph handler."""
        _run_to_end(handle_event(self.graph_handlers, "on_interrupt", None, event))

    def on_resume(self, event: GraphResumeEvent) -> Any:
        """Send ``event`` to every graph handler."""
        _run_to_end(handle_event(self.graph_handlers, "on_resume", None, event))


class _AsyncGraphCallbackManager(_GraphCallbackManager):
    """Async twin of :class:`_GraphCallbackManager` (coroutine handlers are awaited)."""

    @property
    def is_async(self) -> bool:
        return True

    async def on_interrupt(self, event: GraphInterruptEvent) -> None:
        await ahandle_event(self.graph_handlers, "on_interrupt", None, event)

    async def on_resume(self, event: GraphResumeEvent) -> None:
        await ahandle_event(self.graph_handlers, "on_resume", None, event)


def get_sync_graph_callback_manager_for_config(
    config: Any, *, run_id: UUID | None = None
) -> _GraphCallbackManager:
    """A lifecycle manager over the graph handlers of ``config["callbacks"]``."""
    return _GraphCallbackManager.for_config(config, run_id)


def get_async_graph_callback_manager_for_config(
    config: Any, *, run_id: UUID | None = None
) -> _AsyncGraphCallbackManager:
    """Async twin of :func:`get_sync_graph_callback_manager_for_config`."""
    return _AsyncGraphCallbackManager.for_config(config, run_id)


def _report_custom_event(name: str, data: Any) -> Any:
    from stategraph._context import CURRENT_TASK

    if not isinstance(name, str) or not name:
        raise ValueError(f"dispatch_custom_event() needs a non-empty event name, got {name!r}.")
    ctx = CURRENT_TASK.get()
    if ctx is None or not isinstance(ctx.run, tuple):
        raise RuntimeError(
            "dispatch_custom_event() can only be called from inside a node (or a function "
            "a node calls) while a stategraph graph is running: the event is reported to "
            "that run's callback handlers and astream_events()."
        )
    run, task = ctx.run
    observers = run.observers
    if observers is None:
        return None
    return observers.custom_event(run, task, name, data)


def dispatch_custom_event(name: str, data: Any, *, config: Any = None) -> None:
    """Report a custom event from node code: callback handlers receive
    ``on_custom_event(name, data, ...)`` and ``astream_events`` yields an
    ``on_custom_event`` event. ``config`` is accepted for LangChain compatibility; the
    event belongs to the task that is running. Raises ``RuntimeError`` outside a run."""
    _run_to_end(_report_custom_event(name, data))


async def adispatch_custom_event(name: str, data: Any, *, config: Any = None) -> None:
    """Async twin of :func:`dispatch_custom_event` (coroutine handlers are awaited)."""
    result = _report_custom_event(name, data)
    if result is not None:
        await result
