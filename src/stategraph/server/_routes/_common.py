"""Helpers of several route modules: finding a thread the caller may see."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from stategraph.server._context import ApiError
from stategraph.server._http import authorize, ctx_of
from stategraph.server._records import threads
from stategraph.server.auth import matches_filter

__all__ = ["visible_thread", "thread_config"]


async def visible_thread(
    request: Request,
    thread_id: str,
    action: str = "read",
    value: dict[str, Any] | None = None,
    *,
    found: Any = ...,
) -> dict[str, Any]:
    """The thread, after the auth handlers allowed ``action`` on it; 404 when it does
    not exist or the caller's filter hides it. ``found``: the thread (or ``None``)
    when the caller just read it."""
    ctx = ctx_of(request)
    if found is ...:
        found = await ctx.records.read(threads.get(thread_id))
    filters = await authorize(
        request, "threads", action, value if value is not None else {"thread_id": thread_id}
    )
    if found is None or not matches_filter(found["metadata"], filters):
        raise ApiError(404, f"Thread with ID {thread_id} not found")
    return found


def thread_config(thread_id: str, checkpoint_id: str | None = None, ns: str = "") -> dict[str, Any]:
    """The config naming a thread's checkpoint (latest without ``checkpoint_id``)."""
    conf: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}
