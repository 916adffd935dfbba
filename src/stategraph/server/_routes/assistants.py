"""``/assistants``: the graphs' configured versions."""

from __future__ import annotations

import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from stategraph.server._context import ApiError
from stategraph.server._http import JsonResponse, authorize, body_of, ctx_of, flag, int_arg
from stategraph.server._records import assistants
from stategraph.server._routes._common import page_headers, record_json, selected, visible_record
from stategraph.server._routes._table import RouteTable, collection
from stategraph.server.auth import matches_filter

__all__ = ["ROUTES"]


def _check_uuid(assistant_id: str) -> None:
    try:
        uuid.UUID(assistant_id)
    except ValueError:
        raise ApiError(422, "Invalid assistant ID: must be a UUID") from None


async def _visible(
    request: Request, action: str, assistant_id: str, *, names: bool = False
) -> dict[str, Any]:
    """The assistant (a uuid; with ``names``, also a graph id, as LangGraph's graph
    route accepts), after the auth handlers allowed ``action``; 404 when hidden."""
    ctx = ctx_of(request)
    if names and assistant_id in ctx.graphs.ids:
        from stategraph.server._context import default_assistant_id

        assistant_id = default_assistant_id(assistant_id)
    _check_uuid(assistant_id)
    found = await ctx.records.read(assistants.get(assistant_id))
    value = {"assistant_id": assistant_id}
    missing = f"Assistant '{assistant_id}' not found."
    return await visible_record(request, "assistants", action, value, found, missing)


async def create(request: Request) -> Response:
    ctx = ctx_of(request)
    body = await body_of(request)
    graph_id = body.get("graph_id")
    if graph_id not in ctx.graphs.ids:
        raise ApiError(
            404 if isinstance(graph_id, str) else 422,
            f"Graph '{graph_id}' not found: this server serves {', '.join(ctx.graphs.ids)}.",
        )
    assistant_id = str(body.get("assistant_id") or uuid.uuid4())
    _check_uuid(assistant_id)
    value = {
        "assistant_id": assistant_id,
        "graph_id": graph_id,
        "config": body.get("config") or {},
        "context": body.get("context"),
        "metadata": dict(body.get("metadata") or {}),
        "name": body.get("name"),
        "if_exists": body.get("if_exists") or "raise",
    }
    await authorize(request, "assistants", "create", value)
    config = value["config"]
    context = value["context"]
    if context is None:
        context = dict(config.get("configurable") or {})
    found, created = await ctx.records.run(
        assistants.insert(
            assistant_id,
            graph_id,
            config,
            context,
            value["metadata"],
            value["name"] or "Untitled",
            body.get("description"),
        )
    )
    if not created and value["if_exists"] != "do_nothing":
        raise ApiError(409, f"Assistant '{assistant_id}' already exists.")
    return JsonResponse(found)


async def get(request: Request) -> Response:
    return JsonResponse(await _visible(request, "read", request.path_params["assistant_id"]))


async def patch(request: Request) -> Response:
    ctx = ctx_of(request)
    assistant_id = request.path_params["assistant_id"]
    await _visible(request, "update", assistant_id)
    body = await body_of(request)
    if body.get("graph_id") is not None and body["graph_id"] not in ctx.graphs.ids:
        raise ApiError(404, f"Graph '{body['graph_id']}' not found.")
    changes = dict(body)
    if body.get("config") is not None and body.get("context") is None:
        changes["context"] = dict((body["config"] or {}).get("configurable") or {})
    updated = await ctx.records.run(assistants.update(assistant_id, changes))
    ctx.forget_assistant(assistant_id)
    return record_json(updated, f"Assistant '{assistant_id}' not found.")


async def delete(request: Request) -> Response:
    ctx = ctx_of(request)
    assistant_id = request.path_params["assistant_id"]
    await _visible(request, "delete", assistant_id)
    await ctx.records.run(assistants.delete(assistant_id))
    ctx.forget_assistant(assistant_id)
    return Response(status_code=204)


async def _found(request: Request, body: dict[str, Any], **order: Any) -> list[dict[str, Any]]:
    """Every assistant the search ``body`` matches and the caller may see."""
    ctx = ctx_of(request)
    filters = await authorize(request, "assistants", "search", body)
    found, _ = await ctx.records.read(
        assistants.search(
            graph_id=body.get("graph_id"),
            name=body.get("name"),
            metadata=body.get("metadata"),
            limit=10**9,
            **order,
        )
    )
    return [a for a in found if matches_filter(a["metadata"], filters)]


async def search(request: Request) -> Response:
    body = await body_of(request)
    sort = {"sort_by": body.get("sort_by"), "sort_order": body.get("sort_order")}
    found = await _found(request, body, offset=0, **sort)
    limit = int_arg(body.get("limit"), "limit", 10, low=1)
    offset = int_arg(body.get("offset"), "offset", 0, high=10**9)
    page = selected(found[offset : offset + limit], body)
    return JsonResponse(page, headers=page_headers(len(found), offset, limit))


async def count(request: Request) -> Response:
    return JsonResponse(len(await _found(request, await body_of(request))))


async def versions(request: Request) -> Response:
    ctx = ctx_of(request)
    assistant_id = request.path_params["assistant_id"]
    await _visible(request, "read", assistant_id)
    body = await body_of(request)
    found = await ctx.records.read(
        assistants.versions(
            assistant_id,
            body.get("metadata"),
            int_arg(body.get("limit"), "limit", 10, low=1),
            int_arg(body.get("offset"), "offset", 0, high=10**9),
        )
    )
    return JsonResponse(found)


async def latest(request: Request) -> Response:
    ctx = ctx_of(request)
    assistant_id = request.path_params["assistant_id"]
    await _visible(request, "update", assistant_id)
    body = await body_of(request)
    version = int_arg(body.get("version"), "version", 0, low=1, high=10**9)
    found = await ctx.records.run(assistants.set_latest(assistant_id, version))
    ctx.forget_assistant(assistant_id)
    return record_json(found, f"Assistant '{assistant_id}' has no version {version}.")


async def _graph_of(request: Request, *, names: bool = False) -> Any:
    ctx = ctx_of(request)
    found = await _visible(request, "read", request.path_params["assistant_id"], names=names)
    return ctx.graphs.graph(found["graph_id"], found.get("config") or {})


async def graph(request: Request) -> Response:
    raw = request.query_params.get("xray", "false")
    xray: bool | int = raw.lower() == "true" or (int(raw) if raw.isdigit() else False)
    async with await _graph_of(request, names=True) as g:
        drawn = g.get_graph(xray=xray).to_json()
    for node in drawn.get("nodes", []):
        data = node.get("data")
        if isinstance(data, dict):
            data.pop("id", None)
    return JsonResponse(drawn)


def _channels_schema(graph_id: str, g: Any) -> dict[str, Any]:
    """A plain schema of the state's keys, when pydantic cannot express the state type."""
    out_channels = getattr(g, "output_channels", None)
    names = [out_channels] if isinstance(out_channels, str) else list(out_channels or g.channels)
    keys = [k for k in names if not k.startswith("__") and ":" not in k]
    props = {k: {"default": None, "title": k.replace("_", " ").title()} for k in keys}
    return {"properties": props, "title": f"{graph_id}_state", "type": "object"}


def _schemas(graph_id: str, g: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"graph_id": graph_id}
    for key, method in (
        ("input_schema", "get_input_jsonschema"),
        ("output_schema", "get_output_jsonschema"),
        ("context_schema", "get_context_jsonschema"),
    ):
        try:
            out[key] = getattr(g, method)()
        except Exception:  # a schema pydantic cannot express: report none
            out[key] = None
    state = out["output_schema"]
    if state is None:
        try:
            state = _channels_schema(graph_id, g)
        except Exception:
            state = None
    out["state_schema"] = state
    out["config_schema"] = {}
    return out


async def schemas(request: Request) -> Response:
    found = await _visible(request, "read", request.path_params["assistant_id"])
    async with await _graph_of(request) as g:
        return JsonResponse(_schemas(found["graph_id"], g))


async def subgraphs(request: Request) -> Response:
    namespace = request.path_params.get("namespace")
    recurse = flag(request, "recurse")
    async with await _graph_of(request) as g:
        out = {
            ns: _schemas(ns, sub)
            for ns, sub in g.get_subgraphs(namespace=namespace, recurse=recurse)
        }
    return JsonResponse(out)


ROUTES: RouteTable = {
    **collection("/assistants", create=create, search=search, count=count),
    "/assistants/{assistant_id}": {"GET": get, "PATCH": patch, "DELETE": delete},
    "/assistants/{assistant_id}/versions": {"POST": versions},
    "/assistants/{assistant_id}/latest": {"POST": latest},
    "/assistants/{assistant_id}/graph": {"GET": graph},
    "/assistants/{assistant_id}/schemas": {"GET": schemas},
    "/assistants/{assistant_id}/subgraphs": {"GET": subgraphs},
    "/assistants/{assistant_id}/subgraphs/{namespace}": {"GET": subgraphs},
}
"""The assistant routes: path -> {HTTP method: endpoint}."""
