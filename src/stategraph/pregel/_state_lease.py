"""The thread lease of ``update_state`` / ``bulk_update_state``.

A state update writes checkpoints like a run does, so it follows the same rule: it
takes its thread's lease first (``multitask_strategy`` from the config, ``"reject"``
by default: a busy thread raises :class:`~stategraph.errors.ThreadBusyError` naming
it, before anything is saved), sends the fencing token with every write, and
releases the lease at the end. An update made from inside a node of the run that
holds the thread (same saver, same thread) writes under that run's lease instead.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

from stategraph.constants import CONF
from stategraph.pregel._lease_guard import (
    LeaseSettings,
    RunGuard,
    acquire_async,
    acquire_sync,
    lease_settings,
)

__all__ = ["update_lease", "aupdate_lease"]

_ACTOR = "state update"


@dataclass(frozen=True)
class _Update:
    """What the lease functions read of a run: its thread and run id."""

    thread_id: str
    run_id: str


def _plan(saver: Any, config: Mapping[str, Any]) -> tuple[_Update, LeaseSettings, int | None]:
    """The update's lease request and checked settings; the third item is the token
    of the enclosing run when it already holds this thread (``-1``: none needed)."""
    from stategraph.pregel._pregel.config import lift_config_keys

    cfg = lift_config_keys(config)
    settings = lease_settings(cfg, None)
    if settings.strategy == "rollback" and not saver.lease_rollback_supported:
        raise ValueError(
            f"multitask_strategy='rollback' needs a checkpointer that can delete the "
            f"checkpoints of a run; {type(saver).__name__} cannot (see "
            "LeaseSupport.lease_rollback). Use 'interrupt', 'enqueue' or 'reject'."
        )
    conf = cfg.get(CONF) or {}
    thread_id = str(conf["thread_id"])
    run_id = str(cfg.get("run_id") or conf.get("run_id") or uuid.uuid4())
    held = _held_token(saver, thread_id)
    return _Update(thread_id, run_id), settings, held


def _held_token(saver: Any, thread_id: str) -> int | None:
    """``-1`` outside a run holding ``thread_id`` on ``saver``; else its token (or
    ``None`` when that saver does not fence)."""
    from stategraph._context import CURRENT_TASK

    ctx = CURRENT_TASK.get()
    run = ctx.run[0] if ctx is not None and isinstance(ctx.run, tuple) else None
    guard: RunGuard | None = getattr(run, "guard", None)
    if guard is None or guard.saver is not saver or guard.lease.thread_id != thread_id:
        return -1
    return guard.token_for(saver)


@contextmanager
def update_lease(saver: Any, config: Mapping[str, Any]) -> Iterator[int | None]:
    """Hold the thread lease for a state update; yields the fencing token to send
    with its writes (``None``: the saver does not fence)."""
    update, settings, held = _plan(saver, config)
    if held != -1:
        yield held
        return
    guard = acquire_sync(saver, update, settings, _ACTOR)
    try:
        yield guard.token
    finally:
        guard.close(finished=True)


@asynccontextmanager
async def aupdate_lease(saver: Any, config: Mapping[str, Any]) -> AsyncIterator[int | None]:
    """Async twin of :func:`update_lease`."""
    update, settings, held = _plan(saver, config)
    if held != -1:
        yield held
        return
    guard = await acquire_async(saver, update, settings, _ACTOR)
    try:
        yield guard.token
    finally:
        await guard.aclose(finished=True)
