"""Import time of what the first ``compile()`` loads, net of the interpreter's start.

    python -m bench.importtime --lib stategraph [--repeat 15] [--json OUT]

Net time: the wall time of ``python -c "import LIB.pregel, LIB.graph"`` minus that of
``python -c pass``, run alternately ``repeat`` times each in fresh processes (median,
and the difference of the minima); and the same difference in CPU time of the child
(user + system, ``RUSAGE_CHILDREN``), which a loaded machine inflates far less than
wall time (wall figures on a machine with more runnable processes than cores are
mostly waiting). Also ``-X importtime``:
the cumulative microseconds of the top-level ``LIB`` imports, and the modules with the
largest self time (where an import-time change pays), and how many modules the import
loads. Issue 23's goal 5: at most 60 ms net for stategraph.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["main", "measure", "parse_importtime", "statement"]


def statement(lib: str) -> str:
    """The import the first ``compile()`` of ``lib`` needs."""
    return f"import {lib}.pregel, {lib}.graph"


# The children may write and read bytecode caches even when this shell says not to
# (PYTHONDONTWRITEBYTECODE): an installed library imports from its .pyc files, and a
# checkout measured without them would be charged for compiling its sources each time.
_CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(cmd: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one child process running ``cmd``."""
    c0, start = _children_cpu(), time.perf_counter()
    subprocess.run(
        cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_CHILD_ENV
    )
    return time.perf_counter() - start, _children_cpu() - c0


def parse_importtime(stderr: str, lib: str) -> tuple[int, list[tuple[str, int, int]]]:
    """From ``-X importtime`` output: (cumulative us of top-level ``lib`` imports, rows).

    Rows are ``(module, self us, cumulative us)`` of every line. A line is
    ``import time: SELF | CUMULATIVE | <indent>module``; one space follows the bar and
    two more per level of nesting, so only unindented ``lib`` lines count in the total.
    """
    total = 0
    rows: list[tuple[str, int, int]] = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or line.count("|") < 2:
            continue
        self_us, cum_us, name = line[len("import time:") :].split("|", 2)
        try:
            own, cum = int(self_us.strip()), int(cum_us.strip())
        except ValueError:  # the header line
            continue
        module = name[1:]
        rows.append((module.strip(), own, cum))
        if not module.startswith(" ") and (module == lib or module.startswith(lib + ".")):
            total += cum
    return total, rows


def measure(lib: str, python: str = sys.executable, repeat: int = 15) -> dict[str, Any]:
    """Net wall time, ``-X importtime`` figures and module count of the import."""
    stmt = statement(lib)
    bare_cmd, imp_cmd = [python, "-c", "pass"], [python, "-c", stmt]
    _run(imp_cmd)  # write .pyc files, warm the file cache
    bare, full, bare_cpu, full_cpu = [], [], [], []
    for _ in range(repeat):
        wall, cpu = _run(bare_cmd)
        bare.append(wall)
        bare_cpu.append(cpu)
        wall, cpu = _run(imp_cmd)
        full.append(wall)
        full_cpu.append(cpu)
    cumulative, top = [], []
    for _ in range(max(3, repeat // 3)):
        proc = subprocess.run(
            [python, "-X", "importtime", "-c", stmt],
            check=True,
            capture_output=True,
            text=True,
            env=_CHILD_ENV,
        )
        total, rows = parse_importtime(proc.stderr, lib)
        cumulative.append(total)
        top = rows
    count = subprocess.run(
        [
            python,
            "-c",
            f"import sys; n = set(sys.modules); {stmt}; print(len(set(sys.modules) - n))",
        ],
        check=True,
        capture_output=True,
        text=True,
        env=_CHILD_ENV,
    )
    return {
        "lib": lib,
        "statement": stmt,
        "repeat": repeat,
        "net_median_ms": (statistics.median(full) - statistics.median(bare)) * 1e3,
        "net_min_ms": (min(full) - min(bare)) * 1e3,
        "net_cpu_median_ms": (statistics.median(full_cpu) - statistics.median(bare_cpu)) * 1e3,
        "startup_median_ms": statistics.median(bare) * 1e3,
        "importtime_cumulative_ms": statistics.median(cumulative) / 1e3,
        "modules": int(count.stdout.strip()),
        "top_self_us": sorted(((m, s) for m, s, _ in top), key=lambda r: -r[1])[:25],
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Print one library's import time; write it as JSON if asked."""
    parser = argparse.ArgumentParser(prog="python -m bench.importtime", description=__doc__)
    parser.add_argument("--lib", default="stategraph")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    result = measure(args.lib, repeat=args.repeat)
    print(
        f"{result['statement']}: net {result['net_median_ms']:.1f} ms median wall, "
        f"{result['net_cpu_median_ms']:.1f} ms CPU "
        f"({result['net_min_ms']:.1f} ms between minima), -X importtime "
        f"{result['importtime_cumulative_ms']:.1f} ms, {result['modules']} modules"
    )
    for module, own in result["top_self_us"][:12]:
        print(f"  {own / 1e3:6.2f} ms self  {module}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
