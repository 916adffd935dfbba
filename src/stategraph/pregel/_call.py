"""Call adapters: decide once, at compile time, how a node function is called.

A node function may take ``(state)``, ``(state, config)``, ``(state, runtime)``, or ask
for ``config``, ``runtime``, ``writer`` or ``store`` by keyword. Inspecting the signature
on every call would dominate the cost of a small node, so :func:`make_call` inspects
it once and returns a :class:`NodeCall` with the exact argument plan.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from stategraph._context import TaskContext

__all__ = ["NodeCall", "make_call", "identity_call", "is_async_callable", "ASYNC_TWIN"]

_INJECTABLE = ("config", "runtime", "writer", "store", "previous")

ASYNC_TWIN = "__stategraph_async_twin__"
"""Attribute naming a sync node function's async twin: under ``ainvoke``/``astream``
the twin is awaited instead of running the sync function in a worker thread (how a
node calls a model's ``ainvoke`` in async runs and its ``invoke`` in sync ones). The
twin takes the same parameters."""


def is_async_callable(func: Any) -> bool:
    """True if calling ``func`` returns an awaitable (async def, partial of one, callable object)."""
    while isinstance(func, functools.partial):
        func = func.func
    if inspect.iscoroutinefunction(func):
        return True
    call = getattr(func, "__call__", None)  # noqa: B004
    return call is not None and not inspect.isfunction(func) and inspect.iscoroutinefunction(call)


def _inject(name: str, ctx: TaskContext) -> Any:
    if name == "config":
        return ctx.config
    if name == "error":
        # error handlers: the NodeError of the failure being handled, kept on the task
        return ctx.run[1].node_error
    runtime = ctx.runtime
    if name == "runtime":
        return runtime
    if name == "writer":
        return ctx.stream_writer
    if name == "store":
        return runtime.store
    return runtime.previous


def _annotation_name(param: inspect.Parameter) -> str:
    ann = param.annotation
    if ann is inspect.Parameter.empty:
        return ""
    return ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann))


class NodeCall:
    """A node function plus the precomputed plan of which extra arguments it receives."""

    __slots__ = (
        "atwin",
        "func",
        "inline",
        "is_async",
        "keywords",
        "name",
        "positional",
        "takes_input",
    )

    def __init__(
        self,
        func: Callable[..., Any],
        name: str,
        positional: tuple[str, ...],
        keywords: tuple[str, ...],
        takes_input: bool = True,
    ) -> None:
        self.func = func
        self.name = name
        self.is_async = is_async_callable(func)
        twin = getattr(func, ASYNC_TWIN, None)
        self.atwin: Callable[..., Any] | None = (
            twin if not self.is_async and twin is not None and is_async_callable(twin) else None
        )
        self.positional = positional
        self.keywords = keywords
        self.takes_input = takes_input
        self.inline = False
        """True for the library's own sync functions that return at once and never
        block (see :func:`identity_call`): the async shell calls them on the event
        loop instead of handing them to a worker thread."""

    def __call__(self, input: Any, ctx: TaskContext) -> Any:
        """Call the function with ``input`` and the injected arguments it asked for."""
        if not self.positional and not self.keywords:
            return self.func(input) if self.takes_input else self.func()
        args = [_inject(n, ctx) for n in self.positional]
        kwargs = {n: _inject(n, ctx) for n in self.keywords}
        if self.takes_input:
            return self.func(input, *args, **kwargs)
        return self.func(*args, **kwargs)

    def call_twin(self, input: Any, ctx: TaskContext) -> Any:
        """Like calling the node, but with its async twin (returns an awaitable)."""
        twin = self.atwin
        assert twin is not None
        args = [_inject(n, ctx) for n in self.positional]
        kwargs = {n: _inject(n, ctx) for n in self.keywords}
        if self.takes_input:
            return twin(input, *args, **kwargs)
        return twin(*args, **kwargs)

    def __repr__(self) -> str:
        return f"NodeCall({self.name!r})"


def _identity(value: Any) -> Any:
    return value


def identity_call(name: str) -> NodeCall:
    """The call of a node without a function of its own: its input is its output.

    Marked ``inline``: under ``ainvoke``/``astream`` it runs on the event loop (a
    graph's ``__start__`` node would otherwise cost a thread hop per run).
    """
    call = NodeCall(_identity, name, (), ())
    call.inline = True
    return call


def make_call(func: Callable[..., Any], name: str, *, error_handler: bool = False) -> NodeCall:
    """Inspect ``func`` once and build its :class:`NodeCall`.

    The first positional parameter receives the state. A second positional parameter
    receives the runtime when it is named ``runtime`` or annotated ``Runtime``, and the
    config otherwise. Keyword parameters named ``config``, ``runtime``, ``writer``,
    ``store`` or ``previous`` are injected by name. With ``error_handler=True`` a
    parameter named ``error`` or annotated ``NodeError`` receives the failure handled.
    """
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return NodeCall(func, name, (), ())
    params = list(sig.parameters.values())
    positional_kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    pos = [p for p in params if p.kind in positional_kinds]
    takes_input = bool(pos) or any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
    positional: list[str] = []
    keywords: list[str] = []
    for p in pos[1:]:
        ann = _annotation_name(p)
        if error_handler and (p.name == "error" or ann == "NodeError"):
            positional.append("error")
            continue
        if p.default is not inspect.Parameter.empty and p.name not in _INJECTABLE:
            continue
        if p.name == "runtime" or ann.startswith("Runtime"):
            positional.append("runtime")
        elif p.name in _INJECTABLE:
            positional.append(p.name)
        else:
            positional.append("config")
    for p in params:
        if p.kind is not inspect.Parameter.KEYWORD_ONLY:
            continue
        if error_handler and p.name == "error":
            keywords.append("error")
        elif p.name in _INJECTABLE:
            keywords.append(p.name)
    return NodeCall(func, name, tuple(positional), tuple(keywords), takes_input)
