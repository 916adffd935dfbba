"""Route tables: each route module lists its paths once, with the endpoint of each method.

A table maps a path to ``{HTTP method: endpoint}``, in the order Starlette is to try
the paths; :func:`route_list` turns it into Starlette routes, one per path and
endpoint (an endpoint that serves several methods of a path gets one route for them).
:func:`collection` writes the three routes each resource of LangGraph's API has on its
collection (create, search, count).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["Endpoint", "RouteTable", "collection", "route_list"]

Endpoint = Callable[[Request], Awaitable[Response]]
"""An HTTP endpoint of the API."""

RouteTable = Mapping[str, Mapping[str, Endpoint]]
"""``{path: {HTTP method: endpoint}}``, paths in matching order."""


def route_list(*tables: RouteTable) -> list[Route]:
    """The Starlette routes of ``tables``, in order: one per path and endpoint, with
    the methods (in the table's order) that endpoint serves on that path."""
    routes: list[Route] = []
    for table in tables:
        for path, by_method in table.items():
            methods: dict[Endpoint, list[str]] = {}
            for method, endpoint in by_method.items():
                methods.setdefault(endpoint, []).append(method)
            routes.extend(Route(path, endpoint, methods=m) for endpoint, m in methods.items())
    return routes


def collection(
    path: str, *, create: Endpoint, search: Endpoint, count: Endpoint
) -> dict[str, dict[str, Endpoint]]:
    """The routes of a resource's collection at ``path``, as LangGraph's API has them
    for assistants, threads and crons: ``POST path`` creates, ``POST path/search``
    searches, ``POST path/count`` counts."""
    return {
        path: {"POST": create},
        f"{path}/search": {"POST": search},
        f"{path}/count": {"POST": count},
    }
