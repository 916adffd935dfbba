"""Building the studio's ASGI application."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from stategraph.studio._actions import action_routes
from stategraph.studio._api import api_routes
from stategraph.studio._context import Studio, StudioError
from stategraph.studio._html import h, page
from stategraph.studio._pages import page_routes
from stategraph.studio._reading import SaverThreadIndex
from stategraph.studio._security import SecurityMiddleware
from stategraph.studio.limits import LimitsMiddleware, StudioLimits

__all__ = ["create_app", "STATIC_DIR"]

STATIC_DIR = Path(__file__).parent / "static"
"""The studio's own CSS and JavaScript (shipped in the package; nothing is fetched)."""


def _wants_html(request: Request) -> bool:
    return request.url.path in ("/",) or request.url.path.startswith("/ui/")


def create_app(
    saver: Any,
    *,
    graph: Any = None,
    store: Any = None,
    index: Any = None,
    allow_writes: bool = False,
    token: str | None = None,
    assistant_id: str = "agent",
    limits: StudioLimits | None = None,
) -> Any:
    """The studio over ``saver`` (a checkpoint saver).

    ``graph`` (compiled) enables the drawing, the API's runs and the page actions; it
    is rebound to ``saver`` and ``store``. ``index`` lists threads fast (see
    :func:`stategraph.studio._reading.thread_index_for`; default: through the saver).
    Nothing is written unless ``allow_writes``. ``token`` protects every request.
    ``limits`` bounds request bodies (16 MiB and 60 s by default); serve the app with
    :func:`stategraph.studio.serving.serve` (or ``uvicorn_config``) for the header
    deadline.
    """
    if graph is not None:
        update: dict[str, Any] = {"checkpointer": saver}
        if store is not None:
            update["store"] = store
        graph = graph.copy(**update)
    studio = Studio(
        saver=saver,
        index=index if index is not None else SaverThreadIndex(saver),
        graph=graph,
        store=store,
        allow_writes=allow_writes,
        token=token,
        assistant_id=assistant_id,
        limits=limits or StudioLimits(),
    )

    async def studio_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StudioError)
        if _wants_html(request):
            body = f'<h1>Error</h1><p class="error" id="error">{h(exc.message)}</p>'
            return HTMLResponse(page(studio, "Error", body), status_code=exc.status)
        return JSONResponse({"detail": exc.message}, status_code=exc.status)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return JSONResponse(
            {"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers
        )

    app = Starlette(
        routes=[
            *page_routes(),
            *action_routes(),
            *api_routes(),
            Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
        ],
        exception_handlers={StudioError: studio_error, HTTPException: http_error},
    )
    app.state.studio = studio
    app.add_middleware(SecurityMiddleware, studio=studio)
    app.add_middleware(LimitsMiddleware, limits=studio.limits)  # outermost: sizes first
    return app
