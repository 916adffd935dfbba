"""``stategraph studio [module:graph]``: the local web inspector (the ``studio`` extra)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import time
from contextlib import ExitStack
from typing import Any

from stategraph.cli._errors import (
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    missing_extra,
)
from stategraph.cli._loading import load_graph
from stategraph.cli._numbers import whole_number
from stategraph.cli._savers import add_saver_arguments, open_checkpoint_saver
from stategraph.cli._stores import open_store

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run", "is_loopback", "open_store"]

HELP = "open the local web inspector on a checkpoint database"

DESCRIPTION = (
    "Serve a local web UI (and a LangGraph-Server-style API) over a checkpoint "
    "database: threads, timelines, state diffs, interrupts, the store. Read-only "
    "unless --allow-writes."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``stategraph studio``."""
    parser.add_argument(
        "graph", nargs="?", help="MODULE:ATTR of the graph (enables drawing, runs and actions)"
    )
    add_saver_arguments(parser)
    parser.add_argument(
        "--store",
        metavar="FILE|URL",
        help="a store to browse: a SqliteStore file or a PostgresStore postgresql:// URL",
    )
    parser.add_argument(
        "--allow-writes",
        action="store_true",
        help="allow answering interrupts, updating state, forking and runs",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=whole_number(1, 65535), default=2024, help="port (default 2024)"
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("STATEGRAPH_STUDIO_TOKEN"),
        help="access token (required off loopback; default: $STATEGRAPH_STUDIO_TOKEN)",
    )
    parser.add_argument(
        "--assistant-id",
        default="agent",
        help="the graph's assistant id in the API (default agent)",
    )
    limits = parser.add_argument_group("request limits")
    limits.add_argument(
        "--max-body-mib",
        type=whole_number(1, 4096),
        default=16,
        metavar="MIB",
        help="largest request body, in MiB (default 16; larger: 413)",
    )
    limits.add_argument(
        "--header-timeout",
        type=seconds,
        default=10.0,
        metavar="S",
        help="seconds a client has to send a request's headers (default 10)",
    )
    limits.add_argument(
        "--body-timeout",
        type=seconds,
        default=60.0,
        metavar="S",
        help="seconds a client has to send a request's body (default 60; later: 408)",
    )


def seconds(text: str) -> float:
    """A positive number of seconds (``argparse`` type)."""
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= 86400):
        raise argparse.ArgumentTypeError(f"expected seconds from 0 to 86400, got {text!r}")
    return value


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _saver(args: argparse.Namespace, stack: ExitStack) -> Any:
    """The checkpoint saver: read-only (the SQLite file opened read-only, a read-only
    PostgreSQL session) unless ``--allow-writes``; a database without stategraph's
    checkpoints is refused, never created."""
    return open_checkpoint_saver(
        stack, sqlite=args.sqlite, postgres=args.postgres, writable=args.allow_writes
    )


def run(args: argparse.Namespace) -> int:
    """Serve the studio until interrupted."""
    try:
        from stategraph.studio._reading import thread_index_for, warm
        from stategraph.studio.app import create_app
        from stategraph.studio.limits import StudioLimits
        from stategraph.studio.serving import serve
    except ImportError as exc:
        raise missing_extra("The studio needs its extra", "studio", exc) from exc
    token = args.token
    if not is_loopback(args.host) and not token:
        raise CliError(
            f"Binding to {args.host} exposes the studio beyond this machine: give --token "
            "(or STATEGRAPH_STUDIO_TOKEN).",
            EXIT_USAGE,
        )
    limits = StudioLimits(
        max_body_bytes=args.max_body_mib * 1024 * 1024,
        header_timeout=args.header_timeout,
        body_timeout=args.body_timeout,
    )
    graph = load_graph(args.graph) if args.graph else None
    with ExitStack() as stack:
        saver = _saver(args, stack)
        store = (
            open_store(args.store, stack, allow_writes=args.allow_writes) if args.store else None
        )
        index = thread_index_for(saver, sqlite=args.sqlite, postgres=args.postgres)
        stack.callback(index.close)
        started = time.perf_counter()
        count = warm(index)
        print(f"read {count} threads in {time.perf_counter() - started:.1f} s", flush=True)
        app = create_app(
            saver,
            graph=graph,
            store=store,
            index=index,
            allow_writes=args.allow_writes,
            token=token,
            assistant_id=args.assistant_id,
            limits=limits,
        )
        where = f"http://{args.host}:{args.port}/"
        print(f"stategraph studio on {where}" + (f"?token={token}" if token else ""), flush=True)
        if not args.allow_writes:
            print("read-only (start with --allow-writes to act on threads)", flush=True)
        serve(app, args.host, args.port, limits)
    return EXIT_OK
