"""``/threads``: threads, their state and history."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from stategraph.errors import InvalidUpdateError
from stategraph.server._context import ApiError, ServerContext
from stategraph.server._http import JsonResponse, authorize, body_of, ctx_of, flag, int_arg
from stategraph.server._json import plain
from stategraph.server._ops import active_runs, delete_thread
from stategraph.server._records import threads
from stategraph.server._routes._common import (
    page_headers,
    record_json,
    search_records,
    selected,
    thread_config,
    visible_thread,
)
from stategraph.server._routes._table import RouteTable, collection
from stategraph.server._state import checkpoint_json, empty_state, state_json, summary_of

__all__ = ["ROUTES", "graph_for_thread"]


def _ttl_minutes(raw: Any) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, Mapping):
        strategy = raw.get("strategy", "delete")
        if strategy != "delete":
            raise ApiError(422, f"ttl.strategy must be 'delete', got {strategy!r}.")
        raw = raw.get("ttl")
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or raw <= 0:
        raise ApiError(422, f"ttl must be a positive number of minutes, got {raw!r}.")
    return float(raw)


@contextlib.asynccontextmanager
async def graph_for_thread(ctx: ServerContext, thread: Mapping[str, Any]) -> AsyncIterator[Any]:
    """The graph of a thread (its metadata's ``graph_id``; the only graph when the
    server has one), bound to the server's storage; ``None`` when unknown."""
    graph_id = (thread.get("metadata") or {}).get("graph_id")
    if graph_id not in ctx.graphs.ids:
        graph_id = ctx.graphs.ids[0] if len(ctx.graphs.ids) == 1 else None
    if graph_id is None:
        yield None
        return
    async with ctx.graphs.graph(graph_id, {}) as graph:
        yield graph


async def _refresh(ctx: ServerContext, thread_id: str, graph: Any) -> None:
    """Record the thread's state after a state change."""
    snap = await graph.aget_state(thread_config(thread_id))
    summary = summary_of(snap)
    pending = await active_runs(ctx, thread_id)
    await ctx.records.run(
        threads.set_state(
            thread_id,
            status="busy" if pending else summary.status,
            values=summary.values_json,
            interrupts=summary.interrupts,
        )
    )


async def create(request: Request) -> Response:
    ctx = ctx_of(request)
    body = await body_of(request)
    thread_id = str(body.get("thread_id") or uuid.uuid4())
    metadata = dict(body.get("metadata") or {})
    if body.get("graph_id"):
        metadata["graph_id"] = body["graph_id"]
    value: dict[str, Any] = {
        "thread_id": thread_id,
        "metadata": metadata,
        "if_exists": body.get("if_exists"),
    }
    await authorize(request, "threads", "create", value)
    ttl = _ttl_minutes(body.get("ttl"))
    if ttl is None and ctx.config.thread_ttl is not None:
        ttl = ctx.config.thread_ttl.default_ttl  # checkpointer.ttl.default_ttl
    found, created = await ctx.records.run(threads.insert(thread_id, value["metadata"], ttl))
    if not created:
        if body.get("if_exists") == "do_nothing":
            return JsonResponse(found)
        raise ApiError(409, f"Thread '{thread_id}' already exists.")
    supersteps = body.get("supersteps")
    if supersteps:
        async with graph_for_thread(ctx, found) as graph:
            if graph is None:
                raise ApiError(422, "supersteps need the thread's graph: give graph_id.")
            from stategraph.types import StateUpdate

            steps = [
                [
                    StateUpdate(u.get("values"), u.get("as_node"))
                    for u in (step.get("updates") or [])
                ]
                for step in supersteps
            ]
            try:
                await graph.abulk_update_state(thread_config(thread_id), steps)
            except (InvalidUpdateError, ValueError, TypeError, KeyError) as exc:
                await delete_thread(ctx, thread_id)
                raise ApiError(422, f"supersteps refused: {exc}") from exc
            await _refresh(ctx, thread_id, graph)
        found = await ctx.records.read(threads.get(thread_id))
    return JsonResponse(found)


async def get(request: Request) -> Response:
    return JsonResponse(await visible_thread(request, request.path_params["thread_id"]))


async def patch(request: Request) -> Response:
    ctx = ctx_of(request)
    thread_id = request.path_params["thread_id"]
    body = await body_of(request)
    await visible_thread(request, thread_id, "update", {"thread_id": thread_id, **body})
    updated = await ctx.records.run(
        threads.update(thread_id, body.get("metadata"), _ttl_minutes(body.get("ttl")))
    )
    return record_json(updated, f"Thread with ID {thread_id} not found")


async def delete(request: Request) -> Response:
    ctx = ctx_of(request)
    thread_id = request.path_params["thread_id"]
    await visible_thread(request, thread_id, "delete")
    await delete_thread(ctx, thread_id)
    return Response(status_code=204)


def _search_args(body: Mapping[str, Any]) -> dict[str, Any]:
    status = body.get("status")
    if status is not None and status not in threads.STATUSES:
        raise ApiError(422, f"status must be one of {', '.join(threads.STATUSES)}, got {status!r}.")
    return {
        "ids": body.get("ids"),
        "metadata": body.get("metadata"),
        "values": body.get("values"),
        "status": status,
        "sort_by": body.get("sort_by"),
        "sort_order": body.get("sort_order"),
    }


async def search(request: Request) -> Response:
    body = await body_of(request)
    limit = int_arg(body.get("limit"), "limit", 10, low=1)
    offset = int_arg(body.get("offset"), "offset", 0, high=10**9)
    args = _search_args(body)
    found, total = await search_records(
        request, "threads", threads.search, body, args, limit=limit, offset=offset
    )
    return JsonResponse(selected(found, body), headers=page_headers(total, offset, limit))


async def count(request: Request) -> Response:
    body = await body_of(request)
    args = _search_args(body)
    _, total = await search_records(request, "threads", threads.search, body, args, limit=1)
    return JsonResponse(total)


async def copy(request: Request) -> Response:
    ctx = ctx_of(request)
    thread_id = request.path_params["thread_id"]
    await visible_thread(request, thread_id, "read")
    await authorize(request, "threads", "create", {"thread_id": thread_id})
    new_id = str(uuid.uuid4())
    copied = await ctx.records.run(threads.copy(thread_id, new_id))
    if copied is None:
        raise ApiError(404, f"Thread with ID {thread_id} not found")
    await ctx.storage.saver.acopy_thread(thread_id, new_id)
    return JsonResponse(copied)


async def _state(
    request: Request, thread_id: str, checkpoint: Mapping[str, Any], subgraphs: bool
) -> dict[str, Any]:
    ctx = ctx_of(request)
    thread = await visible_thread(request, thread_id)
    config = thread_config(
        thread_id, checkpoint.get("checkpoint_id"), checkpoint.get("checkpoint_ns") or ""
    )
    async with graph_for_thread(ctx, thread) as graph:
        if graph is None:
            return empty_state()
        snap = await graph.aget_state(config, subgraphs=subgraphs)
    if checkpoint.get("checkpoint_id") and not (snap.config.get("configurable") or {}).get(
        "checkpoint_id"
    ):
        raise ApiError(404, f"Thread {thread_id} has no checkpoint {checkpoint['checkpoint_id']}.")
    return state_json(snap)


async def state_get(request: Request) -> Response:
    checkpoint = {"checkpoint_id": request.path_params.get("checkpoint_id")}
    state = await _state(
        request, request.path_params["thread_id"], checkpoint, flag(request, "subgraphs")
    )
    return JsonResponse(state)


async def state_at_checkpoint(request: Request) -> Response:
    body = await body_of(request)
    state = await _state(
        request,
        request.path_params["thread_id"],
        body.get("checkpoint") or {},
        bool(body.get("subgraphs")),
    )
    return JsonResponse(state)


async def state_update(request: Request) -> Response:
    ctx = ctx_of(request)
    thread_id = request.path_params["thread_id"]
    body = await body_of(request)
    thread = await visible_thread(request, thread_id, "update", {"thread_id": thread_id, **body})
    if await active_runs(ctx, thread_id):
        raise ApiError(409, f"Thread {thread_id} is busy with a run: wait for it or cancel it.")
    checkpoint = body.get("checkpoint") or {}
    config = thread_config(
        thread_id,
        body.get("checkpoint_id") or checkpoint.get("checkpoint_id"),
        checkpoint.get("checkpoint_ns") or "",
    )
    async with graph_for_thread(ctx, thread) as graph:
        if graph is None:
            raise ApiError(
                422,
                f"Thread {thread_id} has no graph yet: run it first, or create it with graph_id.",
            )
        graph_id = (thread.get("metadata") or {}).get("graph_id") or graph.name
        config["metadata"] = {"graph_id": graph_id, "thread_id": thread_id}
        try:
            new_config = await graph.aupdate_state(config, body.get("values"), body.get("as_node"))
        except (InvalidUpdateError, ValueError, TypeError, KeyError) as exc:
            raise ApiError(400, f"update_state refused: {exc}") from exc
        await _refresh(ctx, thread_id, graph)
    cp = checkpoint_json(new_config) or {}
    return JsonResponse(
        {"checkpoint": cp, "configurable": cp, "checkpoint_id": cp.get("checkpoint_id")}
    )


async def history(request: Request) -> Response:
    ctx = ctx_of(request)
    thread_id = request.path_params["thread_id"]
    if request.method == "POST":
        body = await body_of(request)
    else:
        body = dict(request.query_params.items())
    thread = await visible_thread(request, thread_id)
    limit = int_arg(body.get("limit"), "limit", 10, low=1)
    before = body.get("before")
    if isinstance(before, Mapping):
        before = before.get("checkpoint_id")
    checkpoint = body.get("checkpoint") or {}
    config = thread_config(
        thread_id, checkpoint.get("checkpoint_id"), checkpoint.get("checkpoint_ns") or ""
    )
    before_config = thread_config(thread_id, before) if before else None
    out: list[dict[str, Any]] = []
    async with graph_for_thread(ctx, thread) as graph:
        if graph is not None:
            async for snap in graph.aget_state_history(
                config, filter=body.get("metadata") or None, before=before_config, limit=limit
            ):
                out.append(state_json(snap))
    return JsonResponse(plain(out))


ROUTES: RouteTable = {
    **collection("/threads", create=create, search=search, count=count),
    "/threads/{thread_id}": {"GET": get, "PATCH": patch, "DELETE": delete},
    "/threads/{thread_id}/copy": {"POST": copy},
    "/threads/{thread_id}/state": {"GET": state_get, "POST": state_update},
    "/threads/{thread_id}/state/checkpoint": {"POST": state_at_checkpoint},
    "/threads/{thread_id}/state/{checkpoint_id}": {"GET": state_get},
    "/threads/{thread_id}/history": {"GET": history, "POST": history},
}
"""The thread routes: path -> {HTTP method: endpoint}."""
