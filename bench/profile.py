"""Profile one workload on stategraph: ``python -m bench.profile NAME [SAVER] [--quick]``.

Runs the workload (after one warm-up run) under :mod:`cProfile` and prints the
functions with the most own time, then those with the most cumulative time, keeping
only stategraph's own code unless ``--all`` is given.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import tempfile
from collections.abc import Sequence

from bench.libs import LIBRARIES, load
from bench.runner import SAVERS
from bench.workloads import FULL, QUICK, WORKLOADS, make_workloads

__all__ = ["main", "profile_workload"]


def profile_workload(
    name: str,
    saver: str = "none",
    *,
    quick: bool = False,
    lib_name: str = "stategraph",
    durability: str | None = None,
) -> pstats.Stats:
    """Run workload ``name`` once with a ``saver`` checkpointer under cProfile.

    cProfile sees only the calling thread: with the default (async) durability the
    saver's work runs on a background thread, and shows up as time spent in whatever
    call released the GIL. ``durability="sync"`` keeps the saver on the profiled thread.
    """
    kwargs = {} if durability is None else {"durability": durability}
    lib = load(lib_name)
    workload = next(w for w in make_workloads(QUICK if quick else FULL) if w.name == name)
    profiler = cProfile.Profile()
    with tempfile.TemporaryDirectory(prefix="stategraph-profile-") as tmpdir:
        path = os.path.join(tmpdir, "profile.sqlite")
        with lib.saver(saver, path) as checkpointer:
            graph = workload.build(lib, checkpointer)
            graph.invoke(workload.make_input(lib), workload.config("warm-up"), **kwargs)
            config = workload.config("profiled")
            payload = workload.make_input(lib)
            profiler.enable()
            result = graph.invoke(payload, config, **kwargs)
            profiler.disable()
            workload.validate(result)
    return pstats.Stats(profiler)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the hotspots of one workload run."""
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__)
    parser.add_argument("workload", choices=WORKLOADS)
    parser.add_argument("saver", nargs="?", default="none", choices=SAVERS)
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--lib", default="stategraph", choices=LIBRARIES)
    parser.add_argument(
        "--durability",
        choices=("sync", "async", "exit"),
        help="pass durability= to invoke; 'sync' puts the saver's work on the profiled thread",
    )
    parser.add_argument("--top", type=int, default=25, help="rows per listing")
    parser.add_argument("--all", action="store_true", help="do not filter to stategraph code")
    args = parser.parse_args(argv)
    stats = profile_workload(
        args.workload, args.saver, quick=args.quick, lib_name=args.lib, durability=args.durability
    )
    restriction: tuple[str | int, ...] = (args.top,) if args.all else ("stategraph", args.top)
    for order in ("tottime", "cumulative"):
        out = io.StringIO()
        stats.stream = out  # type: ignore[attr-defined]
        stats.sort_stats(order).print_stats(*restriction)
        print(f"=== sorted by {order} ===")
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
