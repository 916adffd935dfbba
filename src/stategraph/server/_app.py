"""Building the server's ASGI application and running its background parts.

The application's lifespan opens the storage, loads the graphs, creates each graph's
default assistant, and starts the background parts: the embedded worker (unless the
process is API-only), the cron scheduler, and the sweepers (thread TTL, old stream
events). The studio UI (``/``, ``/ui/...``) is served by the same process, and so is
a built web page given with ``--ui`` (under ``/app``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from stategraph.server._backends import open_storage
from stategraph.server._config import ServerConfig
from stategraph.server._context import ApiError, ServerContext
from stategraph.server._crons import CronScheduler
from stategraph.server._graphs import GraphRegistry
from stategraph.server._records import events
from stategraph.server._routes import assistants, crons, meta, runs, store, threads
from stategraph.server._routes._table import RouteTable, route_list
from stategraph.server._security import AuthMiddleware
from stategraph.server._streams import RunStreams
from stategraph.server._webhooks import Webhooks
from stategraph.server._worker import Worker

__all__ = ["ServeOptions", "create_app", "running_context", "load_auth", "sweep_once"]

log = logging.getLogger("stategraph.server")

Scope = MutableMapping[str, Any]
ASGI = Callable[[Scope, Any, Any], Awaitable[None]]


@dataclass
class ServeOptions:
    """How a server (or worker) process runs."""

    data_dir: str | Path = ".stategraph"
    postgres: str | None = None
    api_url: str = ""
    token: str | None = None
    workers: int = 10
    """Runs executed at a time by the embedded worker (0: API only, no embedded worker)."""
    lease_seconds: float = 10.0
    run_timeout: float | None = None
    studio: bool = True
    studio_writes: bool = False
    crons: bool = True
    sweep_every: float = 60.0
    keep_events: float = 3600.0
    """Seconds the stream events of finished runs are kept (for join_stream)."""
    ui_dir: str | Path | None = None
    """A built web page's folder, served under ``/app`` (``--ui``; see ``_ui_files``)."""


def load_auth(config: ServerConfig) -> Any:
    """The ``Auth`` object ``auth.path`` names (``None`` without one); a
    :class:`~stategraph.server._config.ConfigError` saying what to fix otherwise."""
    if not config.auth_path:
        return None
    from stategraph.server._config import ConfigError
    from stategraph.server._graphs import _import_target
    from stategraph.server.auth import Auth

    target, _, attr = config.auth_path.rpartition(":")
    if not target or not attr:
        raise ConfigError(f"auth.path {config.auth_path!r} must be 'file.py:attribute'.")
    module = _import_target(target, config.base_dir, "auth")
    obj = getattr(module, attr, None)
    if isinstance(obj, Auth):
        return obj
    if type(obj).__module__.startswith("langgraph_sdk"):
        raise ConfigError(
            f"auth.path {config.auth_path!r} is LangGraph's Auth: stategraph serve runs its "
            "own, with the same decorators. Change the import to "
            "`from stategraph.server.auth import Auth`."
        )
    raise ConfigError(
        f"auth.path {config.auth_path!r} names a {type(obj).__name__}, not an Auth: create "
        "it with `from stategraph.server.auth import Auth; auth = Auth()`."
    )


@contextlib.asynccontextmanager
async def running_context(
    config: ServerConfig, options: ServeOptions, *, worker: bool = True, scheduler: bool = True
) -> AsyncIterator[ServerContext]:
    """Open everything a process needs and run its background parts until exit."""
    config.apply_environment()
    store_ttl = None
    if config.store_ttl is not None and config.store_ttl.default_ttl is not None:
        store_ttl = {
            "default_ttl": config.store_ttl.default_ttl,
            "refresh_on_read": config.store_ttl.refresh_on_read,
        }
    async with open_storage(
        data_dir=options.data_dir, postgres=options.postgres, store_ttl=store_ttl
    ) as storage:
        registry = GraphRegistry(config.graphs, config.base_dir, storage.saver, storage.store)
        streams = RunStreams(storage.records)
        ctx = ServerContext(
            config=config,
            storage=storage,
            graphs=registry,
            streams=streams,
            api_url=options.api_url,
            lease_seconds=options.lease_seconds,
            run_timeout=options.run_timeout,
            auth=load_auth(config),
            webhooks=Webhooks(config.webhooks, options.api_url),
        )
        await ctx.ensure_graph_assistants()
        store_sweeper = await _start_store_sweeper(storage.store, config)
        background: list[asyncio.Task[None]] = []
        the_worker = None
        if worker and options.workers > 0:
            the_worker = Worker(ctx, concurrency=options.workers)
            the_worker.start()
            ctx.extra["worker"] = the_worker
        cron_scheduler = None
        if scheduler and options.crons:
            cron_scheduler = CronScheduler(ctx)
            cron_scheduler.start()
            background.append(asyncio.ensure_future(_sweep(ctx, options)))
        try:
            yield ctx
        finally:
            for task in background:
                task.cancel()
            if cron_scheduler is not None:
                await cron_scheduler.stop()
            if the_worker is not None:
                await the_worker.stop()
            await streams.aclose()
            await ctx.webhooks.aclose()
            if store_sweeper:
                stopped = storage.store.stop_ttl_sweeper()
                if asyncio.iscoroutine(stopped):
                    await stopped


async def _start_store_sweeper(store: Any, config: ServerConfig) -> bool:
    """Start the store's ttl sweeper when ``store.ttl`` asks for expiry."""
    ttl = config.store_ttl
    if ttl is None or ttl.default_ttl is None:
        return False
    started = store.start_ttl_sweeper(ttl.sweep_interval_minutes)
    if asyncio.iscoroutine(started):
        await started
    return True


async def sweep_once(ctx: ServerContext, keep_events: float, now: float | None = None) -> int:
    """Delete the threads whose ttl ran out (with their runs and checkpoints) and the
    stream events older than ``keep_events`` seconds; returns how many threads went."""
    from stategraph.server._ops import delete_thread
    from stategraph.server._records import threads

    now = time.time() if now is None else now
    gone = 0
    for thread_id in await ctx.records.read(threads.expired(now)):
        gone += await delete_thread(ctx, thread_id)
    await ctx.records.run(events.purge(now - keep_events))
    return gone


async def _sweep(ctx: ServerContext, options: ServeOptions) -> None:
    """:func:`sweep_once` now and then."""
    every = options.sweep_every
    ttl = ctx.config.thread_ttl
    if ttl is not None:
        every = min(every, ttl.sweep_interval_minutes * 60)
    while True:
        await asyncio.sleep(every)
        try:
            await sweep_once(ctx, options.keep_events)
        except Exception:
            log.exception("sweeper failed")


def _studio_app(ctx: ServerContext, options: ServeOptions) -> Any:
    try:
        from stategraph.studio.app import create_app as studio_app
    except ImportError:
        return None
    graph = None
    for graph_id in ctx.graphs.ids:
        graph = ctx.graphs.static(graph_id)
        if graph is not None:
            break
    return studio_app(
        ctx.storage.saver,
        graph=graph,
        store=ctx.storage.store,
        allow_writes=options.studio_writes,
        token=options.token,
        assistant_id=ctx.graphs.ids[0],
    )


def _is_studio_path(path: str) -> bool:
    return path == "/" or path.startswith(("/ui/", "/static/", "/studio/"))


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return JSONResponse({"detail": exc.message}, status_code=exc.status)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    return JSONResponse({"detail": exc.detail}, status_code=exc.status_code)


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.exception("%s %s failed", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"detail": f"Internal error: {type(exc).__name__}: {exc}"}, status_code=500)


async def _auth_error(request: Request, exc: Exception) -> Response:
    from stategraph.server.auth import HTTPException

    assert isinstance(exc, HTTPException)
    return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)


def create_app(config: ServerConfig, options: ServeOptions | None = None) -> ASGI:
    """The ASGI application of ``stategraph serve`` (storage opens in its lifespan)."""
    from stategraph.server.auth import HTTPException

    opts = options or ServeOptions()
    state: dict[str, Any] = {}
    page = None
    if opts.ui_dir is not None:
        from stategraph.server._ui_files import is_ui_path, ui_app

        page = ui_app(opts.ui_dir)  # a wrong folder fails now, not at the first request

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with running_context(config, opts) as ctx:
            app.state.ctx = ctx
            if opts.studio and "ui" not in config.disabled:
                state["studio"] = _studio_app(ctx, opts)
            yield

    groups: dict[str, tuple[RouteTable, ...]] = {
        "meta": (meta.ROUTES,),
        "assistants": (assistants.ROUTES,),
        "threads": (threads.ROUTES,),
        "runs": (crons.ROUTES, runs.ROUTES),
        "store": (store.ROUTES,),
    }
    served = [t for name, tables in groups.items() if name not in config.disabled for t in tables]
    api = Starlette(
        routes=route_list(*served),
        lifespan=lifespan,
        exception_handlers={
            ApiError: _api_error,
            StarletteHTTPException: _http_error,
            HTTPException: _auth_error,
            Exception: _unexpected,
        },
    )
    if config.cors:
        from starlette.middleware.cors import CORSMiddleware

        api.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.cors.get("allow_origins") or []),
            allow_origin_regex=config.cors.get("allow_origin_regex"),
            allow_methods=list(config.cors.get("allow_methods") or ["*"]),
            allow_headers=list(config.cors.get("allow_headers") or ["*"]),
            allow_credentials=bool(config.cors.get("allow_credentials", False)),
            expose_headers=list(config.cors.get("expose_headers") or []),
            max_age=int(config.cors.get("max_age", 600)),
        )
    guarded = AuthMiddleware(api, token=opts.token, auth=None)

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            studio = state.get("studio")
            if studio is not None and _is_studio_path(scope["path"]):
                await studio(scope, receive, send)
                return
            if page is not None and is_ui_path(scope["path"]):
                await page(scope, receive, send)
                return
            ctx = getattr(api.state, "ctx", None)
            guarded.auth = None if ctx is None else ctx.auth
        await guarded(scope, receive, send)

    app.api = api  # type: ignore[attr-defined]
    return app
