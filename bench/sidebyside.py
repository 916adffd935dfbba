"""``python -m bench overhead|scaling|floor|rss|storage|import|all``: issue 23's instruments.

Each instrument runs in a fresh child process per library: ours with this interpreter,
LangGraph's (``--lib langgraph``) with ``--python PATH`` (a venv with ``langgraph``,
``langgraph-checkpoint-sqlite`` and ``pydantic``; defaults to this interpreter). The
children write JSON; this module puts the two sides in one table with the ratios and
the issue's goals. ``--save DIR`` keeps every side's JSON; ``--load DIR`` prints the
tables again from a saved run without measuring.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "INSTRUMENTS",
    "import_table",
    "main",
    "overhead_table",
    "ratio",
    "rss_table",
    "scaling_table",
    "storage_table",
]

ROOT = Path(__file__).resolve().parents[1]

INSTRUMENTS = {
    "overhead": "bench.overhead",
    "scaling": "bench.scaling",
    "floor": "bench.floor",
    "rss": "bench.rss",
    "storage": "bench.storage",
    "import": "bench.importtime",
}
"""Sub-command -> the module run in each library's child process."""

ALL = ("import", "rss", "floor", "scaling", "storage", "overhead")
"""What ``python -m bench all`` runs, shortest first."""

OVERHEAD_GOAL = 10.0
CHAIN_GOAL_US, KEYS_GOAL_US, KEYS_WIDTH_GOAL, HISTORY_GOAL = 7.0, 35.0, 3.0, 1.5
STORAGE_GOAL_MB = 2.9
IMPORT_GOAL_MS = 60.0


def ratio(theirs: float | None, ours: float | None) -> float | None:
    """LangGraph's figure over ours (> 1: we are cheaper); ``None`` if either is missing."""
    if theirs is None or ours is None or ours <= 0:
        return None
    return theirs / ours


def _f(value: float | None, fmt: str = "{:,.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}x"


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        lines.append(
            " | ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if n == 0:
            lines.append("-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def _ok(met: bool | None) -> str:
    return "-" if met is None else ("yes" if met else "NO")


def overhead_table(ours: dict[str, Any], theirs: dict[str, Any] | None) -> str:
    """Per workload: each side's total, node code and overhead (ms CPU/run), and the ratio."""
    rows = [
        ["workload", "LG overhead", "ours total", "ours node", "ours overhead", "ratio", ">=10x"]
    ]
    for name, row in ours["workloads"].items():
        lg = (theirs or {}).get("workloads", {}).get(name, {})
        lg_over = lg.get("overhead_ms")
        our_over = row.get("overhead_ms")
        r = ratio(lg_over, our_over)
        rows.append(
            [
                name,
                _f(lg_over),
                _f(row.get("total_cpu_ms")),
                _f(row.get("node_cpu_ms")),
                _f(our_over) if "error" not in row else "ERROR",
                _x(r),
                _ok(None if r is None else r >= OVERHEAD_GOAL),
            ]
        )
    sqlite = {
        side: next((w.get("sqlite") for w in d["workloads"].values() if w.get("sqlite")), None)
        for side, d in (("ours", ours), ("LG", theirs or {"workloads": {}}))
    }
    note = f"SQLite settings: ours {sqlite['ours']}; LG {sqlite['LG']}"
    return _table(rows) + "\n" + note


def scaling_table(
    ours: dict[str, Any], theirs: dict[str, Any] | None, floor: dict[str, Any] | None
) -> str:
    """us CPU per step for each curve, both sides, the floor, and issue 23's goals."""
    rows = [["curve", "LG us/step", "ours us/step", "floor us/step", "ours/floor", "LG/ours"]]
    curves = (
        ("chain", "chain N="),
        ("keys", "keys K="),
        ("history", "history S="),
        ("async_chain", "async chain N="),
    )
    for curve, label in curves:
        for size, value in ours.get(curve, {}).items():
            lg = (theirs or {}).get(curve, {}).get(size)
            # the async chain is compared with the same (synchronous) hand-written loop
            fl = (floor or {}).get("chain" if curve == "async_chain" else curve, {}).get(size)
            rows.append(
                [
                    f"{label}{size}",
                    _f(lg),
                    _f(value),
                    _f(fl),
                    _x(ratio(value, fl)),
                    _x(ratio(lg, value)),
                ]
            )
    checks = scaling_goals(ours)
    text = "\n".join(f"  {name}: {_f(value)} ({_ok(met)})" for name, (value, met) in checks.items())
    return _table(rows) + "\nGoals (issue 23, goal 2):\n" + text


def scaling_goals(ours: dict[str, Any]) -> dict[str, tuple[float | None, bool | None]]:
    """Goal 2's four checks on our curves: name -> (value, met)."""
    chain = ours.get("chain", {}).get("1000")
    k10, k1000 = ours.get("keys", {}).get("10"), ours.get("keys", {}).get("1000")
    h10, h1000 = ours.get("history", {}).get("10"), ours.get("history", {}).get("1000")
    width = ratio(k1000, k10)
    history = ratio(h1000, h10)

    def check(value: float | None, limit: float) -> tuple[float | None, bool | None]:
        return value, None if value is None else value <= limit

    return {
        f"chain N=1000 us/step <= {CHAIN_GOAL_US}": check(chain, CHAIN_GOAL_US),
        f"keys K=1000 us/step <= {KEYS_GOAL_US}": check(k1000, KEYS_GOAL_US),
        f"keys K=1000 / K=10 <= {KEYS_WIDTH_GOAL}": check(width, KEYS_WIDTH_GOAL),
        f"history S=1000 / S=10 <= {HISTORY_GOAL}": check(history, HISTORY_GOAL),
    }


def rss_table(ours: dict[str, Any], theirs: dict[str, Any] | None) -> str:
    """Peak RSS above the harness, payload and goal 3, both sides."""
    rows = [
        ["library", "harness MB", "peak MB", "above harness MB", "payload MB", "goal MB", "met"]
    ]
    for side, data in (("langgraph", theirs), ("stategraph", ours)):
        if not data:
            continue
        above = data["above_harness_mb"]
        rows.append(
            [
                f"{side} {data['workload']}",
                _f(data["hwm_mb"]["harness"], "{:.1f}"),
                _f(data["hwm_mb"]["run"], "{:.1f}"),
                _f(above, "{:.1f}"),
                _f(data["payload_mb"]),
                _f(data["goal_mb"], "{:.1f}"),
                _ok(above <= data["goal_mb"]) if side == "stategraph" else "",
            ]
        )
    return _table(rows)


def storage_table(ours: dict[str, Any], theirs: dict[str, Any] | None) -> str:
    """Size on disk of the chat, bytes per turn, checkpoints per turn, settings."""
    rows = [["library", "turns", "MB on disk", "B/turn", "ckpt/turn", "CPU ms/turn", "sqlite"]]
    for side, data in (("langgraph", theirs), ("stategraph", ours)):
        if not data:
            continue
        rows.append(
            [
                side,
                str(data["turns"]),
                _f(data["total_mb"]),
                _f(data["bytes_per_turn"], "{:,.0f}"),
                _f(data["checkpoints_per_turn"], "{:.1f}"),
                _f(data["cpu_ms_per_turn"]),
                str(data["sqlite"]),
            ]
        )
    goal = STORAGE_GOAL_MB * ours["turns"] / 1000
    return _table(rows) + f"\nGoal 4: <= {goal:.2f} MB: {_ok(ours['total_mb'] <= goal)}"


def import_table(ours: dict[str, Any], theirs: dict[str, Any] | None) -> str:
    """Net import time (child CPU and wall), -X importtime and module count, both sides."""
    rows = [
        [
            "library",
            "statement",
            "net CPU ms",
            "net wall ms (median)",
            "net wall ms (minima)",
            "-X importtime ms",
            "modules",
        ]
    ]
    for side, data in (("langgraph", theirs), ("stategraph", ours)):
        if not data:
            continue
        rows.append(
            [
                side,
                data["statement"],
                _f(data.get("net_cpu_median_ms"), "{:.1f}"),
                _f(data["net_median_ms"], "{:.1f}"),
                _f(data["net_min_ms"], "{:.1f}"),
                _f(data["importtime_cumulative_ms"], "{:.1f}"),
                str(data["modules"]),
            ]
        )
    met = ours["net_median_ms"] <= IMPORT_GOAL_MS
    met_cpu = ours.get("net_cpu_median_ms", float("inf")) <= IMPORT_GOAL_MS
    goal = f"Goal 5: ours <= {IMPORT_GOAL_MS:.0f} ms net: wall {_ok(met)}, CPU {_ok(met_cpu)}"
    return _table(rows) + "\n" + goal


def _run_child(
    module: str, lib: str, python: str, extra: Sequence[str], out: Path
) -> dict[str, Any] | None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    cmd = [python, "-m", module, *([] if module == "bench.floor" else ["--lib", lib]), *extra]
    cmd += ["--json", str(out)]
    print(f"$ {' '.join(cmd)}", file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=sys.stderr)
    if proc.returncode != 0 or not out.exists():
        print(f"{module} for {lib} failed (exit {proc.returncode})", file=sys.stderr)
        return None
    return json.loads(out.read_text(encoding="utf-8"))


def _render(name: str, results: dict[str, dict[str, Any] | None]) -> str:
    ours, theirs = results.get("stategraph"), results.get("langgraph")
    if name == "floor":
        floor = results.get("floor") or {}
        return "\n".join(
            f"floor {c} {k}: {v:.2f} us/step" for c, d in floor.items() for k, v in d.items()
        )
    if ours is None:
        return f"{name}: no result for stategraph"
    renderers: dict[str, Callable[..., str]] = {
        "overhead": overhead_table,
        "rss": rss_table,
        "storage": storage_table,
        "import": import_table,
    }
    if name == "scaling":
        return scaling_table(ours, theirs, results.get("floor"))
    return renderers[name](ours, theirs)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("instrument", choices=[*INSTRUMENTS, "all"])
    parser.add_argument(
        "--lib",
        action="append",
        choices=("stategraph", "langgraph"),
        help="libraries to measure (stategraph always; add langgraph for the ratios)",
    )
    parser.add_argument("--python", help="interpreter of LangGraph's venv (for --lib langgraph)")
    parser.add_argument("--save", metavar="DIR", help="keep each side's JSON in DIR")
    parser.add_argument("--load", metavar="DIR", help="print the tables of a saved run")
    parser.add_argument("--workloads", help="overhead: comma-separated workload names")
    parser.add_argument("--rounds", type=int, help="overhead: round-robin rounds (default 10)")
    parser.add_argument(
        "--sqlite-synchronous",
        choices=("native", "off", "normal", "full", "extra"),
        help="overhead, storage: PRAGMA synchronous for both sides (default: each saver's own)",
    )
    parser.add_argument("--turns", type=int, help="storage: chat turns (default 1000)")
    parser.add_argument("--repeat", type=int, help="import: subprocess pairs (default 15)")
    parser.add_argument("--min-time", type=float, help="scaling: CPU seconds per figure")
    parser.add_argument("--chain", help="scaling: chain sizes (default 10,100,1000,10000)")
    parser.add_argument("--keys", help="scaling: state widths (default 10,100,1000)")
    parser.add_argument("--history", help="scaling: run lengths (default 10,100,1000)")
    parser.add_argument(
        "--async-chain", help="scaling: also ainvoke on chains of async nodes (sizes, e.g. 1000)"
    )
    return parser


def _extra(name: str, args: argparse.Namespace) -> list[str]:
    extra: list[str] = []
    options = {
        "overhead": (("--workloads", args.workloads), ("--rounds", args.rounds)),
        "storage": (("--turns", args.turns),),
        "floor": (("--chain", args.chain), ("--keys", args.keys)),
        "import": (("--repeat", args.repeat),),
        "scaling": (
            ("--min-time", args.min_time),
            ("--chain", args.chain),
            ("--keys", args.keys),
            ("--history", args.history),
            ("--async-chain", args.async_chain),
        ),
    }
    if name in ("overhead", "storage") and args.sqlite_synchronous:
        extra += ["--sqlite-synchronous", args.sqlite_synchronous]
    for flag, value in options.get(name, ()):
        if value is not None:
            extra += [flag, str(value)]
    return extra


def main(argv: Sequence[str]) -> int:
    """Run one instrument (or all) on each library and print the side-by-side table."""
    args = _parser().parse_args(argv)
    with_lg = args.load is not None or (args.lib is not None and "langgraph" in args.lib)
    libs = ["stategraph"] + (["langgraph"] if with_lg else [])
    names = list(ALL) if args.instrument == "all" else [args.instrument]
    if args.instrument == "scaling":
        names = ["floor", "scaling"]
    python = {"stategraph": sys.executable, "langgraph": args.python or sys.executable}
    with tempfile.TemporaryDirectory(prefix="bench-side-") as tmp:
        folder = Path(args.load or args.save or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for name in names:
            results: dict[str, dict[str, Any] | None] = {}
            sides = ["floor"] if name == "floor" else libs
            for lib in sides:
                out = folder / f"{name}-{lib}.json"
                if args.load:
                    results[lib] = json.loads(out.read_text()) if out.exists() else None
                    continue
                results[lib] = _run_child(
                    INSTRUMENTS[name], lib, python.get(lib, sys.executable), _extra(name, args), out
                )
            if name == "scaling":
                floor_file = folder / "floor-floor.json"
                results["floor"] = (
                    json.loads(floor_file.read_text()) if floor_file.exists() else None
                )
            print(f"\n== {name} ==")
            print(_render(name, results), flush=True)
    return 0
