"""Command line: ``python -m bench [--quick] [--only NAME] [--repeat N] [--json out.json]``.

``python -m bench overhead|scaling|floor|rss|storage|import|all [--lib langgraph --python
PATH]`` runs issue 23's instruments side by side (:mod:`bench.sidebyside`).

``python -m bench --instructions [--workload NAME]`` counts instructions instead.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from bench import sidebyside
from bench.libs import LIBRARIES, available, load
from bench.runner import SAVERS, CaseResult, ImportCost, import_cost, run_case
from bench.sidebyside import INSTRUMENTS
from bench.workloads import FULL, QUICK, WORKLOADS, make_workloads

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description=(
            "Time stategraph (and LangGraph, when importable) on the same workloads, "
            "without a checkpointer, with InMemorySaver and with SqliteSaver."
        ),
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, for CI smoke runs")
    parser.add_argument(
        "--only",
        action="append",
        choices=WORKLOADS,
        metavar="NAME",
        help=f"run only this workload (repeatable): {', '.join(WORKLOADS)}",
    )
    parser.add_argument(
        "--saver",
        action="append",
        choices=SAVERS,
        help=f"run only with this checkpointer (repeatable): {', '.join(SAVERS)}",
    )
    parser.add_argument(
        "--lib",
        action="append",
        choices=LIBRARIES,
        help="benchmark only this library (repeatable); default: every importable one",
    )
    parser.add_argument(
        "--repeat", type=int, default=None, help="timed runs per case (default 5, quick 3)"
    )
    parser.add_argument("--json", metavar="PATH", help="also write every timing to this file")
    parser.add_argument(
        "--no-import-cost", action="store_true", help="skip the import-time measurement"
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help=(
            "instead of timing, count instructions per run and per step under valgrind "
            "(callgrind) on the workloads of LangGraph's own benchmark (bench/langgraph_suite.py)"
        ),
    )
    parser.add_argument(
        "--workload",
        action="append",
        metavar="NAME",
        help="with --instructions: measure only this workload (repeatable)",
    )
    return parser


def _fmt_ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _ratio(sg: float | None, lg: float | None) -> str:
    if sg is None or lg is None or sg <= 0:
        return "-"
    return f"{lg / sg:.2f}x"


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        cells = [
            c.ljust(w) if i < 2 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append(" | ".join(cells))
        if n == 0:
            lines.append("-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def _cell(case: CaseResult | None) -> str:
    if case is None:
        return "-"
    if case.error is not None:
        return "FAILED"
    return _fmt_ms(case.median_ms)


def _results_table(cases: list[CaseResult]) -> str:
    by_key = {(c.workload, c.saver, c.lib): c for c in cases}
    keys = list(dict.fromkeys((c.workload, c.size, c.saver) for c in cases))
    rows = [["workload", "saver", "stategraph ms", "langgraph ms", "ratio (lg/sg)"]]
    for workload, size, saver in keys:
        sg = by_key.get((workload, saver, "stategraph"))
        lg = by_key.get((workload, saver, "langgraph"))
        rows.append(
            [
                f"{workload} ({size})",
                saver,
                _cell(sg),
                _cell(lg),
                _ratio(sg.median_ms if sg else None, lg.median_ms if lg else None),
            ]
        )
    return _table(rows)


def _best_compile(cases: list[CaseResult], workload: str, lib: str) -> float | None:
    times = [c.compile_ms for c in cases if c.workload == workload and c.lib == lib]
    return min(times) if times else None


def _compile_table(cases: list[CaseResult]) -> str:
    rows = [["workload", "", "stategraph ms", "langgraph ms", "ratio (lg/sg)"]]
    for workload in dict.fromkeys(c.workload for c in cases):
        sg_ms = _best_compile(cases, workload, "stategraph")
        lg_ms = _best_compile(cases, workload, "langgraph")
        rows.append(
            [workload, "build+compile (best)", _fmt_ms(sg_ms), _fmt_ms(lg_ms), _ratio(sg_ms, lg_ms)]
        )
    return _table(rows)


def _import_table(costs: list[ImportCost]) -> str:
    by_stmt = {(c.lib, c.statement.replace(c.lib, "{lib}")): c for c in costs}
    rows = [["import", "", "stategraph ms", "langgraph ms", "ratio (lg/sg)"]]
    for template in dict.fromkeys(k[1] for k in by_stmt):
        sg = by_stmt.get(("stategraph", template))
        lg = by_stmt.get(("langgraph", template))
        sg_ms = sg.median_ms if sg else None
        lg_ms = lg.median_ms if lg else None
        rows.append([template, "", _fmt_ms(sg_ms), _fmt_ms(lg_ms), _ratio(sg_ms, lg_ms)])
    return _table(rows)


def _machine() -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
    }


def _instructions(args: argparse.Namespace) -> int:
    from bench.instructions import DEFAULT, report

    libs = args.lib or ["stategraph"]
    results: dict[str, list[dict[str, Any]]] = {}
    for name in libs:
        print(f"[{name}] instructions under callgrind")
        counts = report(args.workload or DEFAULT, name, args.repeat or 2)
        results[name] = [c.as_dict() for c in counts]
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"machine": _machine(), "instructions": results}, fh, indent=2)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite; return 0 if every case completed with a validated result.

    A first argument naming one of issue 23's instruments (``overhead``, ``scaling``,
    ``floor``, ``rss``, ``storage``, ``import`` or ``all``) runs that instrument side by
    side instead (:mod:`bench.sidebyside`).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in (*INSTRUMENTS, "all"):
        return sidebyside.main(argv)
    args = _parser().parse_args(argv)
    if args.instructions:
        return _instructions(args)
    sizes = QUICK if args.quick else FULL
    repeat = args.repeat if args.repeat is not None else (3 if args.quick else 5)
    if repeat < 1:
        print("--repeat must be at least 1", file=sys.stderr)
        return 2
    if args.lib:
        missing = [name for name in args.lib if not available(name)]
        if missing:
            print(f"Requested library not importable here: {', '.join(missing)}", file=sys.stderr)
            return 2
        lib_names = [name for name in LIBRARIES if name in args.lib]
    else:
        lib_names = [name for name in LIBRARIES if available(name)]
    libs = [load(name) for name in lib_names]
    savers = [s for s in SAVERS if not args.saver or s in args.saver]
    workloads = [w for w in make_workloads(sizes) if not args.only or w.name in args.only]

    machine = _machine()
    print(
        f"python {machine['python']} on {machine['platform']}, {machine['cpus']} cpus; "
        f"{'quick' if args.quick else 'full'} sizes, {repeat} timed runs per case "
        f"(median shown), libraries: {', '.join(lib_names)}",
        flush=True,
    )
    cases: list[CaseResult] = []
    with tempfile.TemporaryDirectory(prefix="stategraph-bench-") as tmpdir:
        for workload in workloads:
            for saver in savers:
                for lib in libs:
                    case = run_case(lib, workload, saver, repeat, tmpdir)
                    cases.append(case)
                    status = case.error or f"{_fmt_ms(case.median_ms)} ms"
                    print(f"  {workload.name:<11} {saver:<7} {lib.name:<11} {status}", flush=True)
    print()
    print(_results_table(cases))
    print()
    print(_compile_table(cases))
    costs: list[ImportCost] = []
    if not args.no_import_cost:
        costs = import_cost(lib_names)
        print()
        print(_import_table(costs))
    ok = all(case.validated and case.error is None for case in cases)
    if args.json:
        report = {
            "machine": machine,
            "quick": args.quick,
            "sizes": asdict(sizes),
            "repeat": repeat,
            "libraries": lib_names,
            "cases": [case.as_dict() for case in cases],
            "import_cost": [cost.as_dict() for cost in costs],
            "ok": ok,
        }
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2)
    if not ok:
        failed = [f"{c.workload}/{c.saver}/{c.lib}" for c in cases if c.error is not None]
        print(f"\nFAILED cases: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
