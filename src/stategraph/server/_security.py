"""Who may call the API: a shared token, or the project's custom ``Auth`` handlers.

* With custom auth (``langgraph.json`` ``auth.path``), every request but ``/ok`` runs
  the authenticate handler; the user it returns travels in the ASGI scope to the
  authorization handlers and into the run's config (``langgraph_auth_user``).
* Otherwise, with a token (required when the server listens beyond loopback), every
  request but ``/ok`` must carry ``Authorization: Bearer TOKEN`` or
  ``x-api-key: TOKEN`` (what LangGraph's SDKs send with ``api_key=``).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["AuthMiddleware", "OPEN_PATHS"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

OPEN_PATHS = frozenset({"/ok"})
"""Paths served without credentials (health checks)."""


async def _refuse(
    send: Send, status: int, detail: str, headers: dict[str, str] | None = None
) -> None:
    body = json.dumps({"detail": detail}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    if status == 401:
        raw.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class AuthMiddleware:
    """ASGI middleware applying the token or the custom auth (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, token: str | None = None, auth: Any = None) -> None:
        self.app = app
        self.token = token
        self.auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["path"] in OPEN_PATHS
            or scope.get("method") == "OPTIONS"
        ):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if self.auth is not None and self.auth.has_authenticate:
            from starlette.requests import Request

            from stategraph.server.auth import HTTPException

            request = Request(scope, receive)
            available = {
                "request": request,
                "authorization": headers.get("authorization"),
                "headers": {k.encode(): v.encode() for k, v in headers.items()},
                "path": scope["path"],
                "method": scope.get("method"),
                "query_params": dict(request.query_params),
                "scope": scope,
            }
            try:
                user = await self.auth.authenticate_request(available)
            except HTTPException as exc:
                await _refuse(send, exc.status_code, exc.detail, exc.headers)
                return
            except Exception as exc:
                await _refuse(
                    send, 500, f"The authenticate handler failed: {type(exc).__name__}: {exc}"
                )
                return
            scope["sg_user"] = user
            scope["sg_permissions"] = list(user.permissions)
        elif self.token is not None:
            given = headers.get("x-api-key")
            auth_header = headers.get("authorization", "")
            if given is None and auth_header.lower().startswith("bearer "):
                given = auth_header[7:].strip()
            if given is None or not hmac.compare_digest(given.encode(), self.token.encode()):
                await _refuse(
                    send,
                    401,
                    "This server needs its token: send 'Authorization: Bearer TOKEN' or "
                    "'x-api-key: TOKEN' (api_key= in LangGraph's SDKs).",
                )
                return
        await self.app(scope, receive, send)
