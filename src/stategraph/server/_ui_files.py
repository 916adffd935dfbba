"""Serving a built web page (``stategraph serve --ui DIR``) beside the API.

A single-page app built with Vite, webpack, ... (for instance one on LangGraph's
``useStream`` hook) is served from its build folder under :data:`UI_PATH`, so the page
and the API share one origin (no CORS). Unknown paths under it answer the folder's
``index.html``, so client-side routes survive a reload. The files are public: they
hold no data, and the page's API calls go through the server's auth as any client's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

__all__ = ["UI_PATH", "UiFolderError", "check_ui_dir", "is_ui_path", "ui_app"]

UI_PATH = "/app"
"""Where the page is served (build it with this base, e.g. Vite's ``base: "/app/"``)."""


class UiFolderError(ValueError):
    """``--ui`` names something that is not a built page's folder."""


def check_ui_dir(directory: str | Path) -> Path:
    """``directory`` resolved, once it is known to hold an ``index.html``; a
    :class:`UiFolderError` saying what to do otherwise."""
    folder = Path(directory).expanduser().resolve()
    if not folder.is_dir():
        raise UiFolderError(
            f"--ui {directory}: no such folder. Build the page first (e.g. `npm ci && npm "
            "run build` in examples/server/ui) and give its output folder (dist)."
        )
    if not (folder / "index.html").is_file():
        raise UiFolderError(
            f"--ui {directory}: the folder has no index.html. Give the build output folder "
            "(for Vite, dist), not the project folder."
        )
    return folder


class _PageFiles(StaticFiles):
    """Static files whose unknown page paths (no file extension) answer
    ``index.html``, so client-side routes survive a reload."""

    async def get_response(self, path: str, scope: Any) -> Response:
        try:
            return await super().get_response(path, scope)
        except HTTPException as exc:
            last = path.rsplit("/", 1)[-1]
            if exc.status_code != 404 or "." in last or scope["method"] not in ("GET", "HEAD"):
                raise  # a missing asset stays a 404
            return await super().get_response("index.html", scope)


def is_ui_path(path: str) -> bool:
    """Whether a request path belongs to the page (``/app`` and below)."""
    return path == UI_PATH or path.startswith(UI_PATH + "/")


def ui_app(directory: str | Path) -> Starlette:
    """The ASGI app serving the built page in ``directory`` under :data:`UI_PATH`
    (``/app`` redirects to ``/app/``)."""
    folder = check_ui_dir(directory)
    return Starlette(routes=[Mount(UI_PATH, app=_PageFiles(directory=folder, html=True))])
