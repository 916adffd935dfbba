"""``/runs/crons``: scheduled runs (for a thread, or stateless)."""

from __future__ import annotations

import time
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from stategraph.server._context import ApiError
from stategraph.server._crons import check_schedule, next_run
from stategraph.server._http import JsonResponse, authorize, body_of, ctx_of, int_arg, user_of
from stategraph.server._json import from_iso
from stategraph.server._ops import check_run_body
from stategraph.server._records import crons
from stategraph.server._routes._common import (
    search_records,
    selected,
    visible_record,
    visible_thread,
)
from stategraph.server._routes._table import RouteTable, collection

__all__ = ["ROUTES"]

_RUN_FIELDS = (
    "input",
    "command",
    "metadata",
    "config",
    "context",
    "webhook",
    "interrupt_before",
    "interrupt_after",
    "multitask_strategy",
    "stream_mode",
    "checkpoint_during",
    "durability",
)


def _end_time(raw: Any) -> float | None:
    if raw is None:
        return None
    try:
        return from_iso(str(raw))
    except ValueError:
        raise ApiError(422, f"end_time must be an ISO 8601 date-time, got {raw!r}.") from None


async def create(request: Request) -> Response:
    ctx = ctx_of(request)
    body = await body_of(request)
    thread_id = request.path_params.get("thread_id")
    if thread_id is not None:
        await visible_thread(request, thread_id, "read")
    check_schedule(body.get("schedule"), body.get("timezone"))
    check_run_body(body)
    assistant = await ctx.resolve_assistant(body.get("assistant_id"))
    cron_id = str(uuid.uuid4())
    payload: dict[str, Any] = {"schedule": body["schedule"]}
    for key in _RUN_FIELDS:
        if body.get(key) is not None:
            payload[key] = body[key]
    payload["assistant_id"] = assistant["assistant_id"]
    payload["config"] = {
        **(body.get("config") or {}),
        "configurable": {
            **((body.get("config") or {}).get("configurable") or {}),
            "cron_id": cron_id,
        },
    }
    user = user_of(request)
    metadata = dict(body.get("metadata") or {})
    value = {"cron_id": cron_id, "thread_id": thread_id, "metadata": metadata, "payload": payload}
    await authorize(request, "crons", "create", value)
    if webhook := body.get("webhook"):
        if ctx.webhooks is not None:
            ctx.webhooks.check(webhook)
    end = _end_time(body.get("end_time"))
    enabled = body.get("enabled", True) is not False
    record = await ctx.records.run(
        crons.insert(
            {
                "cron_id": cron_id,
                "assistant_id": assistant["assistant_id"],
                "thread_id": thread_id,
                "user_id": "" if user is None else user.identity,
                "schedule": body["schedule"],
                "timezone": body.get("timezone"),
                "payload": payload,
                "metadata": value["metadata"],
                "end_time": end,
                "next_run_date": next_run(body["schedule"], time.time(), body.get("timezone")),
                "on_run_completed": (body.get("on_run_completed") or "delete")
                if thread_id is None
                else None,
                "enabled": enabled,
            }
        )
    )
    return JsonResponse(record)


async def _visible(request: Request, action: str) -> dict[str, Any]:
    ctx = ctx_of(request)
    cron_id = request.path_params["cron_id"]
    found = await ctx.records.read(crons.get(cron_id))
    missing = f"Cron '{cron_id}' not found."
    return await visible_record(request, "crons", action, {"cron_id": cron_id}, found, missing)


async def delete(request: Request) -> Response:
    ctx = ctx_of(request)
    cron = await _visible(request, "delete")
    await ctx.records.run(crons.delete(cron["cron_id"]))
    return Response(status_code=204)


async def patch(request: Request) -> Response:
    ctx = ctx_of(request)
    cron = await _visible(request, "update")
    body = await body_of(request)
    changes: dict[str, Any] = {}
    schedule = body.get("schedule") or cron["schedule"]
    tz = body.get("timezone", cron.get("timezone"))
    if "schedule" in body or "timezone" in body:
        check_schedule(schedule, tz)
        changes.update(
            schedule=schedule, timezone=tz, next_run_date=next_run(schedule, time.time(), tz)
        )
    if "end_time" in body:
        changes["end_time"] = _end_time(body["end_time"])
    if "enabled" in body:
        changes["enabled"] = bool(body["enabled"])
        if changes["enabled"] and cron.get("next_run_date") is None:
            changes["next_run_date"] = next_run(schedule, time.time(), tz)
    if "on_run_completed" in body:
        changes["on_run_completed"] = body["on_run_completed"]
    if "metadata" in body:
        changes["metadata"] = {**cron["metadata"], **(body["metadata"] or {})}
    payload = dict(cron["payload"])
    for key in _RUN_FIELDS:
        if key in body and key != "metadata":
            payload[key] = body[key]
    if "schedule" in body:
        payload["schedule"] = schedule
    if payload != cron["payload"]:
        changes["payload"] = payload
    updated = await ctx.records.run(crons.update(cron["cron_id"], changes))
    return JsonResponse(updated)


def _search_args(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "assistant_id": body.get("assistant_id"),
        "thread_id": body.get("thread_id"),
        "enabled": body.get("enabled"),
        "metadata": body.get("metadata"),
        "sort_by": body.get("sort_by"),
        "sort_order": body.get("sort_order"),
    }


async def search(request: Request) -> Response:
    ctx = ctx_of(request)
    body = await body_of(request)
    if body.get("assistant_id"):
        body["assistant_id"] = (await ctx.resolve_assistant(body["assistant_id"]))["assistant_id"]
    limit = int_arg(body.get("limit"), "limit", 10, low=1)
    offset = int_arg(body.get("offset"), "offset", 0, high=10**9)
    args = _search_args(body)
    found, _ = await search_records(
        request, "crons", crons.search, body, args, limit=limit, offset=offset
    )
    return JsonResponse(selected(found, body))


async def count(request: Request) -> Response:
    body = await body_of(request)
    args = _search_args(body)
    _, total = await search_records(request, "crons", crons.search, body, args, limit=1)
    return JsonResponse(total)


ROUTES: RouteTable = {
    **collection("/runs/crons", create=create, search=search, count=count),
    "/runs/crons/{cron_id}": {"DELETE": delete, "PATCH": patch},
    "/threads/{thread_id}/runs/crons": {"POST": create},
}
"""The cron routes: path -> {HTTP method: endpoint}."""
