"""Await a coroutine in a context of its own, inside the running asyncio task.

An asyncio task runs its coroutine in a copy of the context it was created in, so the
context variables a node sets stay with the node. Creating a task costs several
microseconds and a turn of the event loop; a step with one task does not need one.
:func:`await_in_context` gives such a task the same isolation in place: every step of
the coroutine runs inside ``context``, and whatever it waits for is waited for by the
running task (which also forwards cancellation, as it would for a task's coroutine).
"""

from __future__ import annotations

import contextvars
import types
from collections.abc import Coroutine, Generator
from typing import Any, TypeVar

__all__ = ["await_in_context"]

T = TypeVar("T")


@types.coroutine
def _relay(signal: Any) -> Generator[Any, Any, Any]:
    """Hand what the inner coroutine yielded (a future, or None) to the running task."""
    return (yield signal)


async def await_in_context(context: contextvars.Context, coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` with each of its steps run in ``context``; return its result.

    Exceptions thrown into the awaiting coroutine (a cancellation) are thrown into
    ``coro``; closing the awaiting coroutine closes ``coro``.
    """
    run = context.run
    send, throw = coro.send, coro.throw
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            if error is None:
                signal = run(send, value)
            else:
                try:
                    signal = run(throw, error)
                finally:
                    error = None  # no cycle through the traceback's frame
        except StopIteration as stop:
            result: T = stop.value
            return result
        try:
            value = await _relay(signal)
        except GeneratorExit:
            run(coro.close)
            raise
        except BaseException as exc:
            value, error = None, exc
