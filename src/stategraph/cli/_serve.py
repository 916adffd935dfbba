"""``stategraph serve``: the LangGraph-Server-compatible agent server (``server`` extra)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from stategraph.cli._errors import EXIT_OK, EXIT_USAGE, CliError, missing_extra

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run", "add_common_arguments", "server_config"]


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """The options ``serve`` and ``worker`` share: graphs, config and storage."""
    parser.add_argument(
        "graphs",
        nargs="*",
        metavar="MODULE:GRAPH",
        help="graphs to serve (module:attr, file.py:attr, or id=module:attr); "
        "default: the graphs of ./langgraph.json",
    )
    parser.add_argument(
        "--config", metavar="FILE", help="a langgraph.json (default ./langgraph.json)"
    )
    parser.add_argument(
        "--data-dir",
        default=os.environ.get("STATEGRAPH_DATA_DIR", ".stategraph"),
        metavar="DIR",
        help="where the embedded SQLite files live (created; default .stategraph)",
    )
    parser.add_argument(
        "--postgres",
        default=os.environ.get("STATEGRAPH_POSTGRES"),
        metavar="DSN",
        help="keep everything in PostgreSQL instead (default: $STATEGRAPH_POSTGRES)",
    )
    parser.add_argument(
        "--lease-seconds",
        type=float,
        default=10.0,
        help="how long a run's claim lives without a heartbeat (default 10)",
    )


def server_config(args: argparse.Namespace) -> Any:
    """The server config from ``--config`` / ``./langgraph.json`` / graph arguments."""
    from stategraph.server._config import ConfigError, config_from_specs, load_config

    try:
        if args.graphs and args.config:
            raise ConfigError("Give graphs on the command line or --config, not both.")
        if args.graphs:
            return config_from_specs(list(args.graphs))
        return load_config(args.config or "langgraph.json")
    except ConfigError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc


HELP = "serve graphs over LangGraph Server's HTTP API (SDKs, RemoteGraph, studio UI)"

DESCRIPTION = (
    "Serve graphs over LangGraph Server's HTTP API: assistants, threads, runs on a "
    "durable queue, crons, webhooks, the store. Embedded on SQLite files by default; "
    "--postgres for production with `stategraph worker` processes."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``stategraph serve``."""
    add_common_arguments(parser)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=2024, help="port (default 2024)")
    parser.add_argument(
        "--token",
        default=os.environ.get("STATEGRAPH_SERVER_TOKEN"),
        help="API token (required off loopback unless langgraph.json has auth; "
        "default: $STATEGRAPH_SERVER_TOKEN)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=10,
        help="runs executed at a time inside this process (0: API only; use "
        "`stategraph worker` processes) (default 10)",
    )
    parser.add_argument("--run-timeout", type=float, default=None, help="seconds a run may take")
    parser.add_argument("--no-ui", action="store_true", help="do not serve the studio UI")
    parser.add_argument(
        "--ui",
        metavar="DIR",
        default=None,
        help="also serve a built web page (e.g. a React app on LangGraph's useStream) from "
        "DIR under /app/, on the API's own origin",
    )
    parser.add_argument(
        "--allow-studio-writes",
        action="store_true",
        help="let the studio UI answer interrupts and edit state",
    )


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    try:
        import uvicorn

        from stategraph.server._app import ServeOptions, create_app, load_auth
        from stategraph.server._graphs import GraphRegistry
    except ImportError as exc:
        raise missing_extra("The server needs its extra", "server", exc) from exc
    from stategraph.cli._studio import is_loopback
    from stategraph.server._config import ConfigError

    config = server_config(args)
    if not is_loopback(args.host) and not args.token and not config.auth_path:
        raise CliError(
            f"Binding to {args.host} exposes the server beyond this machine: give --token "
            "(or STATEGRAPH_SERVER_TOKEN), or configure auth in langgraph.json.",
            EXIT_USAGE,
        )
    if args.workers < 0:
        raise CliError(f"--workers must be >= 0, got {args.workers}.", EXIT_USAGE)
    try:
        config.apply_environment()
        GraphRegistry(config.graphs, config.base_dir, None, None)  # import errors now, not later
        load_auth(config)
    except ConfigError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    ui_dir = None
    if args.ui is not None:
        from stategraph.server._ui_files import UiFolderError, check_ui_dir

        try:
            ui_dir = check_ui_dir(args.ui)
        except UiFolderError as exc:
            raise CliError(str(exc), EXIT_USAGE) from exc
    host = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    options = ServeOptions(
        data_dir=Path(args.data_dir),
        postgres=args.postgres,
        api_url=f"http://{host}:{args.port}",
        token=args.token,
        workers=args.workers,
        lease_seconds=args.lease_seconds,
        run_timeout=args.run_timeout,
        studio=not args.no_ui,
        studio_writes=args.allow_studio_writes,
        ui_dir=ui_dir,
    )
    app = create_app(config, options)
    where = "PostgreSQL" if args.postgres else f"{Path(args.data_dir).resolve()}"
    print(
        f"stategraph serve: {', '.join(config.graphs)} on http://{host}:{args.port} "
        f"(storage: {where})",
        flush=True,
    )
    if ui_dir is not None:
        print(
            f"stategraph serve: the page in {ui_dir} on http://{host}:{args.port}/app/", flush=True
        )
    uvicorn.run(
        app, host=args.host, port=args.port, log_level="warning", timeout_graceful_shutdown=15
    )
    return EXIT_OK
