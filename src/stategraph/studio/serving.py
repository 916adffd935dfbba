"""Serving the studio with Uvicorn, with a deadline for request headers.

Uvicorn waits for a request's headers as long as the client keeps the connection open
(its keep-alive timeout stops at the first byte of the next request), so a client that
sends a header line now and then holds a connection forever (slowloris). The HTTP
protocol given to Uvicorn here closes a connection whose request line and headers are
not complete within :attr:`~stategraph.studio.limits.StudioLimits.header_timeout`
seconds, counted from the connection's start and from the end of each response.

It extends the protocol class Uvicorn itself would choose (httptools when installed,
h11 otherwise) and relies only on what both have had since long before the version
the ``studio`` extra requires: ``connection_made``/``data_received``/
``connection_lost``, ``on_response_complete`` and ``cycle`` (the request being
served, made when its headers are complete).
"""

from __future__ import annotations

import asyncio
from typing import Any

from stategraph.studio.limits import StudioLimits

__all__ = ["header_timeout_protocol", "uvicorn_config", "serve"]


class _HeaderDeadline:
    """Mixin for a Uvicorn HTTP protocol: close the connection when a request's
    headers take longer than ``header_timeout`` seconds."""

    header_timeout: float = 10.0
    cycle: Any
    transport: Any

    def _arm(self) -> None:
        self._disarm()
        self._waiting_after = self.cycle  # headers are complete once ``cycle`` changes
        loop = asyncio.get_running_loop()
        self._header_timer: asyncio.TimerHandle | None = loop.call_later(
            self.header_timeout, self._header_deadline
        )

    def _disarm(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
        self._header_timer = None

    def _header_deadline(self) -> None:
        self._header_timer = None
        if self.cycle is self._waiting_after and not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)  # type: ignore[misc]
        if (
            getattr(self, "_header_timer", None) is not None
            and self.cycle is not self._waiting_after
        ):
            self._disarm()

    def on_response_complete(self) -> None:
        # armed before the base class runs: it may start a pipelined request at once
        self._arm()
        super().on_response_complete()  # type: ignore[misc]

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]


def header_timeout_protocol(header_timeout: float, base: type | None = None) -> type:
    """The HTTP protocol class Uvicorn would use (or ``base``), closing connections
    whose request headers take longer than ``header_timeout`` seconds."""
    if base is None:
        from uvicorn.protocols.http.auto import AutoHTTPProtocol

        base = AutoHTTPProtocol
    return type(
        f"HeaderDeadline{base.__name__}",
        (_HeaderDeadline, base),
        {"header_timeout": float(header_timeout)},
    )


def uvicorn_config(
    app: Any, host: str, port: int, limits: StudioLimits | None = None, **options: Any
) -> Any:
    """A ``uvicorn.Config`` serving ``app`` with the header deadline of ``limits``."""
    import uvicorn

    limits = limits or StudioLimits()
    options.setdefault("log_level", "warning")
    return uvicorn.Config(
        app, host=host, port=port, http=header_timeout_protocol(limits.header_timeout), **options
    )


def serve(app: Any, host: str, port: int, limits: StudioLimits | None = None) -> None:
    """Serve ``app`` until interrupted (what ``stategraph studio`` runs)."""
    import uvicorn

    uvicorn.Server(uvicorn_config(app, host, port, limits)).run()
