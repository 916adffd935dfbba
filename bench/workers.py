"""Runs per second of the worker-process recipe with 1, 2 and 4 workers.

    python -m bench.workers [--dsn postgresql://...] [--jobs 120] [--threads 24] [--repeat 3]
        [--leases on,off]

Runs ``examples/lease_workers.py``'s ``demo`` (a fresh PostgreSQL schema, a queue of
jobs over many threads, N worker processes, every run leased, every thread checked
exact afterwards) for each worker count and prints the median runs/s. The workload is
mixed: a two-step reply, a fan-out of four ``Send`` tasks and a step with ~10 ms of
CPU work, in turn. ``--leases on,off`` also runs the workers without database leases
(the in-process fallback; the queue keeps one job per thread running), interleaved, to
read what leases cost on the same machine at the same time. Wall-clock numbers: on a
shared machine, repeat and read medians.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "lease_workers.py"


def _recipe() -> Any:
    spec = importlib.util.spec_from_file_location("lease_workers_recipe", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--jobs", type=int, default=120)
    parser.add_argument("--threads", type=int, default=24)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--leases", default="on", help="on, off or on,off")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    recipe = _recipe()
    modes = args.leases.split(",")
    for mode in modes:
        if mode not in ("on", "off"):
            parser.error(f"--leases takes on, off or on,off; got {mode!r}")
    results: dict[tuple[str, int], list[float]] = {}
    counts = [int(n) for n in args.workers.split(",")]
    for _ in range(args.repeat):
        for n in counts:  # interleaved, so machine load spreads over every setting
            for mode in modes:
                summary = recipe.demo(args.dsn, n, args.jobs, args.threads, mode == "on")
                results.setdefault((mode, n), []).append(summary["runs_per_s"])
    print(f"{'leases':>6} {'workers':>8} {'runs/s (median)':>16}  samples")
    for mode in modes:
        for n in counts:
            samples = results[(mode, n)]
            print(f"{mode:>6} {n:>8} {statistics.median(samples):>16.1f}  {samples}")
    if args.json:
        Path(args.json).write_text(json.dumps({f"{m}:{n}": v for (m, n), v in results.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
