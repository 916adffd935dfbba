"""Runtime overhead: CPU per run minus the CPU of the workload's own node and router code.

    python -m bench.overhead --lib stategraph [--workloads a,b] [--rounds 10] [--json OUT]

The method of ``../shared/langgraph-bench/overhead.py``. For each workload:

1. *node code*: the graph is built with every node and router wrapped; one run records
   each call ``(fn, input)``; the recorded calls are then replayed alone in a tight loop,
   keeping every output alive for the pass (the first-touch cost of the results the
   library would hold too), best of 15 samples of ~50 ms (``replay_keep_cpu_min_s``);
2. *total*: the unwrapped graph, sampled round-robin with the other workloads
   (:func:`bench.harness.time_workloads`), median CPU per run (``cpu_median_s``).

Overhead = total - node code. LangGraph's overhead divided by ours is the issue's ratio.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib
import inspect
import json
import statistics
import sys
import time
import types
from collections.abc import Sequence
from typing import Any

from bench import langgraph_suite as W
from bench.harness import SQLITE_SYNCHRONOUS, Timed, time_workloads

__all__ = ["DEFAULT_WORKLOADS", "main", "measure", "node_time", "overhead_ms"]

DEFAULT_WORKLOADS = (
    "sequential_10",
    "sequential_1000",
    "sequential_1000_checkpoint",
    "sequential_1000_sqlite",
    "fanout_to_subgraph_100x",
    "fanout_to_subgraph_100x_checkpoint",
    "wide_state_25x300",
    "wide_dict_25x300",
    "pydantic_state_25x300",
    "react_agent_100x",
    "react_agent_100x_checkpoint",
    "react_agent_100x_sqlite",
    "sequential_1000_async",
    "fanout_to_subgraph_100x_async",
)
"""The 14 workloads of issue 23's table."""


class _Recorder:
    """Wraps node and router functions; records their calls while ``on``."""

    def __init__(self) -> None:
        self.on = False
        self.calls: list[tuple[Any, Any]] = []

    def wrap(self, fn: Any) -> Any:
        if not isinstance(fn, (types.FunctionType, functools.partial)):
            return fn
        rec = self
        if inspect.iscoroutinefunction(fn):

            async def async_wrapper(state: Any) -> Any:
                if rec.on:
                    rec.calls.append((fn, state))
                return await fn(state)

            return functools.update_wrapper(async_wrapper, fn)

        def wrapper(state: Any) -> Any:
            if rec.on:
                rec.calls.append((fn, state))
            return fn(state)

        return functools.update_wrapper(wrapper, fn)


def _replay(calls: Sequence[tuple[Any, Any]], keep: list[Any] | None) -> None:
    for fn, arg in calls:
        out = fn(arg)
        if inspect.iscoroutine(out):
            try:
                out.send(None)
            except StopIteration as stop:
                out = stop.value
        if keep is not None:
            keep.append(out)


def _best_replay(calls: Sequence[tuple[Any, Any]], inner: int, samples: int, keep: bool) -> float:
    best = float("inf")
    for _ in range(samples):
        gc.collect()
        c0 = time.process_time()
        for _ in range(inner):
            kept: list[Any] | None = [] if keep else None
            _replay(calls, kept)
            del kept
        best = min(best, (time.process_time() - c0) / inner)
    return best


def node_time(lib: str, full_name: str, samples: int = 15) -> dict[str, Any]:
    """CPU of the node and router code of one run of ``full_name``, replayed alone."""
    graph_mod = importlib.import_module(f"{lib}.graph")
    builder = graph_mod.StateGraph
    rec = _Recorder()
    orig_add, orig_cond = builder.add_node, builder.add_conditional_edges

    def add_node(self: Any, node: Any, action: Any = None, **kw: Any) -> Any:
        return orig_add(self, node, rec.wrap(action) if action is not None else None, **kw)

    def add_cond(self: Any, source: Any, path: Any, *args: Any, **kw: Any) -> Any:
        return orig_cond(self, source, rec.wrap(path), *args, **kw)

    builder.add_node, builder.add_conditional_edges = add_node, add_cond
    try:
        timed = Timed(lib, full_name)
    finally:
        builder.add_node, builder.add_conditional_edges = orig_add, orig_cond
    try:
        rec.on = True
        timed.run_once(W.fresh_config(timed.config))
        rec.on = False
        calls = list(rec.calls)
        rec.calls.clear()
    finally:
        timed.close()
    c0 = time.process_time()
    _replay(calls, None)
    once = max(time.process_time() - c0, 1e-7)
    inner = min(2000, max(1, int(0.05 / once)))  # ~50 ms per sample
    return {
        "calls": len(calls),
        "replay_cpu_min_s": _best_replay(calls, inner, samples, keep=False),
        "replay_keep_cpu_min_s": _best_replay(calls, inner, samples, keep=True),
        "chunks": timed.chunks,
        "node_updates": timed.nodes,
    }


def overhead_ms(total_cpu_s: float, node_cpu_s: float) -> float:
    """Runtime overhead in ms: CPU per run minus the CPU of the node code."""
    return (total_cpu_s - node_cpu_s) * 1e3


def measure(
    lib: str,
    names: Sequence[str],
    rounds: int,
    sqlite_synchronous: str = "native",
    log: Any = None,
) -> dict[str, Any]:
    """Node time and total CPU of every workload; the overhead of each in ms."""
    say = log or (lambda _msg: None)
    out: dict[str, Any] = {
        "lib": lib,
        "rounds": rounds,
        "sqlite_synchronous": sqlite_synchronous,
        "workloads": {},
    }
    nodes: dict[str, dict[str, Any]] = {}
    for name in names:
        try:
            nodes[name] = node_time(lib, name)
        except Exception as exc:
            nodes[name] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
        say(f"[{lib}] node code {name}: {nodes[name].get('replay_keep_cpu_min_s', nodes[name])}")
    totals = time_workloads(lib, names, rounds, sqlite_synchronous=sqlite_synchronous, log=say)
    for name in names:
        node, total = nodes[name], totals[name]
        row: dict[str, Any] = {"node": node, "total": total}
        error = node.get("error") or total.get("error")
        if error:
            row["error"] = error
        else:
            row["total_cpu_ms"] = total["cpu_median_s"] * 1e3
            row["node_cpu_ms"] = node["replay_keep_cpu_min_s"] * 1e3
            row["overhead_ms"] = overhead_ms(total["cpu_median_s"], node["replay_keep_cpu_min_s"])
            row["spread_ms"] = (
                statistics.quantiles(total["cpu_times_s"], n=4)[2] * 1e3
                - statistics.quantiles(total["cpu_times_s"], n=4)[0] * 1e3
                if len(total["cpu_times_s"]) >= 2
                else 0.0
            )
            row["sqlite"] = total.get("sqlite")
        out["workloads"][name] = row
    return out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.overhead", description=__doc__)
    parser.add_argument("--lib", default="stategraph", help="stategraph or langgraph")
    parser.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS))
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--sqlite-synchronous", choices=SQLITE_SYNCHRONOUS, default="native")
    parser.add_argument("--json", metavar="PATH")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Measure one library; print one line per workload, write JSON if asked."""
    args = _parser().parse_args(argv)
    names = [n for n in args.workloads.split(",") if n]
    result = measure(
        args.lib,
        names,
        args.rounds,
        args.sqlite_synchronous,
        log=lambda m: print(m, file=sys.stderr, flush=True),
    )
    for name, row in result["workloads"].items():
        if "error" in row:
            print(f"{name:<38} ERROR {row['error']}")
        else:
            print(
                f"{name:<38} total {row['total_cpu_ms']:9.2f}  node {row['node_cpu_ms']:9.2f}"
                f"  overhead {row['overhead_ms']:9.2f} ms"
            )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    return 0 if all("error" not in r for r in result["workloads"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
