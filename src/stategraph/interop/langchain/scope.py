"""Letting LangChain chat models called in a node report to the model-call hook.

LangChain models read their run config (callbacks, tags, metadata) from a context
variable when called without one. :func:`enter_task` sets it for the task about to
run, with the task's tags and metadata (so a model's callbacks see LangGraph's
``langgraph_*`` keys) and a :class:`HookBridge` among the callbacks. The bridge is a
*streaming* callback handler, which is what makes a LangChain model stream under the
hood in ``invoke`` — exactly as in LangGraph — and it forwards the model's start,
tokens, end and errors to the run's model-call handlers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tracers._streaming import _StreamingCallbackHandler

from stategraph.observe import ModelCall, begin_model_call

if TYPE_CHECKING:
    from stategraph._context import TaskContext

__all__ = ["HookBridge", "enter_task", "runnable_config"]

T = TypeVar("T")


class HookBridge(BaseCallbackHandler, _StreamingCallbackHandler):
    """A LangChain callback handler forwarding chat-model runs to the model-call hook."""

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


def enter_task(ctx: TaskContext) -> Callable[[], None]:
    """Give LangChain runnables called in this task its config and the hook bridge."""
    config = dict(ctx.config)
    config["callbacks"] = _with_bridge(config.get("callbacks"), HookBridge(ctx))
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
    from stategraph.config import get_config

    try:
        return get_config()
    except RuntimeError:
        return None
