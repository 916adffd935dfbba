"""``stategraph worker``: a process that executes queued runs (``server`` extra).

Start any number of them beside ``stategraph serve --workers 0`` (the API); they share
the run queue in PostgreSQL (``--postgres``), or in the data directory on one machine.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from pathlib import Path
from typing import Any

from stategraph.cli._errors import EXIT_OK, EXIT_USAGE, CliError, missing_extra
from stategraph.cli._serve import add_common_arguments, server_config

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run"]

HELP = "execute queued runs for `stategraph serve` (scale out)"

DESCRIPTION = (
    "Claim runs from the server's durable queue and execute them. A worker that "
    "dies loses nothing: its runs go to another worker and continue from their "
    "last checkpoint."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``stategraph worker``."""
    add_common_arguments(parser)
    parser.add_argument(
        "--concurrency", type=int, default=10, help="runs executed at a time (default 10)"
    )
    parser.add_argument(
        "--grace",
        type=float,
        default=10.0,
        help="seconds running runs get on shutdown (default 10)",
    )


async def _work(config: Any, options: Any, grace: float) -> None:
    from stategraph.server._app import running_context

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - non-Unix
            pass
    async with running_context(config, options, worker=True, scheduler=True) as ctx:
        print(f"stategraph worker {ctx.extra['worker'].worker_id}: ready", flush=True)
        await stop.wait()
        await ctx.extra["worker"].stop(grace)


def run(args: argparse.Namespace) -> int:
    """Work until SIGINT/SIGTERM."""
    try:
        from stategraph.server._app import ServeOptions
    except ImportError as exc:
        raise missing_extra("The worker needs the server extra", "server", exc) from exc
    if args.concurrency < 1:
        raise CliError(f"--concurrency must be >= 1, got {args.concurrency}.", EXIT_USAGE)
    config = server_config(args)
    options = ServeOptions(
        data_dir=Path(args.data_dir),
        postgres=args.postgres,
        workers=args.concurrency,
        lease_seconds=args.lease_seconds,
        studio=False,
    )
    asyncio.run(_work(config, options, args.grace))
    return EXIT_OK
