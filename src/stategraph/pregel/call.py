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

__all__ = ["NodeCall", "make_call", "is_async_callable"]

_INJECTABLE = ("config", "runtime", "writer", "store", "previous")


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

    __slots__ = ("func", "is_async", "keywords", "name", "positional", "takes_input")

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
        self.positional = positional
        self.keywords = keywords
        self.takes_input = takes_input

    def __call__(self, input: Any, ctx: TaskContext) -> Any:
        """Call the function with ``input`` and the injected arguments it asked for."""
        if not self.positional and not self.keywords:
            return self.func(input) if self.takes_input else self.func()
        args = [_inject(n, ctx) for n in self.positional]
        kwargs = {n: _inject(n, ctx) for n in self.keywords}
        if self.takes_input:
            return self.func(input, *args, **kwargs)
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"NodeCall({self.name!r})"


def make_call(func: Callable[..., Any], name: str) -> NodeCall:
    """Inspect ``func`` once and build its :class:`NodeCall`.

    The first positional parameter receives the state. A second positional parameter
    receives the runtime when it is named ``runtime`` or annotated ``Runtime``, and the
    config otherwise. Keyword parameters named ``config``, ``runtime``, ``writer``,
    ``store`` or ``previous`` are injected by name.
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
        if p.default is not inspect.Parameter.empty and p.name not in _INJECTABLE:
            continue
        ann = _annotation_name(p)
        if p.name == "runtime" or ann.startswith("Runtime"):
            positional.append("runtime")
        elif p.name in _INJECTABLE:
            positional.append(p.name)
        else:
            positional.append("config")
    for p in params:
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name in _INJECTABLE:
            keywords.append(p.name)
    return NodeCall(func, name, tuple(positional), tuple(keywords), takes_input)
