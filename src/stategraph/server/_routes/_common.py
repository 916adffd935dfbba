"""Helpers of several route modules: finding a record (a thread) the caller may see,
searching records the caller may see, and shaping a page of them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from stategraph.server._context import ApiError
from stategraph.server._http import JsonResponse, authorize, ctx_of
from stategraph.server._records import threads
from stategraph.server.auth import matches_filter

__all__ = [
    "record_json",
    "visible_record",
    "visible_thread",
    "thread_config",
    "search_records",
    "selected",
    "page_headers",
]


def record_json(record: dict[str, Any] | None, missing: str) -> Response:
    """``record`` (the one a change returned) as the JSON response; 404 ``missing``
    when it was ``None`` (the record is gone)."""
    if record is None:
        raise ApiError(404, missing)
    return JsonResponse(record)


async def visible_record(
    request: Request,
    resource: str,
    action: str,
    value: dict[str, Any],
    found: dict[str, Any] | None,
    missing: str,
) -> dict[str, Any]:
    """``found`` (the record just read, or ``None``), after the auth handlers allowed
    ``action`` on ``value`` of ``resource``; 404 ``missing`` when it does not exist or
    the caller's filter hides it."""
    filters = await authorize(request, resource, action, value)
    if found is None or not matches_filter(found["metadata"], filters):
        raise ApiError(404, missing)
    return found


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
    if value is None:
        value = {"thread_id": thread_id}
    return await visible_record(
        request, "threads", action, value, found, f"Thread with ID {thread_id} not found"
    )


async def search_records(
    request: Request,
    resource: str,
    search: Callable[..., Any],
    body: dict[str, Any],
    args: Mapping[str, Any],
    **page: int,
) -> tuple[list[dict[str, Any]], int]:
    """The page (``limit``, ``offset``) of the ``resource`` records that ``search``
    finds for ``args`` and the auth handlers let the caller see, and their count."""
    filters = await authorize(request, resource, "search", body)
    allowed = (lambda r: matches_filter(r["metadata"], filters)) if filters else None
    found: tuple[list[dict[str, Any]], int] = await ctx_of(request).records.read(
        search(**args, **page, allowed=allowed)
    )
    return found


def selected(found: list[dict[str, Any]], body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``found``, each record cut to the fields the body's ``select`` names (if any)."""
    select = body.get("select")
    if not select:
        return found
    return [{k: r[k] for k in select if k in r} for r in found]


def page_headers(total: int, offset: int, limit: int) -> dict[str, str]:
    """The pagination headers of a page: the total, and where the next page starts."""
    headers = {"x-pagination-total": str(total)}
    if offset + limit < total:
        headers["x-pagination-next"] = str(offset + limit)
    return headers


def thread_config(thread_id: str, checkpoint_id: str | None = None, ns: str = "") -> dict[str, Any]:
    """The config naming a thread's checkpoint (latest without ``checkpoint_id``)."""
    conf: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}
