"""``/ok``, ``/info``: health and what this server offers."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from stategraph.server._http import JsonResponse, ctx_of
from stategraph.server._routes._table import RouteTable

__all__ = ["ROUTES"]


async def ok(request: Request) -> Response:
    if request.query_params.get("check_db", "0") in ("1", "true"):
        ctx = ctx_of(request)

        def ping() -> Any:
            rows = yield ("SELECT 1", ())
            return rows

        await ctx.records.read(ping())
    return JsonResponse({"ok": True, "services": {}})


async def info(request: Request) -> Response:
    from stategraph import __version__

    ctx = ctx_of(request)
    return JsonResponse(
        {
            "version": __version__,
            "server": "stategraph serve",
            "storage": ctx.storage.kind,
            "graphs": ctx.graphs.ids,
            "flags": {"assistants": True, "crons": True, "langsmith": False},
        }
    )


ROUTES: RouteTable = {
    "/ok": {"GET": ok},
    "/info": {"GET": info},
}
"""The meta routes: path -> {HTTP method: endpoint}."""
