"""Running one node by itself, outside any graph run: ``graph.nodes["x"].invoke(state)``.

This is how LangGraph documents unit-testing a node. The node's function gets what
it would get in a run: its input mapped to its schema (a dict becomes the pydantic
model or dataclass the node is typed with), a config, a :class:`Runtime` with the
``context`` and ``store`` given here, and a working ``get_config()`` /
``get_stream_writer()``. ``interrupt()`` raises :class:`GraphInterrupt` unless
``resume`` answers it. Nothing is saved and no edge is followed: the return value
is the node function's own (a dict, a ``Command``...).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stategraph._context import CURRENT_TASK, TaskContext
from stategraph.constants import CONF
from stategraph.runtime import Runtime

if TYPE_CHECKING:
    from stategraph.pregel.node import PregelNode

__all__ = ["prepare_alone", "AloneCall", "call_sync", "call_async", "NO_RESUME"]

NO_RESUME: Any = object()
"""Default of ``resume=``: no answer given (``None`` is a valid answer)."""


class AloneCall:
    """Everything needed to call one node alone; ``custom`` collects stream writes."""

    __slots__ = ("ctx", "custom", "node", "value")

    def __init__(self, node: PregelNode, value: Any, ctx: TaskContext) -> None:
        self.node = node
        self.value = value
        self.ctx = ctx
        self.custom: list[Any] = []


def _config(node: PregelNode, config: Mapping[str, Any] | None) -> dict[str, Any]:
    cfg: dict[str, Any] = dict(config or {})
    conf = dict(cfg.get(CONF) or {})
    conf.setdefault("checkpoint_ns", "")
    cfg[CONF] = conf
    cfg.setdefault("metadata", {})
    cfg["metadata"] = {**cfg["metadata"], "langgraph_node": node.name, "langgraph_step": 0}
    cfg.setdefault("tags", list(node.tags))
    cfg.setdefault("recursion_limit", 25)
    return cfg


def prepare_alone(
    node: PregelNode,
    input: Any,
    config: Mapping[str, Any] | None,
    *,
    context: Any,
    store: Any,
    resume: Any,
    resumes: Sequence[Any] | None,
) -> AloneCall:
    """Build the task context for a standalone call of ``node`` on ``input``."""
    from stategraph.pregel._task import _MISSING, Scratchpad

    answers: list[Any] = list(resumes or [])
    if resume is not NO_RESUME:
        if resumes is not None:
            raise ValueError("Give either resume= (one answer) or resumes= (a list), not both.")
        answers = [resume]
    value = input
    if node.mapper is not None and isinstance(input, Mapping):
        value = node.mapper(dict(input))
    cfg = _config(node, config)
    holder: list[AloneCall] = []

    def write(chunk: Any) -> None:
        holder[0].custom.append(chunk)

    runtime: Runtime[Any] = Runtime(context=context, store=store, stream_writer=write)
    scratchpad = Scratchpad(
        step=0,
        stop=cfg["recursion_limit"],
        resume=answers,
        asked=[],
        pending_value=_MISSING,
        resume_state=None,
        strict=False,
        node=node.name,
    )
    ctx = TaskContext(
        make_config=lambda: cfg,
        runtime=runtime,
        scratchpad=scratchpad,
        send=lambda writes: None,
        checkpoint_ns=f"{node.name}:alone",
        task_name=node.name,
        task_id="alone",
        stream_writer=write,
        config=cfg,
    )
    call = AloneCall(node, value, ctx)
    holder.append(call)
    return call


def call_sync(call: AloneCall) -> Any:
    """Run the node's function on the calling thread."""
    proc = call.node.proc
    if getattr(proc, "is_async", False):
        raise TypeError(
            f"Node '{call.node.name}' is an async function: call "
            f"`await graph.nodes['{call.node.name}'].ainvoke(...)` instead of invoke()."
        )
    token = CURRENT_TASK.set(call.ctx)
    try:
        return _run(proc, call)
    finally:
        CURRENT_TASK.reset(token)


async def call_async(call: AloneCall) -> Any:
    """Run the node's function; awaits async functions and subgraphs."""
    proc = call.node.proc
    token = CURRENT_TASK.set(call.ctx)
    try:
        if hasattr(proc, "ainvoke") and not hasattr(proc, "is_async"):
            return await proc.ainvoke(call.value, call.ctx.config)
        result = _run(proc, call)
        if getattr(proc, "is_async", False):
            result = await result
        return result
    finally:
        CURRENT_TASK.reset(token)


def _run(proc: Any, call: AloneCall) -> Any:
    invoke: Callable[..., Any] | None = getattr(proc, "invoke", None)
    if invoke is not None and not hasattr(proc, "is_async"):
        # a subgraph node: the whole subgraph runs on the input
        return invoke(call.value, call.ctx.config)
    return proc(call.value, call.ctx)
