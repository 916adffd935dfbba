"""Timing: run one workload on one library with one saver, and measure import cost."""

from __future__ import annotations

import gc
import os
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.libs import Lib
from bench.workloads import Workload

__all__ = ["SAVERS", "CaseResult", "ImportCost", "import_cost", "run_case"]

SAVERS = ("none", "memory", "sqlite")
"""Checkpointer kinds every workload runs with."""


@dataclass
class CaseResult:
    """Timings of one (workload, saver, library) case."""

    workload: str
    size: str
    saver: str
    lib: str
    times_ms: list[float] = field(default_factory=list)
    """Wall time of each timed ``invoke``, in milliseconds."""
    compile_ms: float = 0.0
    """Wall time of building and compiling the graph."""
    validated: bool = False
    """True once every run (warm-up and timed) produced the expected state."""
    error: str | None = None
    """``"ExceptionType: message"`` if the case failed."""

    @property
    def median_ms(self) -> float | None:
        """Median of :attr:`times_ms`, or None if the case did not complete."""
        if self.error is not None or not self.times_ms:
            return None
        return statistics.median(self.times_ms)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "workload": self.workload,
            "size": self.size,
            "saver": self.saver,
            "lib": self.lib,
            "median_ms": self.median_ms,
            "times_ms": self.times_ms,
            "compile_ms": self.compile_ms,
            "validated": self.validated,
            "error": self.error,
        }


def _run_once(
    graph: Any, workload: Workload, lib: Lib, thread_id: str, checkpointed: bool
) -> float:
    payload = workload.make_input(lib)
    config = workload.config(thread_id)
    gc.collect()
    start = time.perf_counter()
    result = graph.invoke(payload, config)
    elapsed = time.perf_counter() - start
    workload.validate(result)
    if checkpointed:
        workload.validate(graph.get_state(config).values)
    return elapsed * 1000.0


def run_case(lib: Lib, workload: Workload, saver: str, repeat: int, tmpdir: str) -> CaseResult:
    """Build ``workload`` for ``lib`` with a ``saver`` checkpointer and time ``repeat`` runs.

    One untimed warm-up run comes first. Each run uses a fresh thread id, and every
    result is validated (plus the checkpointed state, when there is a checkpointer)
    outside the timed region. Failures are recorded in the result, not raised.
    """
    case = CaseResult(workload.name, workload.size, saver, lib.name)
    path = os.path.join(tmpdir, f"{lib.name}-{workload.name}.sqlite")
    try:
        with lib.saver(saver, path) as checkpointer:
            start = time.perf_counter()
            graph = workload.build(lib, checkpointer)
            case.compile_ms = (time.perf_counter() - start) * 1000.0
            checkpointed = checkpointer is not None
            _run_once(graph, workload, lib, "warm-up", checkpointed)
            for i in range(repeat):
                case.times_ms.append(_run_once(graph, workload, lib, f"run-{i}", checkpointed))
        case.validated = True
    except Exception as exc:
        case.error = f"{type(exc).__name__}: {exc}"
        traceback.print_exc(file=sys.stderr)
    return case


@dataclass
class ImportCost:
    """Median extra wall time of a Python process that runs ``statement``."""

    lib: str
    statement: str
    median_ms: float
    """Median of the runs minus the median of ``python -c pass``."""
    times_ms: list[float]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "lib": self.lib,
            "statement": self.statement,
            "median_ms": self.median_ms,
            "times_ms": self.times_ms,
        }


def _time_process(statement: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", statement], check=True)
    return (time.perf_counter() - start) * 1000.0


def import_cost(libs: Sequence[str], runs: int = 7) -> list[ImportCost]:
    """Time ``import <lib>.graph`` and ``from <lib>.graph import StateGraph`` per library.

    ``import stategraph.graph`` loads its builder lazily, so the second statement (which
    really loads ``StateGraph``) is the fair comparison. Runs are interleaved with the
    ``python -c pass`` baseline so machine drift affects all statements alike.
    """
    statements = [
        (lib, stmt)
        for lib in libs
        for stmt in (f"import {lib}.graph", f"from {lib}.graph import StateGraph")
    ]
    baseline: list[float] = []
    samples: dict[str, list[float]] = {stmt: [] for _, stmt in statements}
    for _ in range(runs):
        baseline.append(_time_process("pass"))
        for _, stmt in statements:
            samples[stmt].append(_time_process(stmt))
    base = statistics.median(baseline)
    return [
        ImportCost(lib, stmt, statistics.median(samples[stmt]) - base, samples[stmt])
        for lib, stmt in statements
    ]
