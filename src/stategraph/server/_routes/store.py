"""``/store``: the long-term memory store (items in namespaces)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from stategraph.server._context import ApiError
from stategraph.server._http import JsonResponse, authorize, body_of, ctx_of, int_arg
from stategraph.server._json import plain
from stategraph.server._routes._table import RouteTable

__all__ = ["ROUTES"]


def _namespace(raw: Any, name: str = "namespace") -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, (list, tuple)) or not all(isinstance(p, str) for p in raw):
        raise ApiError(422, f"{name} must be a list of strings, got {raw!r}.")
    for part in raw:
        if not part:
            raise ApiError(422, f"{name} labels must be non-empty strings.")
        if "." in part:
            raise ApiError(422, f"{name} label {part!r} must not contain periods ('.').")
    return tuple(raw)


def _key(raw: Any) -> str:
    if not isinstance(raw, str) or not raw:
        raise ApiError(422, f"key must be a non-empty string, got {raw!r}.")
    return raw


def _item(item: Any, *, with_score: bool = False) -> dict[str, Any]:
    out = {
        "namespace": list(item.namespace),
        "key": item.key,
        "value": plain(item.value),
        "created_at": plain(item.created_at),
        "updated_at": plain(item.updated_at),
    }
    if with_score:
        out["score"] = getattr(item, "score", None)
    return out


async def put(request: Request) -> Response:
    ctx = ctx_of(request)
    body = await body_of(request)
    value: dict[str, Any] = {
        "namespace": list(_namespace(body.get("namespace"))),
        "key": _key(body.get("key")),
        "value": body.get("value"),
    }
    if not isinstance(value["value"], dict):
        raise ApiError(422, "value must be a JSON object.")
    await authorize(request, "store", "put", value)
    kwargs: dict[str, Any] = {}
    if body.get("index") is not None:
        kwargs["index"] = body["index"]
    if body.get("ttl") is not None:
        kwargs["ttl"] = body["ttl"]
    await ctx.storage.store.aput(tuple(value["namespace"]), value["key"], value["value"], **kwargs)
    return Response(status_code=204)


async def item(request: Request) -> Response:
    ctx = ctx_of(request)
    if request.method == "DELETE":
        body = await body_of(request)
        value: dict[str, Any] = {
            "namespace": list(_namespace(body.get("namespace"))),
            "key": _key(body.get("key")),
        }
        await authorize(request, "store", "delete", value)
        await ctx.storage.store.adelete(tuple(value["namespace"]), value["key"])
        return Response(status_code=204)
    q = request.query_params
    raw_ns = q.get("namespace", "")
    value = {
        "namespace": [p for p in raw_ns.split(".") if p] if raw_ns else [],
        "key": _key(q.get("key")),
    }
    await authorize(request, "store", "get", value)
    refresh = q.get("refresh_ttl")
    kwargs: dict[str, Any] = {}
    if refresh is not None:
        kwargs["refresh_ttl"] = refresh.lower() in ("true", "1")
    found = await ctx.storage.store.aget(tuple(value["namespace"]), value["key"], **kwargs)
    return JsonResponse(None if found is None else _item(found))


async def search(request: Request) -> Response:
    ctx = ctx_of(request)
    body = await body_of(request)
    value: dict[str, Any] = {
        "namespace": list(_namespace(body.get("namespace_prefix"), "namespace_prefix")),
        "filter": body.get("filter"),
        "query": body.get("query"),
    }
    await authorize(request, "store", "search", value)
    kwargs: dict[str, Any] = {}
    if body.get("refresh_ttl") is not None:
        kwargs["refresh_ttl"] = bool(body["refresh_ttl"])
    found = await ctx.storage.store.asearch(
        tuple(value["namespace"]),
        query=value["query"],
        filter=value["filter"],
        limit=int_arg(body.get("limit"), "limit", 10, low=1),
        offset=int_arg(body.get("offset"), "offset", 0, high=10**9),
        **kwargs,
    )
    return JsonResponse({"items": [_item(i, with_score=True) for i in found]})


async def namespaces(request: Request) -> Response:
    ctx = ctx_of(request)
    body = await body_of(request)
    value: dict[str, Any] = {
        "namespace": list(_namespace(body.get("prefix"), "prefix")),
        "suffix": list(_namespace(body.get("suffix"), "suffix")),
        "max_depth": body.get("max_depth"),
    }
    await authorize(request, "store", "list_namespaces", value)
    found = await ctx.storage.store.alist_namespaces(
        prefix=tuple(value["namespace"]) or None,
        suffix=tuple(value["suffix"]) or None,
        max_depth=value["max_depth"],
        limit=int_arg(body.get("limit"), "limit", 100, low=1),
        offset=int_arg(body.get("offset"), "offset", 0, high=10**9),
    )
    return JsonResponse({"namespaces": [list(ns) for ns in found]})


ROUTES: RouteTable = {
    "/store/items": {"PUT": put, "GET": item, "DELETE": item},
    "/store/items/search": {"POST": search},
    "/store/namespaces": {"POST": namespaces},
}
"""The store routes: path -> {HTTP method: endpoint}."""
