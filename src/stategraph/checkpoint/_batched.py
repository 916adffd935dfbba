"""Several ``put``/``put_writes`` calls made in one saver transaction (one commit).

The runtime's saver workers use it twice: the background thread of durability
``"async"`` wraps the calls it finds queued together, and under durability ``"sync"``
the shells hold back the last task's ``put_writes`` of a step and make it with the
step's checkpoint ``put`` (one commit per step instead of two).

Only a saver whose :meth:`~stategraph.checkpoint.base.BaseCheckpointSaver.batch` does
something (``SqliteSaver`` commits the block once) is worth holding a call back for:
:func:`batches` and :func:`abatches` say which savers those are. Any other saver,
third-party ones included, gets its calls one by one, as they come.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from stategraph.checkpoint.base import BaseCheckpointSaver

__all__ = ["SaverCall", "batches", "perform_batched", "abatches"]

SaverCall = tuple[str, tuple[Any, ...]]
"""A saver call: the method's name (``"put"``, ``"put_writes"``) and its arguments."""


def batches(saver: object) -> bool:
    """Whether ``saver``'s ``batch()`` saves its block in one transaction: a saver
    built on the base class that overrides the default (which does nothing)."""
    return (
        isinstance(saver, BaseCheckpointSaver)
        and type(saver).batch is not BaseCheckpointSaver.batch
    )


def perform_batched(saver: Any, calls: Sequence[SaverCall]) -> Any:
    """Make ``calls`` in order inside ``saver.batch()``; returns the last one's result.

    A call that fails stops the rest: the calls before it are still committed (as
    they would have been one by one), then its error is raised. If the commit itself
    fails, its error is raised (none of the calls is saved).
    """
    error: BaseException | None = None
    result: Any = None
    try:
        with saver.batch():
            for name, args in calls:
                try:
                    result = getattr(saver, name)(*args)
                except BaseException as exc:
                    error = exc
                    break
    except BaseException:
        if error is None:
            raise
    if error is not None:
        raise error
    return result


def abatches(saver: object) -> Callable[[Sequence[SaverCall]], Awaitable[Any]] | None:
    """How to await ``calls`` (names of the sync methods) as one transaction of
    ``saver``, or ``None`` when it has no such way.

    ``AsyncSqliteSaver`` runs them on its worker thread (``_aperform_batched``); a
    saver whose ``batch()`` commits once and whose async methods are the base class's
    twins (the sync ones run on a thread) runs them on a thread too.
    """
    own = getattr(saver, "_aperform_batched", None)
    if own is not None:
        return own
    if not batches(saver):
        return None
    cls = type(saver)
    if cls.aput is not BaseCheckpointSaver.aput:  # type: ignore[attr-defined]
        return None
    if cls.aput_writes is not BaseCheckpointSaver.aput_writes:  # type: ignore[attr-defined]
        return None

    async def run(calls: Sequence[SaverCall]) -> Any:
        import asyncio

        return await asyncio.to_thread(perform_batched, saver, calls)

    return run
