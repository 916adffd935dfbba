"""Bounds on what one request may cost the studio: body size and how long it may take.

* :class:`StudioLimits` holds the settings (``stategraph studio --max-body-mib``,
  ``--header-timeout``, ``--body-timeout``; ``create_app(limits=...)``).
* :class:`LimitsMiddleware` answers ``413`` to a body larger than
  :attr:`StudioLimits.max_body_bytes` (at once when ``Content-Length`` says so, or as
  soon as a chunked body goes past it) and ``408`` to a body that does not arrive
  within :attr:`StudioLimits.body_timeout` seconds (a client sending one byte now and
  then), and closes the connection.
* The time a client may take to send its request line and headers is enforced by the
  server (:mod:`stategraph.studio.serving`), since the application only sees a request
  once its headers are complete.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from starlette.exceptions import HTTPException

__all__ = ["StudioLimits", "LimitsMiddleware", "DEFAULT_MAX_BODY_BYTES"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
"""16 MiB."""


@dataclass(frozen=True)
class StudioLimits:
    """What one request may cost."""

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    """Largest request body (``413`` beyond it)."""
    header_timeout: float = 10.0
    """Seconds a client has to send its request line and headers (the connection is
    closed after that); applied by :func:`stategraph.studio.serving.uvicorn_config`."""
    body_timeout: float = 60.0
    """Seconds a client has to send a whole request body once its headers are in
    (``408`` after that)."""

    def __post_init__(self) -> None:
        if isinstance(self.max_body_bytes, bool) or not isinstance(self.max_body_bytes, int):
            raise TypeError("StudioLimits.max_body_bytes must be an int (bytes).")
        if self.max_body_bytes < 1:
            raise ValueError("StudioLimits.max_body_bytes must be at least 1.")
        for name in ("header_timeout", "body_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"StudioLimits.{name} must be a number of seconds above 0.")


def _too_large(limit: int) -> HTTPException:
    return HTTPException(
        413,
        f"The request body is larger than this studio accepts ({limit} bytes; "
        "start it with a larger --max-body-mib).",
        headers={"connection": "close"},
    )


class LimitsMiddleware:
    """ASGI middleware bounding request bodies in size and time (see the module)."""

    def __init__(self, app: ASGIApp, limits: StudioLimits) -> None:
        self.app = app
        self.limits = limits

    async def _reply(self, send: Send, exc: HTTPException) -> None:
        import json

        body = json.dumps({"detail": exc.detail}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": exc.status_code,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limits = self.limits
        for name, value in scope.get("headers", ()):
            if name.lower() == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > limits.max_body_bytes:
                    await self._reply(send, _too_large(limits.max_body_bytes))
                    return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limits.body_timeout
        received = 0
        done = False

        async def limited_receive() -> Message:
            nonlocal received, done
            if done:  # the body is in: waiting for a disconnect takes as long as it takes
                return await receive()
            remaining = deadline - loop.time()
            try:
                if remaining <= 0:
                    raise asyncio.TimeoutError
                message = await asyncio.wait_for(receive(), remaining)
            except asyncio.TimeoutError:
                raise HTTPException(
                    408,
                    f"The request body did not arrive within {limits.body_timeout:g} s.",
                    headers={"connection": "close"},
                ) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limits.max_body_bytes:
                    raise _too_large(limits.max_body_bytes)
                done = not message.get("more_body", False)
            else:
                done = True
            return message

        await self.app(scope, limited_receive, send)
