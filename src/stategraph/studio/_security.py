"""Who may use the studio: the access token, CSRF protection and the response headers.

* With a token (required when binding to anything but loopback), every request must
  carry it: ``Authorization: Bearer TOKEN``, ``x-api-key: TOKEN``, or the ``sg_token``
  cookie a browser receives by opening ``/?token=TOKEN`` once.
* A request that changes something (any method but GET/HEAD, except the read-only
  searches of the API) must carry the page's CSRF token in ``X-CSRF-Token``, or come
  from a program rather than a browser page: authenticated by the token in a header, or,
  without a token, a JSON request with neither ``Origin`` nor ``Sec-Fetch-Site`` (a
  browser sends them on every cross-site request, and cannot send JSON cross-site
  without a CORS preflight, which the studio never grants).
* Without a token, only requests addressed to a loopback name (``127.0.0.1``,
  ``localhost``, ``[::1]``) are served: a web page whose domain an attacker rebinds to
  127.0.0.1 (DNS rebinding) is refused before it can read anything.
* Pages are served with a Content-Security-Policy that runs no script but the
  studio's own file, so an escaped value can never become code.
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, quote, urlencode

from stategraph.studio._context import Studio

__all__ = ["SecurityMiddleware", "READ_ONLY_POSTS", "CSP", "same_origin_path"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

READ_ONLY_POSTS = re.compile(
    r"^/(assistants/search|threads/search|threads/[^/]+/history|threads/[^/]+/state/checkpoint"
    r"|store/items/search|store/namespaces)$"
)
"""POST endpoints of the API that only read (searches with a JSON body)."""

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'"
)


def _loopback_host(host: str) -> bool:
    """True for ``localhost``, ``127.x.x.x`` and ``[::1]`` (with or without a port)."""
    match = re.fullmatch(r"(\[[^\]]*\]|[^:]*)(:\d+)?", host.strip().lower())
    if match is None:
        return False
    name = match.group(1)
    if name.startswith("["):
        return name == "[::1]"
    if name == "localhost" or name.endswith(".localhost"):
        return True
    parts = name.split(".")
    return len(parts) == 4 and parts[0] == "127" and all(p.isdigit() for p in parts)


def same_origin_path(path: str) -> str:
    """``path`` as a redirect target that can only stay on this origin.

    Exactly one leading slash (slashes, backslashes, blanks and control characters in
    front are dropped), and every other character percent-encoded but the plain ones
    of a path: ``//other.host/``, a backslash or a tab after the slash, an
    absolute-form request target (``http://other.host/``) or their encoded forms all
    become paths of this studio.
    """
    return "/" + quote(path.lstrip("/\\ \t\r\n\x00\x0b\x0c"), safe="/:@!$&'()*+,;=-._~")


def _same(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and hmac.compare_digest(a.encode(), b.encode())


class SecurityMiddleware:
    """ASGI middleware enforcing the token, CSRF and the security headers."""

    def __init__(self, app: ASGIApp, studio: Studio) -> None:
        self.app = app
        self.studio = studio

    async def _reply(self, send: Send, status: int, text: str, headers: list | None = None) -> None:
        body = json.dumps({"detail": text}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    *(headers or []),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        token = self.studio.token
        if not token and not _loopback_host(headers.get("host", "")):
            # without a token only loopback names are served: a page whose domain was
            # rebound to 127.0.0.1 (DNS rebinding) is refused, so it cannot read a token
            await self._reply(
                send,
                403,
                f"Host {headers.get('host', '')!r} is not served: open the studio as "
                "http://127.0.0.1:PORT/ (or start it with --token).",
            )
            return
        header_auth = False
        if token:
            bearer = headers.get("authorization", "")
            bearer = bearer[7:] if bearer.lower().startswith("bearer ") else None
            header_auth = _same(bearer, token) or _same(headers.get("x-api-key"), token)
            cookie = SimpleCookie(headers.get("cookie", ""))
            cookie_auth = "sg_token" in cookie and _same(cookie["sg_token"].value, token)
            query = parse_qs(scope.get("query_string", b"").decode())
            if scope["method"] == "GET" and _same((query.get("token") or [None])[0], token):
                rest = {k: v for k, v in query.items() if k != "token"}
                # never an open redirect: only a path of this origin
                location = same_origin_path(scope["path"]) + (
                    "?" + urlencode(rest, doseq=True) if rest else ""
                )
                await send(
                    {
                        "type": "http.response.start",
                        "status": 303,
                        "headers": [
                            (b"location", location.encode()),
                            (
                                b"set-cookie",
                                f"sg_token={token}; HttpOnly; SameSite=Strict; Path=/".encode(),
                            ),
                            (b"content-length", b"0"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b""})
                return
            if not (header_auth or cookie_auth):
                await self._reply(
                    send,
                    401,
                    "This studio needs its access token: open /?token=TOKEN once, or send "
                    "Authorization: Bearer TOKEN.",
                )
                return
        if scope["method"] not in ("GET", "HEAD", "OPTIONS") and not READ_ONLY_POSTS.match(
            scope["path"]
        ):
            csrf_ok = _same(headers.get("x-csrf-token"), self.studio.csrf_secret)
            program = (
                "origin" not in headers
                and "sec-fetch-site" not in headers
                and (
                    scope["method"] != "POST"  # other methods always need a CORS preflight
                    or headers.get("content-type", "").startswith("application/json")
                )
            )
            if not (csrf_ok or header_auth or (program and not token)):
                await self._reply(
                    send,
                    403,
                    "Missing or wrong CSRF token: send the X-CSRF-Token of the studio page.",
                )
                return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = [
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"),
                    (b"content-security-policy", CSP.encode()),
                ]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)
