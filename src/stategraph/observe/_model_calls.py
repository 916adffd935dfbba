"""The model-call hook: how chat models report their calls to the running graph.

A chat model called inside a node (directly, through ``create_react_agent``, in a
subgraph or a ``@task``) asks the running task whether anyone listens, then reports
the call's life: start, each streamed chunk, end or error. The run fans these reports
out to its list of :class:`ModelCallHandler` s. The ``messages`` stream mode is one
handler (:class:`~stategraph.observe.MessagesEmitter`, always first in
the list); events, tracing and callback bridges are others.

For model authors (``stategraph.models.ChatModel`` does this for you)::

    call = begin_model_call(self, messages, name="my-model", metadata={"ls_provider": "x"})
    if call is None:                  # nobody listens: the normal, zero-cost path
        return self._generate(messages)
    try:
        if call.streams:              # someone wants tokens: stream under the hood
            reply = None
            for chunk in self._stream(messages):
                chunk = call.chunk(chunk)  # gives the chunk the call's message id
                reply = chunk if reply is None else reply + chunk
            message = message_chunk_to_message(reply)
        else:
            message = self._generate(messages)
    except BaseException as exc:
        call.error(exc)
        raise
    return call.end(message)

For handler authors: subclass :class:`ModelCallHandler`, override the ``on_*``
methods you need, set ``streams = True`` if you need token chunks, and append an
instance to ``RunContext.model_handlers`` when the run is set up (nested runs share
the root run's list). Handlers are called on the thread (or event loop) running the
node, possibly from several tasks at once; they must be quick and thread-safe, and an
exception they raise propagates into the node.

Cost when nothing subscribes: :func:`begin_model_call` reads one context variable and
one attribute, and returns ``None``.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from stategraph._context import CURRENT_TASK
from stategraph.observe._task_scopes import TaskScope, task_scopes

if TYPE_CHECKING:
    from stategraph._context import TaskContext
    from stategraph.observe._protocol import RunRecord as RunContext
    from stategraph.observe._protocol import TaskRecord as Task

__all__ = [
    "ModelCallHandler",
    "ModelCall",
    "begin_model_call",
    "run_wants_model_calls",
    "task_scopes",
    "TaskScope",
]


class ModelCallHandler:
    """Receives the chat-model calls made inside the tasks of a run.

    Every method has a default that does nothing, so a handler overrides only what it
    needs. ``on_model_start`` decides whether the handler follows a call: when it
    returns ``False`` the handler gets nothing more about that call.
    """

    streams: ClassVar[bool] = False
    """Whether this handler needs token chunks (the model then streams under the hood)."""

    def on_model_start(self, call: ModelCall) -> bool:
        """A model call begins; return whether to follow it (default: yes)."""
        return True

    def on_model_chunk(self, call: ModelCall, chunk: Any) -> None:
        """The model produced ``chunk`` (an ``AIMessageChunk``) for ``call``."""

    def on_model_end(self, call: ModelCall, message: Any) -> None:
        """The call finished with ``message`` (the full ``AIMessage``)."""

    def on_model_error(self, call: ModelCall, error: BaseException) -> None:
        """The call failed with ``error`` (it is re-raised to the node afterwards)."""


class ModelCall:
    """One chat-model call made inside a task, as handlers see it.

    ``model`` is the model object (for bridged libraries, what their callbacks describe
    it with, e.g. LangChain's serialized dict). ``metadata`` is what the ``messages``
    stream attaches to the call's chunks: the
    task's metadata (``langgraph_node``, ``langgraph_step``, ``thread_id``...) plus the
    model's own (``ls_provider``, ``ls_model_name``...). ``namespace`` is the stream
    namespace of the graph running the task (``()`` at the root). ``message_id`` is
    the id the reply's chunks and final message carry when the model gives none.
    """

    __slots__ = (
        "_chunks",
        "_done",
        "bridged",
        "checkpoint_ns",
        "followers",
        "message_id",
        "messages",
        "metadata",
        "model",
        "name",
        "namespace",
        "run_id",
        "streams",
        "tags",
        "task_id",
        "task_name",
    )

    def __init__(
        self,
        *,
        model: Any,
        messages: Sequence[Any],
        name: str,
        tags: list[str],
        metadata: dict[str, Any],
        namespace: tuple[str, ...],
        task_name: str,
        task_id: str,
        checkpoint_ns: str,
        run_id: str,
        bridged: bool = False,
    ) -> None:
        self.model = model
        self.messages = messages
        self.name = name
        self.tags = tags
        self.metadata = metadata
        self.namespace = namespace
        self.task_name = task_name
        self.task_id = task_id
        self.checkpoint_ns = checkpoint_ns
        self.run_id = run_id
        self.message_id = f"run-{run_id}"
        # reported by a model library's bridge, whose own callbacks already reach the
        # run's LangChain-style handlers (so those do not report it again)
        self.bridged = bridged
        self.followers: list[ModelCallHandler] = []
        self.streams = False
        self._chunks = 0
        self._done = False

    @property
    def chunk_count(self) -> int:
        """How many chunks the call reported so far."""
        return self._chunks

    def chunk(self, chunk: Any) -> Any:
        """Report one streamed chunk; returns it (given the call's id if it had none)."""
        if getattr(chunk, "id", None) is None:
            chunk = _with_id(chunk, self.message_id)
        self._chunks += 1
        for handler in self.followers:
            handler.on_model_chunk(self, chunk)
        return chunk

    def end(self, message: Any) -> Any:
        """Report the final message; returns it (given the call's id if it had none)."""
        if self._done:
            return message
        self._done = True
        if getattr(message, "id", None) is None:
            message = _with_id(message, self.message_id)
        for handler in self.followers:
            handler.on_model_end(self, message)
        return message

    def error(self, error: BaseException) -> None:
        """Report that the call failed (the caller re-raises ``error``)."""
        if self._done:
            return
        self._done = True
        for handler in self.followers:
            handler.on_model_error(self, error)

    def __repr__(self) -> str:
        return f"ModelCall({self.name!r}, node={self.task_name!r}, ns={self.namespace!r})"


def _with_id(message: Any, message_id: str) -> Any:
    with_id = getattr(message, "_with_id", None)
    if callable(with_id):
        return with_id(message_id)
    model_copy = getattr(message, "model_copy", None)
    if callable(model_copy):
        return model_copy(update={"id": message_id})
    try:
        message.id = message_id
    except AttributeError:
        pass
    return message


def _running(ctx: TaskContext | None = None) -> tuple[TaskContext, RunContext, Task] | None:
    if ctx is None:
        ctx = CURRENT_TASK.get()
    if ctx is None:
        return None
    pair = ctx.run
    if not isinstance(pair, tuple):
        return None
    run, task = pair
    if not run.model_handlers:
        return None
    return ctx, run, task


def run_wants_model_calls() -> bool:
    """Whether the task running here has a run with model-call handlers (cheap)."""
    return _running() is not None


def task_metadata(ctx: TaskContext, task: Task) -> dict[str, Any]:
    """The metadata a model call inherits from its task (LangGraph's keys)."""
    metadata = dict(ctx.config.get("metadata") or {})
    if metadata.get("thread_id", "") is None:
        del metadata["thread_id"]
    metadata.setdefault("checkpoint_ns", task.ns)
    return metadata


def begin_model_call(
    model: Any,
    messages: Sequence[Any],
    *,
    name: str | None = None,
    tags: Sequence[str] | None = None,
    metadata: dict[str, Any] | None = None,
    inherit: bool = True,
    run_id: str | None = None,
    task: TaskContext | None = None,
    bridged: bool = False,
) -> ModelCall | None:
    """Announce a chat-model call to the running task's handlers.

    Returns ``None`` when no handler follows the call (outside a graph, or nobody
    subscribed): call the model normally. Otherwise returns the :class:`ModelCall` to
    report chunks, the end or an error to; ``call.streams`` tells whether a handler
    wants tokens.

    ``tags`` and ``metadata`` are the model's own; with ``inherit`` (the default) they
    are added to the task's tags and metadata. Bridges that already computed the full
    set (LangChain's callbacks) pass ``inherit=False``, and ``bridged=True`` when the
    library's own callbacks already report the call to the run's handlers.
    """
    running = _running()
    if running is None:
        return None
    ctx, run, current = running
    if inherit:
        all_tags = [*(ctx.config.get("tags") or ()), *(tags or ())]
        full = task_metadata(ctx, current)
        if metadata:
            full.update(metadata)
    else:
        all_tags = list(tags or ())
        full = dict(metadata or {})
    call = ModelCall(
        model=model,
        messages=messages,
        name=name or type(model).__name__,
        tags=all_tags,
        metadata=full,
        namespace=run.stream_ns,
        task_name=current.name,
        task_id=current.id,
        checkpoint_ns=current.ns,
        run_id=run_id or str(uuid.uuid4()),
        bridged=bridged,
    )
    for handler in run.model_handlers:
        if handler.on_model_start(call):
            call.followers.append(handler)
            if handler.streams:
                call.streams = True
    if not call.followers:
        return None
    return call
