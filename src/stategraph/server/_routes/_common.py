"""Helpers of several route modules: finding a thread the caller may see, the auth
filter of a search, selected fields, pagination headers, counting."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from stategraph.server._context import ApiError
from stategraph.server._http import JsonResponse, authorize, body_of, ctx_of, int_arg
from stategraph.server._records import threads
from stategraph.server.auth import matches_filter

__all__ = [
    "visible_thread",
    "visible_record",
    "thread_config",
    "allowed_by",
    "only_fields",
    "page_headers",
    "count_found",
    "search_page",
]


async def visible_thread(
    request: Request, thread_id: str, action: str = "read", value: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The thread, after the auth handlers allowed ``action`` on it; 404 when it does
    not exist or the caller's filter hides it."""
    return await visible_record(
        request,
        "threads",
        action,
        threads.get(thread_id),
        value if value is not None else {"thread_id": thread_id},
        f"Thread with ID {thread_id} not found",
    )


async def visible_record(
    request: Request, resource: str, action: str, get: Any, value: dict[str, Any], missing: str
) -> dict[str, Any]:
    """The record the records operation ``get`` reads, after the auth handlers allowed
    ``action`` on ``resource`` with ``value``; 404 with ``missing`` when it does not
    exist or the caller's filter hides it."""
    ctx = ctx_of(request)
    found = await ctx.records.read(get)
    filters = await authorize(request, resource, action, value)
    if found is None or not matches_filter(found["metadata"], filters):
        raise ApiError(404, missing)
    return found


def thread_config(thread_id: str, checkpoint_id: str | None = None, ns: str = "") -> dict[str, Any]:
    """The config naming a thread's checkpoint (latest without ``checkpoint_id``)."""
    conf: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def allowed_by(filters: dict[str, Any] | None) -> Callable[[dict[str, Any]], bool] | None:
    """The record test for the auth handlers' metadata ``filters`` (None: all pass)."""
    if not filters:
        return None
    return lambda record: matches_filter(record["metadata"], filters)


def only_fields(rows: list[dict[str, Any]], select: Any) -> list[dict[str, Any]]:
    """``rows`` cut to the ``select`` fields they have (whole when nothing is selected)."""
    if not select:
        return rows
    return [{k: row[k] for k in select if k in row} for row in rows]


def page_headers(total: int, offset: int, limit: int) -> dict[str, str]:
    """The pagination headers of a page at ``offset`` of ``total`` records."""
    headers = {"x-pagination-total": str(total)}
    if offset + limit < total:
        headers["x-pagination-next"] = str(offset + limit)
    return headers


async def count_found(
    request: Request, resource: str, search: Callable[[dict[str, Any], Any], Any]
) -> Response:
    """``POST /<resource>/count``: the total of the records operation
    ``search(body, allowed)`` finds among those the caller may see."""
    ctx = ctx_of(request)
    body = await body_of(request)
    filters = await authorize(request, resource, "search", body)
    _, total = await ctx.records.read(search(body, allowed_by(filters)))
    return JsonResponse(total)


async def search_page(
    request: Request, resource: str, search: Callable[[dict[str, Any], int, int, Any], Any]
) -> Response:
    """``POST /<resource>/search``: the page the records operation ``search(body, limit,
    offset, allowed)`` finds among the records the caller may see, cut to the selected
    fields, with the pagination headers."""
    ctx = ctx_of(request)
    body = await body_of(request)
    filters = await authorize(request, resource, "search", body)
    limit = int_arg(body.get("limit"), "limit", 10, low=1)
    offset = int_arg(body.get("offset"), "offset", 0, high=10**9)
    found, total = await ctx.records.read(search(body, limit, offset, allowed_by(filters)))
    return JsonResponse(
        only_fields(found, body.get("select")), headers=page_headers(total, offset, limit)
    )
