"""Sync/async twins of saver methods, written once instead of once per method.

A saver that has only one real implementation of a method offers the other flavour
as a *twin*: the same parameters, forwarded. Each function here makes twins of one
kind from the method they forward to (looked up by name on every call, so a subclass
overriding that method is what its twin runs). The twin reports the forwarded
method's signature (``inspect.signature`` follows ``__wrapped__``).

* :func:`run_inline`: the ``a``-twin of a sync method that does no I/O, run inline;
* :func:`on_worker`, :func:`on_worker_iter`: the ``a``-twin of a method of a wrapped
  sync saver (``self.core``), run on the wrapper's worker thread (``self._run``);
* :func:`off_loop`: the sync twin of the same, refused inside a running event loop
  (``self._sync(name)`` returns the core);
* :func:`on_loop`: the sync twin of an async method of an asyncio saver, run on the
  saver's event loop from another thread (``self._sync(name, make)``).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable
from typing import Any, Concatenate, ParamSpec, TypeVar

__all__ = ["run_inline", "on_worker", "on_worker_iter", "off_loop", "on_loop"]

P = ParamSpec("P")
S = TypeVar("S")
T = TypeVar("T")

_CHUNK = 64
"""Items an ``a``-twin of an iterating method fetches per trip to the worker thread."""


def _named(twin: Any, target: Callable[..., Any], name: str, doc: str) -> Any:
    twin.__name__ = name
    twin.__qualname__ = name
    twin.__doc__ = doc
    twin.__wrapped__ = target
    return twin


def run_inline(
    method: Callable[Concatenate[S, P], T],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, T]]:
    """The ``a``-twin of ``method``: ``await saver.aname(...)`` runs ``saver.name(...)``."""
    name = method.__name__

    async def twin(self: S, *args: P.args, **kwargs: P.kwargs) -> T:
        result: T = getattr(self, name)(*args, **kwargs)
        return result

    return _named(twin, method, f"a{name}", f"Async twin of :meth:`{name}` (run inline).")


def on_worker(
    method: Callable[Concatenate[Any, P], T],
) -> Callable[Concatenate[Any, P], Coroutine[Any, Any, T]]:
    """The ``a``-twin of the wrapped saver's ``method``, run on the worker thread."""
    name = method.__name__

    async def twin(self: Any, *args: P.args, **kwargs: P.kwargs) -> T:
        result: T = await self._run(functools.partial(getattr(self.core, name), *args, **kwargs))
        return result

    doc = f"``{name}`` of the wrapped saver, run on the worker thread."
    return _named(twin, method, f"a{name}", doc)


def on_worker_iter(
    method: Callable[Concatenate[Any, P], Iterable[T]],
) -> Callable[Concatenate[Any, P], AsyncIterator[T]]:
    """The ``a``-twin of the wrapped saver's iterating ``method``: an async iterator
    fetching the items on the worker thread, a chunk at a time."""
    name = method.__name__

    async def twin(self: Any, *args: P.args, **kwargs: P.kwargs) -> AsyncIterator[T]:
        items = iter(getattr(self.core, name)(*args, **kwargs))

        def take() -> list[T]:
            return list(itertools.islice(items, _CHUNK))

        while True:
            chunk = await self._run(take)
            for item in chunk:
                yield item
            if len(chunk) < _CHUNK:
                return

    doc = f"``{name}`` of the wrapped saver, read on the worker thread."
    return _named(twin, method, f"a{name}", doc)


def off_loop(method: Callable[Concatenate[Any, P], T]) -> Callable[Concatenate[Any, P], T]:
    """The sync twin of the wrapped saver's ``method``: called straight, from a thread
    with no running event loop (``self._sync(name)`` raises inside one)."""
    name = method.__name__

    def twin(self: Any, *args: P.args, **kwargs: P.kwargs) -> T:
        result: T = getattr(self._sync(name), name)(*args, **kwargs)
        return result

    doc = f"Sync :meth:`a{name}`; raises inside a running event loop."
    return _named(twin, method, name, doc)


def on_loop(
    method: Callable[Concatenate[Any, P], Coroutine[Any, Any, T]], name: str
) -> Callable[Concatenate[Any, P], T]:
    """The sync twin ``name`` of the saver's async ``a{name}`` (whose signature is
    ``method``'s): ``self._sync(name, make)`` runs the coroutine ``make()`` on the saver's
    event loop and waits for it (raising inside a running event loop)."""
    aname = f"a{name}"

    def twin(self: Any, *args: P.args, **kwargs: P.kwargs) -> T:
        result: T = self._sync(name, lambda: getattr(self, aname)(*args, **kwargs))
        return result

    doc = f"Sync :meth:`{aname}`; raises inside a running event loop."
    return _named(twin, method, name, doc)
