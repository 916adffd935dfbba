"""Instructions per run and per step, counted by ``valgrind --tool=callgrind``.

Wall time is noisy on a shared machine; the number of instructions a run executes is
not (the same count for the same run, whatever else the machine does). For each
workload of :mod:`bench.langgraph_suite` two child processes run under callgrind: both
build the graph and warm it up with one run, then one does ``1`` more run and the other
``1 + runs``. The difference of their totals divided by ``runs`` is the cost of one run
(building, importing and warming up cancel out); divided by the run's step count it is
the cost of one step. A step here is one node update chunk of ``graph.stream`` (one per
task that ran in the top graph), which for a chain of nodes is one super-step.

    python -m bench --instructions [--workload NAME ...] [--runs 2] [--lib stategraph]
    python -m bench.instructions NAME [NAME ...]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT", "Count", "count", "main"]

DEFAULT = (
    "sequential_10",
    "sequential_1000",
    "sequential_1000_checkpoint",
    "fanout_to_subgraph_100x",
    "fanout_to_subgraph_100x_checkpoint",
    "wide_state_25x300",
    "wide_dict_25x300",
    "pydantic_state_25x300",
    "react_agent_100x",
    "react_agent_100x_checkpoint",
    "sequential_1000_async",
    "fanout_to_subgraph_100x_async",
    "fanout_to_subgraph_100x_checkpoint_async",
)
"""The workloads measured when none is named (the sqlite ones are left out: their cost
is mostly the database, outside the Python process' instruction count)."""

_ROOT = Path(__file__).resolve().parents[1]
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


@dataclass
class Count:
    """Instruction counts of one workload on one library."""

    workload: str
    lib: str
    per_run: int
    steps: int

    @property
    def per_step(self) -> float:
        """Instructions per step (per node update chunk)."""
        return self.per_run / self.steps if self.steps else float(self.per_run)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form, with the per-step figure."""
        return {**asdict(self), "per_step": self.per_step}


def _split(name: str) -> tuple[str, bool]:
    if name.endswith("_async"):
        return name[: -len("_async")], True
    return name, False


def _child(name: str, lib: str, runs: int) -> None:
    """Build ``name``, run it once to warm up, then ``runs`` times; print the chunks."""
    from bench import langgraph_suite as suite

    base, aio = _split(name)
    graph, inp, config = suite.build(base, lib, aio=aio)
    kwargs = suite.stream_kwargs(base)

    def once() -> int:
        cfg = suite.fresh_config(config)
        if aio:

            async def consume() -> int:
                return len([c async for c in graph.astream(inp, cfg, **kwargs)])

            return asyncio.run(consume())
        return len(list(graph.stream(inp, cfg, **kwargs)))

    # A full collection after the warm-up and after each run: otherwise the cyclic
    # collector fires at different points in the 1-run and the (1 + N)-run child, and
    # for workloads that build large objects the difference of the two totals can be
    # off by a whole collection (even below zero). What exists after the warm-up
    # (modules, the compiled graph) is frozen first, so each run's collection walks
    # only what that run left, not the whole heap (~10M instructions with pydantic).
    chunks = once()
    gc.collect()
    gc.freeze()
    for _ in range(runs):
        chunks = once()
        gc.collect()
    print(json.dumps({"chunks": chunks}))


def _measure(name: str, lib: str, runs: int, python: str) -> tuple[int, int]:
    cmd = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        python,
        "-m",
        "bench.instructions",
        "--child",
        name,
        "--lib",
        lib,
        "--runs",
        str(runs),
    ]
    # a fixed hash seed: the same run executes the same instructions
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.run(cmd, cwd=_ROOT, env=env, capture_output=True, text=True, check=False)
    found = _COLLECTED.findall(proc.stderr)
    if proc.returncode != 0 or not found:
        raise RuntimeError(f"{name} on {lib} failed under callgrind:\n{proc.stderr[-2000:]}")
    chunks = json.loads(proc.stdout.strip().splitlines()[-1])["chunks"]
    return int(found[-1]), int(chunks)


def count(name: str, lib: str = "stategraph", runs: int = 2, python: str | None = None) -> Count:
    """Instructions of one run of ``name`` on ``lib`` (difference of two callgrind runs)."""
    if shutil.which("valgrind") is None:
        raise RuntimeError("valgrind is not installed: apt-get install valgrind")
    exe = python or sys.executable
    low, steps = _measure(name, lib, 1, exe)
    high, _ = _measure(name, lib, 1 + runs, exe)
    return Count(name, lib, max(0, (high - low) // runs), steps)


def report(names: Sequence[str], lib: str, runs: int, python: str | None = None) -> list[Count]:
    """Count every workload of ``names``, printing a table row as each one ends."""
    counts: list[Count] = []
    print(f"{'workload':<42} {'instructions/run':>17} {'steps':>6} {'per step':>12}", flush=True)
    for name in names:
        c = count(name, lib, runs, python)
        counts.append(c)
        print(f"{name:<42} {c.per_run:>17,} {c.steps:>6} {c.per_step:>12,.0f}", flush=True)
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bench.instructions [NAME ...]``: print instruction counts."""
    parser = argparse.ArgumentParser(prog="python -m bench.instructions")
    parser.add_argument("names", nargs="*", help=f"workloads (default: {', '.join(DEFAULT)})")
    parser.add_argument("--lib", default="stategraph")
    parser.add_argument("--runs", type=int, default=2, help="extra runs counted (default 2)")
    parser.add_argument("--python", help="interpreter of the measured library")
    parser.add_argument("--json", metavar="PATH", help="also write the counts here")
    parser.add_argument("--child", metavar="NAME", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child, args.lib, args.runs)
        return 0
    counts = report(args.names or DEFAULT, args.lib, args.runs, args.python)
    if args.json:
        Path(args.json).write_text(json.dumps([c.as_dict() for c in counts], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
