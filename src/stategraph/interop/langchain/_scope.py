"""Letting LangChain chat models called in a node report to the model-call hook.

LangChain models read their run config (callbacks, tags, metadata) from a context
variable when called without one. :func:`enter_task` sets it for the task about to
run: a callback manager parented to the node's run, with its tags and metadata (so a
model's, chain's or tool's run nests under the node with LangGraph's ``langgraph_*``
keys and ``seq:step:1`` tag), and a :class:`HookBridge` among its handlers. The bridge
forwards the model's start, tokens, end and errors to the run's model-call handlers;
when one of them wants tokens it is a *streaming* handler
(:class:`StreamingHookBridge`), which is what makes a LangChain model stream under the
hood in ``invoke``, as in LangGraph.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID, uuid4

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager, CallbackManager
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tracers._streaming import _StreamingCallbackHandler

from stategraph.config import get_config
from stategraph.observe import ModelCall, ModelCallObserving, begin_model_call

# imported here, not in the functions below: those run on a task's thread, and a module
# imported there for the first time can meet another thread's import (under pytest's
# assertion rewriting, Python 3.11 fails two concurrent parses of source with
# "SystemError: AST constructor recursion depth mismatch")
from stategraph.observe._callbacks import CallbackObserver
from stategraph.observe._events import EventStreamHandler

if TYPE_CHECKING:
    from stategraph._context import TaskContext

__all__ = [
    "HookBridge",
    "StreamingHookBridge",
    "enter_call",
    "enter_task",
    "runnable_config",
]

T = TypeVar("T")


class HookBridge(BaseCallbackHandler):
    """A LangChain callback handler forwarding chat-model runs to the model-call hook.

    It does not make models stream: :class:`StreamingHookBridge` does, for runs where
    some follower wants tokens."""

    run_inline = True  # called in the model's own context, in order
    raise_error = True  # a failing stategraph handler fails the call, as documented

    def __init__(self, task: TaskContext) -> None:
        self.task = task
        self.calls: dict[UUID, ModelCall] = {}

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = kwargs.get("name") or (serialized or {}).get("name") or "ChatModel"
        call = begin_model_call(
            serialized,
            messages[0] if messages else [],
            name=name,
            tags=tags,
            metadata=metadata,
            inherit=False,
            run_id=str(run_id),
            task=self.task,
            bridged=True,
        )
        if call is not None:
            self.calls[run_id] = call

    def on_llm_new_token(
        self, token: Any, *, chunk: Any = None, run_id: UUID, **kwargs: Any
    ) -> None:
        call = self.calls.get(run_id)
        message = getattr(chunk, "message", None)
        if call is not None and message is not None:
            call.chunk(message)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        call = self.calls.pop(run_id, None)
        if call is None:
            return
        generations = getattr(response, "generations", None) or [[]]
        first = generations[0][0] if generations and generations[0] else None
        message = getattr(first, "message", None)
        if message is not None:
            call.end(message)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        call = self.calls.pop(run_id, None)
        if call is not None:
            call.error(error)


class StreamingHookBridge(HookBridge, _StreamingCallbackHandler):
    """The bridge for runs whose followers want tokens (the ``messages`` mode, events):
    being a streaming handler is what makes a LangChain model stream under ``invoke``,
    as in LangGraph."""

    def tap_output_iter(self, run_id: UUID, output: Iterator[T]) -> Iterator[T]:
        """Streams pass through untouched (tokens arrive via ``on_llm_new_token``)."""
        return output

    def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[T]) -> AsyncIterator[T]:
        """Streams pass through untouched (tokens arrive via ``on_llm_new_token``)."""
        return output


def _with_bridge(callbacks: Any, bridge: HookBridge) -> Any:
    if callbacks is None:
        return [bridge]
    if isinstance(callbacks, BaseCallbackManager):
        manager = callbacks.copy()
        manager.add_handler(bridge, inherit=True)
        return manager
    return [*callbacks, bridge]


def _wants_tokens(run: Any, handlers: list[Any]) -> bool:
    if any(isinstance(h, EventStreamHandler) for h in handlers):
        return True
    return any(
        getattr(h, "streams", False)
        for h in run.model_handlers
        if not isinstance(h, ModelCallObserving)
    )


def _node_run(ctx: TaskContext) -> tuple[Any, Any] | None:
    """The callback observer of the task's run and the chain run the task is reported
    as (the graph's run for a task that is not traced), or ``None``."""
    pair = ctx.run
    if not isinstance(pair, tuple):
        return None
    run, task = pair
    observers = run.observers
    if observers is None:
        return None
    for observer in observers.items:
        if isinstance(observer, CallbackObserver):
            span = observer.reserve_task_run(run, task) or observer.run_of(run)
            if span is not None:
                return observer, span
    return None


def _child_manager(span: Any, handlers: list[Any]) -> CallbackManager:
    """LangGraph's ``run_manager.get_child("seq:step:1")`` for the node's run ``span``:
    runs made with it nest under the node and inherit its tags and metadata."""
    return CallbackManager(
        handlers,
        handlers,
        parent_run_id=span.run_id,
        tags=[*span.inheritable_tags, "seq:step:1"],
        inheritable_tags=list(span.inheritable_tags),
        metadata=dict(span.metadata),
        inheritable_metadata=dict(span.metadata),
    )


def _untraced_manager(config: Mapping[str, Any], handlers: list[Any]) -> CallbackManager:
    """The callbacks of a node or call whose run nobody traces: LangChain runs made in
    it still have it as their parent (an id no handler sees), as under LangGraph, and
    inherit the config's tags and metadata."""
    return CallbackManager(
        handlers,
        handlers,
        parent_run_id=uuid4(),
        tags=[*(config.get("tags") or ()), "seq:step:1"],
        inheritable_tags=list(config.get("tags") or ()),
        metadata=dict(config.get("metadata") or {}),
        inheritable_metadata=dict(config.get("metadata") or {}),
    )


def enter_task(ctx: TaskContext) -> Callable[[], None]:
    """Give LangChain runnables called in this task its config and the hook bridge.

    When LangChain-style handlers observe the run, the config's callbacks are a child
    manager of the node's run, so the runs made in the node (models, chains, tools,
    custom events) nest under it and carry its tags and metadata; otherwise they are
    the task's callbacks plus the bridge. The bridge makes models stream only when
    some follower wants tokens."""
    config = dict(ctx.config)
    callbacks = config.get("callbacks")
    found = _node_run(ctx)
    if found is not None:
        handlers = list(found[0].handlers)
    elif isinstance(callbacks, BaseCallbackManager):
        handlers = list(callbacks.handlers)
    else:
        handlers = list(callbacks or ())
    pair = ctx.run
    streams = isinstance(pair, tuple) and _wants_tokens(pair[0], handlers)
    bridge = StreamingHookBridge(ctx) if streams else HookBridge(ctx)
    if found is not None:
        config["callbacks"] = _child_manager(found[1], [*handlers, bridge])
        # the config the node receives carries the same manager: a model given it
        # (``model.invoke(messages, config)``) nests and streams as one called without
        ctx.config["callbacks"] = config["callbacks"]
    elif isinstance(callbacks, BaseCallbackManager):
        config["callbacks"] = _with_bridge(callbacks, bridge)
    else:
        config["callbacks"] = _untraced_manager(config, [*handlers, bridge])
    return _publish(config)


def enter_call(ctx: TaskContext, call_id: str) -> Callable[[], None]:
    """Give LangChain runnables called inside the ``@task`` call ``call_id`` (running
    in ``ctx``, the call's context) the call's config, as LangGraph attributes them to
    the task: its metadata and checkpoint namespace, and callbacks nesting under the
    call's run when a LangChain-style handler observes it."""
    config = dict(ctx.config)
    pair = ctx.run
    if not isinstance(pair, tuple):
        return _publish(config)
    run, task = pair
    observers = run.observers.items if run.observers is not None else ()
    for observer in observers:
        if not isinstance(observer, CallbackObserver):
            continue
        span = observer.call_run(run, task, call_id)
        if span is None:
            continue
        handlers = list(observer.handlers)
        bridge = StreamingHookBridge(ctx) if _wants_tokens(run, handlers) else HookBridge(ctx)
        config["callbacks"] = _child_manager(span, [*handlers, bridge])
        config["metadata"] = dict(span.metadata)
        ctx.config["callbacks"] = config["callbacks"]
        return _publish(config)
    callbacks = config.get("callbacks")
    if isinstance(callbacks, BaseCallbackManager):
        handlers = [h for h in callbacks.handlers if not isinstance(h, HookBridge)]
    else:
        handlers = list(callbacks or ())
    bridge = StreamingHookBridge(ctx) if _wants_tokens(run, handlers) else HookBridge(ctx)
    config["callbacks"] = _untraced_manager(config, [*handlers, bridge])
    ctx.config["callbacks"] = config["callbacks"]
    return _publish(config)


def _publish(config: dict[str, Any]) -> Callable[[], None]:
    """Make ``config`` the one LangChain runnables read; returns the undo."""
    token = var_child_runnable_config.set(cast(Any, config))

    def leave() -> None:
        var_child_runnable_config.reset(token)

    return leave


def runnable_config() -> Any:
    """The config to hand a LangChain runnable called on the node's behalf (a tool run
    by ``ToolNode``): the one :func:`enter_task` set, else the running task's config,
    else ``None`` (outside a graph run)."""
    current = var_child_runnable_config.get()
    if current is not None:
        return current
    try:
        return get_config()
    except RuntimeError:
        return None
