"""``/runs`` and ``/threads/{id}/runs``: create (background, stream, wait), follow,
join, list, cancel, delete."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from stategraph.server._context import ApiError, ServerContext
from stategraph.server._http import (
    JsonResponse,
    authorize,
    body_of,
    ctx_of,
    flag,
    int_arg,
    user_of,
)
from stategraph.server._json import sse
from stategraph.server._ops import FINAL, cancel_run, create_run, wait_for_run
from stategraph.server._records import runs, threads
from stategraph.server._routes._common import visible_thread
from stategraph.server._routes._table import RouteTable
from stategraph.server.auth import matches_filter

__all__ = ["ROUTES"]

_SSE_HEADERS = {"cache-control": "no-store", "x-accel-buffering": "no"}


async def _new_run(
    request: Request, stateless: bool, follow: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    ctx = ctx_of(request)
    body = await body_of(request)
    thread_id = None if stateless else request.path_params["thread_id"]
    value = {**body, "thread_id": thread_id}
    if thread_id is not None:
        found = await ctx.records.read(threads.get(thread_id))
        if found is not None or body.get("if_not_exists") != "create":
            try:
                await visible_thread(request, thread_id, "create_run", value, found=found)
            except ApiError as exc:
                if exc.status == 404:
                    raise ApiError(404, "Thread or assistant not found.") from None
                raise
        else:
            await authorize(request, "threads", "create", {"thread_id": thread_id, "metadata": {}})
    else:
        await authorize(request, "threads", "create_run", value)
    # what the auth handlers changed (e.g. metadata stamped with the owner) is the run
    body = {k: v for k, v in value.items() if k != "thread_id"}
    run = await create_run(ctx, thread_id, body, user=user_of(request), follow=follow)
    return run, body


def _locations(run: dict[str, Any], tail: str) -> dict[str, str]:
    base = f"/threads/{run['thread_id']}/runs/{run['run_id']}"
    return {"location": base + tail, "content-location": base}


async def _events(
    ctx: ServerContext,
    run_id: str,
    *,
    after: int = -1,
    with_ids: bool = False,
    cancel_on_disconnect: bool = False,
    modes: list[str] | None = None,
    fresh: bool = False,
) -> AsyncIterator[bytes]:
    finished = False
    try:
        async for seq, event, data in ctx.streams.follow(run_id, after, fresh=fresh):
            if modes and not _wanted(event, modes):
                continue
            yield sse(event, data, str(seq) if with_ids else None)
        finished = True
    finally:
        if not finished and cancel_on_disconnect:
            _background(_cancel_quietly(ctx, run_id))


def _wanted(event: str, modes: list[str]) -> bool:
    if event in ("metadata", "error"):
        return True
    base = event.split("|", 1)[0]
    if base.startswith("messages"):
        return "messages" in modes or "messages-tuple" in modes
    return base in modes


_TASKS: set[asyncio.Future[None]] = set()


def _background(coro: Any) -> None:
    task = asyncio.ensure_future(coro)
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)


async def _cancel_quietly(ctx: ServerContext, run_id: str) -> None:
    with contextlib.suppress(Exception):
        run = await ctx.records.read(runs.get(run_id))
        if run is not None and run["status"] not in FINAL:
            await cancel_run(ctx, run, "interrupt")


async def create_background(request: Request) -> Response:
    run, _ = await _new_run(request, "thread_id" not in request.path_params)
    return JsonResponse(run, headers={"content-location": _locations(run, "")["content-location"]})


async def create_batch(request: Request) -> Response:
    """``POST /runs/batch``: several stateless background runs from a list of bodies."""
    import json

    ctx = ctx_of(request)
    try:
        bodies = json.loads(await request.body() or b"[]")
    except json.JSONDecodeError as exc:
        raise ApiError(422, f"The request body is not JSON: {exc}") from exc
    if not isinstance(bodies, list) or not all(isinstance(b, dict) for b in bodies):
        raise ApiError(422, "POST /runs/batch takes a JSON list of run objects.")
    made = []
    for body in bodies:
        await authorize(request, "threads", "create_run", {**body, "thread_id": None})
        made.append(await create_run(ctx, None, body, user=user_of(request)))
    return JsonResponse(made)


async def create_stream(request: Request) -> Response:
    ctx = ctx_of(request)
    run, body = await _new_run(request, "thread_id" not in request.path_params, follow=True)
    stateless = "thread_id" not in request.path_params
    on_disconnect = body.get("on_disconnect") or ("cancel" if stateless else "continue")
    return StreamingResponse(
        _events(
            ctx,
            run["run_id"],
            with_ids=bool(body.get("stream_resumable")),
            cancel_on_disconnect=on_disconnect == "cancel",
            fresh=True,
        ),
        media_type="text/event-stream",
        headers={**_SSE_HEADERS, **_locations(run, "/stream")},
    )


async def _result(ctx: ServerContext, run_id: str) -> Response:
    status, result = await ctx.records.read(runs.result(run_id))
    if status is None:
        raise ApiError(404, f"Run {run_id} not found.")
    return JsonResponse(result if result is not None else "null", raw=True)


async def create_wait(request: Request) -> Response:
    ctx = ctx_of(request)
    run, body = await _new_run(request, "thread_id" not in request.path_params, follow=True)
    waiter = asyncio.ensure_future(wait_for_run(ctx, run["run_id"], fresh=True))
    on_disconnect = body.get("on_disconnect") or "continue"
    try:
        await waiter
    except asyncio.CancelledError:
        if on_disconnect == "cancel":
            _background(_cancel_quietly(ctx, run["run_id"]))
        raise
    response = await _result(ctx, run["run_id"])
    response.headers.update(_locations(run, "/join"))
    return response


async def _run_of(request: Request, action: str = "read") -> dict[str, Any]:
    """The run of the path, after checking the caller may see its thread. A stateless
    run's temporary thread is gone once it ended; its run stays readable."""
    ctx = ctx_of(request)
    thread_id = request.path_params["thread_id"]
    run = await ctx.records.read(runs.get(request.path_params["run_id"], thread_id))
    if run is not None and run["kwargs"].get("temporary"):
        filters = await authorize(request, "threads", action, {"thread_id": thread_id})
        if not matches_filter(run["metadata"], filters):
            raise ApiError(404, "Not Found")
        return run
    await visible_thread(request, thread_id, action)
    if run is None:
        raise ApiError(404, "Not Found")
    return run


async def get(request: Request) -> Response:
    return JsonResponse(await _run_of(request))


async def list_runs(request: Request) -> Response:
    ctx = ctx_of(request)
    thread_id = request.path_params["thread_id"]
    await visible_thread(request, thread_id)
    q = request.query_params
    status = q.get("status")
    found = await ctx.records.read(
        runs.list_runs(
            thread_id,
            limit=int_arg(q.get("limit"), "limit", 10, low=1),
            offset=int_arg(q.get("offset"), "offset", 0, high=10**9),
            status=status,
        )
    )
    select = q.getlist("select")
    if select:
        found = [{k: r[k] for k in select if k in r} for r in found]
    return JsonResponse(found)


async def delete(request: Request) -> Response:
    ctx = ctx_of(request)
    run = await _run_of(request, "update")
    if run["status"] not in FINAL:
        raise ApiError(
            409, f"Run {run['run_id']} is {run['status']}: cancel it before deleting it."
        )
    await ctx.records.run(runs.delete(run["run_id"]))
    ctx.streams.forget(run["run_id"])
    return Response(status_code=204)


async def cancel(request: Request) -> Response:
    ctx = ctx_of(request)
    run = await _run_of(request, "update")
    action = request.query_params.get("action", "interrupt")
    await cancel_run(ctx, run, action)
    if flag(request, "wait"):
        await wait_for_run(ctx, run["run_id"])
        status, result = await ctx.records.read(runs.result(run["run_id"]))
        if status is None:  # rolled back: the run is gone
            return Response(status_code=204)
        return JsonResponse(result if result is not None else "null", raw=True)
    return Response(status_code=202)


async def cancel_many(request: Request) -> Response:
    ctx = ctx_of(request)
    body = await body_of(request)
    action = request.query_params.get("action", "interrupt")
    thread_id = body.get("thread_id")
    run_ids = list(body.get("run_ids") or [])
    status = body.get("status")
    if thread_id:
        await visible_thread(request, thread_id, "update")
        if not run_ids:
            run_ids = list(await ctx.queue.pending(thread_id))
    elif not run_ids and not status:
        raise ApiError(422, "Give thread_id, run_ids or status.")
    for run_id in run_ids:
        run = await ctx.records.read(runs.get(run_id))
        if run is None or (status and run["status"] != status):
            continue
        if run["thread_id"]:
            await visible_thread(request, run["thread_id"], "update")
        await cancel_run(ctx, run, action)
    return Response(status_code=204)


async def join(request: Request) -> Response:
    ctx = ctx_of(request)
    run = await _run_of(request)
    await wait_for_run(ctx, run["run_id"])
    return await _result(ctx, run["run_id"])


async def join_stream(request: Request) -> Response:
    ctx = ctx_of(request)
    run = await _run_of(request)
    last = request.headers.get("last-event-id")
    after = int(last) if last is not None and last.lstrip("-").isdigit() else -1
    modes = [m for m in request.query_params.getlist("stream_mode") if m]
    return StreamingResponse(
        _events(
            ctx,
            run["run_id"],
            after=after,
            with_ids=True,
            cancel_on_disconnect=flag(request, "cancel_on_disconnect"),
            modes=modes or None,
        ),
        media_type="text/event-stream",
        headers=_SSE_HEADERS,
    )


ROUTES: RouteTable = {
    "/runs": {"POST": create_background},
    "/runs/stream": {"POST": create_stream},
    "/runs/wait": {"POST": create_wait},
    "/runs/cancel": {"POST": cancel_many},
    "/runs/batch": {"POST": create_batch},
    "/threads/{thread_id}/runs": {"POST": create_background, "GET": list_runs},
    "/threads/{thread_id}/runs/stream": {"POST": create_stream},
    "/threads/{thread_id}/runs/wait": {"POST": create_wait},
    "/threads/{thread_id}/runs/{run_id}": {"GET": get, "DELETE": delete},
    "/threads/{thread_id}/runs/{run_id}/cancel": {"POST": cancel},
    "/threads/{thread_id}/runs/{run_id}/join": {"GET": join},
    "/threads/{thread_id}/runs/{run_id}/stream": {"GET": join_stream},
}
"""The run routes: path -> {HTTP method: endpoint}."""
