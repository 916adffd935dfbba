"""Request and response helpers shared by the route modules."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from stategraph.server._context import ApiError, ServerContext
from stategraph.server._json import dumps

__all__ = [
    "JsonResponse",
    "json_response",
    "ctx_of",
    "body_of",
    "int_arg",
    "flag",
    "user_of",
    "authorize",
]


class JsonResponse(Response):
    """A JSON response from a value (or from JSON text already made)."""

    media_type = "application/json"

    def __init__(
        self,
        content: Any,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        *,
        raw: bool = False,
    ) -> None:
        text = content if raw else dumps(content)
        super().__init__(text.encode(), status_code=status_code, headers=headers)


def json_response(content: Any, status_code: int = 200, **headers: str) -> JsonResponse:
    """Shorthand for :class:`JsonResponse` with headers as keywords."""
    return JsonResponse(content, status_code, {k.replace("_", "-"): v for k, v in headers.items()})


def ctx_of(request: Request) -> ServerContext:
    """The server's context."""
    ctx: ServerContext = request.app.state.ctx
    return ctx


async def body_of(request: Request) -> dict[str, Any]:
    """The JSON object of the request body (``{}`` when empty); 422 otherwise."""
    raw = await request.body()
    if not raw:
        return {}
    try:
        body = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ApiError(422, f"The request body is not JSON: {exc}") from exc
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise ApiError(422, "The request body must be a JSON object.")
    return body


def int_arg(value: Any, name: str, default: int, *, low: int = 0, high: int = 10_000) -> int:
    """An integer argument in ``[low, high]``; 422 naming ``name`` otherwise."""
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ApiError(422, f"{name} must be an integer, got {value!r}.") from None
    if not low <= number <= high:
        raise ApiError(422, f"{name} must be between {low} and {high}, got {number}.")
    return number


def flag(request: Request, name: str, default: bool = False) -> bool:
    """A boolean query parameter (``true``/``1``/``false``/``0``)."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    return raw.lower() in ("true", "1", "yes")


def user_of(request: Request) -> Any:
    """The authenticated user of the request (``None`` without auth)."""
    return request.scope.get("sg_user")


async def authorize(
    request: Request, resource: str, action: str, value: dict[str, Any]
) -> dict[str, Any] | None:
    """Run the auth handlers for ``resource``/``action`` on ``value`` (which they may
    change); returns the filter they set (``None``: see everything). 403 when refused."""
    ctx = ctx_of(request)
    if ctx.auth is None:
        return None
    result: dict[str, Any] | None = await ctx.auth.authorize(
        user_of(request), request.scope.get("sg_permissions") or [], resource, action, value
    )
    return result
