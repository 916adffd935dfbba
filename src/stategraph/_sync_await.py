"""Finish an awaitable report from synchronous code (coroutine callback handlers) or
asynchronous code."""

from __future__ import annotations

import threading
from collections.abc import Awaitable
from typing import Any

__all__ = ["aresolve", "resolve"]


def resolve(result: Any) -> None:
    """Finish a report in synchronous code: run the awaitable it returned, if any.

    Without a running event loop in this thread the awaitable runs on a fresh one;
    inside a running loop (a synchronous graph called from async code) it runs on a
    fresh loop in a helper thread, so the caller's loop is never re-entered.
    """
    if result is None:
        return
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(_as_coro(result))
        return
    error: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(_as_coro(result))
        except BaseException as exc:  # re-raised in the calling thread
            error.append(exc)

    worker = threading.Thread(target=run, name="stategraph-callbacks")
    worker.start()
    worker.join()
    if error:
        raise error[0]


async def aresolve(result: Any) -> None:
    """Finish a report in asynchronous code: await the awaitable it returned, if any."""
    if result is not None:
        await result


async def _as_coro(awaitable: Awaitable[Any]) -> Any:
    return await awaitable
