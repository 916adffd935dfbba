"""Route tables (each path written once, the API's order kept) and shared route helpers."""

from __future__ import annotations

import json

import pytest
from starlette.requests import Request
from starlette.responses import Response

from stategraph.server._routes._table import collection, route_list

pytestmark = pytest.mark.server


async def _a(request: Request) -> Response:
    return Response("a")


async def _b(request: Request) -> Response:
    return Response("b")


def test_one_route_per_path_and_endpoint_in_table_order() -> None:
    routes = route_list(
        {"/x": {"POST": _a, "GET": _b}, "/x/{id}": {"GET": _a, "POST": _a}},
        {"/y": {"DELETE": _b}},
    )
    assert [(r.path, r.endpoint, r.methods) for r in routes] == [
        ("/x", _a, {"POST"}),
        ("/x", _b, {"GET", "HEAD"}),
        ("/x/{id}", _a, {"GET", "HEAD", "POST"}),
        ("/y", _b, {"DELETE"}),
    ]


def test_collection_routes() -> None:
    assert collection("/things", create=_a, search=_b, count=_a) == {
        "/things": {"POST": _a},
        "/things/search": {"POST": _b},
        "/things/count": {"POST": _a},
    }


def test_the_api_serves_each_path_once_per_endpoint() -> None:
    from stategraph.server._routes import assistants, crons, runs, threads

    routes = route_list(assistants.ROUTES, threads.ROUTES, crons.ROUTES, runs.ROUTES)
    seen = [(r.path, r.endpoint.__name__, tuple(sorted(r.methods))) for r in routes]
    assert len(seen) == len(set(seen)) == 44
    assert ("/threads/{thread_id}/history", "history", ("GET", "HEAD", "POST")) in seen
    assert seen[:3] == [
        ("/assistants", "create", ("POST",)),
        ("/assistants/search", "search", ("POST",)),
        ("/assistants/count", "count", ("POST",)),
    ]


def test_record_json_answers_the_record_or_404() -> None:
    from stategraph.server._context import ApiError
    from stategraph.server._routes._common import record_json

    response = record_json({"thread_id": "t1", "metadata": {}}, "gone")
    assert response.status_code == 200
    assert json.loads(bytes(response.body)) == {"thread_id": "t1", "metadata": {}}
    with pytest.raises(ApiError) as info:
        record_json(None, "Thread with ID t1 not found")
    assert (info.value.status, info.value.message) == (404, "Thread with ID t1 not found")
