"""``langgraph._internal._runnable`` names used by libraries built on LangGraph.

:class:`RunnableCallable` pairs a sync function with its async twin. Given to
``add_node`` or ``add_conditional_edges`` it behaves as the function itself (same
signature, so ``config`` / ``runtime`` / ``writer`` / ``store`` are injected the same
way), and under ``ainvoke``/``astream`` the graph awaits the async twin instead of
running the sync function in a worker thread.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Union

from stategraph.pregel._call import ASYNC_TWIN

__all__ = ["RunnableCallable", "RunnableLike"]

RunnableLike = Union[Callable[..., Any], Callable[..., Awaitable[Any]], Any]
"""What a node may be: a function (sync or async), a runnable, a compiled graph."""

_INJECTED = ("config", "runtime", "writer", "store")


class RunnableCallable:
    """A node function with an optional async twin (``func`` may be ``None`` when only
    ``afunc`` exists). ``name`` defaults to the function's name; ``tags``, ``trace`` and
    ``recurse`` are kept for callers that read them."""

    def __new__(cls, func: Any = None, afunc: Any = None, *args: Any, **kwargs: Any) -> Any:
        if cls is RunnableCallable and func is None and afunc is not None:
            cls = _AsyncRunnableCallable
        return super().__new__(cls)

    def __init__(
        self,
        func: Callable[..., Any] | None,
        afunc: Callable[..., Awaitable[Any]] | None = None,
        *,
        name: str | None = None,
        tags: list[str] | None = None,
        trace: bool = True,
        recurse: bool = True,
        explode_args: bool = False,
        **kwargs: Any,
    ) -> None:
        if func is None and afunc is None:
            raise ValueError("RunnableCallable needs func, afunc or both.")
        self.func = func
        self.afunc = afunc
        self.tags = tags
        self.trace = trace
        self.recurse = recurse
        self.explode_args = explode_args
        self.kwargs = kwargs
        main = func if func is not None else afunc
        functools.update_wrapper(self, main)  # type: ignore[arg-type]
        self.name = name or getattr(main, "__name__", type(main).__name__)
        self.__name__ = self.name
        if func is not None and afunc is not None:
            setattr(self, ASYNC_TWIN, afunc)
        self._wants = _wanted(main)

    def __repr__(self) -> str:
        return f"RunnableCallable({self.name!r})"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the sync function (what a graph does in a sync run)."""
        assert self.func is not None
        return self.func(*args, **{**self.kwargs, **kwargs})

    def _arguments(self, config: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self._wants:
            if name == "config":
                out[name] = config if config is not None else _current_config()
            elif name == "runtime":
                out[name] = _current_runtime()
            elif name == "writer":
                out[name] = _current_runtime().stream_writer
            elif name == "store":
                out[name] = _current_runtime().store
        return out

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        """Call the function on ``input``, giving it the config / runtime it asks for."""
        if self.func is None:
            raise TypeError(f"RunnableCallable {self.name!r} is async-only; use ainvoke().")
        return self.func(input, **self.kwargs, **self._arguments(config))

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        """Await the async twin on ``input`` (or run the sync function)."""
        arguments = self._arguments(config)
        if self.afunc is not None:
            return await self.afunc(input, **self.kwargs, **arguments)
        return self.invoke(input, config)


class _AsyncRunnableCallable(RunnableCallable):
    """A :class:`RunnableCallable` with only an async function: the graph awaits it."""

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        assert self.afunc is not None
        return await self.afunc(*args, **{**self.kwargs, **kwargs})


def _wanted(func: Any) -> tuple[str, ...]:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return ()
    return tuple(name for name in _INJECTED if name in params)


def _current_config() -> Any:
    from stategraph.config import get_config

    return get_config()


def _current_runtime() -> Any:
    from stategraph.runtime import get_runtime

    return get_runtime()
