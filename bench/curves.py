"""Cost per step against the size of what a step does not touch.

Two curves, each printed as CPU time per step (median of several runs, ``process_time``)
and memory allocated per step (``tracemalloc``, net of what the run frees):

* **idle channels**: two nodes take turns for a fixed number of steps in a graph that
  also has ``N`` idle nodes (each with its own trigger channel, never written), for
  N = 10, 100, 1000. A step's cost should not depend on N. (State keys are not made
  idle here: every node receives the whole state, as in LangGraph, so reading the
  state's keys is part of the work of a step.)
* **history length**: the same two nodes run for S = 10, 1000, 10000 steps with
  ``InMemorySaver``; a step's cost should not depend on how many checkpoints the thread
  already has.

    python -m bench.curves [--saver none|memory] [--durability exit|async|sync]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc
from collections.abc import Sequence
from typing import Any

__all__ = ["history_curve", "idle_curve", "main"]


def _graph(idle: int, steps: int, saver: Any) -> Any:
    from typing import TypedDict

    from stategraph.graph import END, START, StateGraph

    class State(TypedDict):
        count: int

    def ping(state: Any) -> dict[str, int]:
        return {"count": state["count"] + 1}

    def pong(state: Any) -> dict[str, int]:
        return {"count": state["count"] + 1}

    def route(state: Any) -> str:
        return END if state["count"] >= steps else "pong"

    builder = StateGraph(State)
    builder.add_node("ping", ping)
    builder.add_node("pong", pong)
    for i in range(idle):
        builder.add_node(f"idle_{i}", ping)
        builder.add_edge(f"idle_{i}", END)
    builder.add_edge(START, "ping")
    builder.add_conditional_edges("ping", route, ["pong", END, *(f"idle_{i}" for i in range(idle))])
    builder.add_edge("pong", "ping")
    return builder.compile(checkpointer=saver)


def _measure(
    idle: int, steps: int, saver_kind: str, durability: str, runs: int
) -> tuple[float, float]:
    """(microseconds per step, bytes allocated and kept per step)."""
    from stategraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver() if saver_kind == "memory" else None
    graph = _graph(idle, steps, saver)
    kwargs = {"durability": durability} if saver is not None else {}
    times: list[float] = []
    for n in range(runs + 1):
        config = {"recursion_limit": 10 * steps + 10, "configurable": {"thread_id": f"t{n}"}}
        gc.collect()
        start = time.process_time()
        out = graph.invoke({"count": 0}, config, **kwargs)
        elapsed = time.process_time() - start
        assert out["count"] >= steps, out
        if n:
            times.append(elapsed)
    config = {"recursion_limit": 10 * steps + 10, "configurable": {"thread_id": "mem"}}
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    graph.invoke({"count": 0}, config, **kwargs)
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return statistics.median(times) / steps * 1e6, kept / steps


def idle_curve(
    saver: str, durability: str, runs: int = 5, steps: int = 200
) -> list[dict[str, Any]]:
    """Per-step cost for 10, 100 and 1000 idle nodes."""
    rows = []
    for idle in (10, 100, 1000):
        us, mem = _measure(idle, steps, saver, durability, runs)
        rows.append({"idle": idle, "steps": steps, "us_per_step": us, "bytes_per_step": mem})
    return rows


def history_curve(durability: str, runs: int = 3) -> list[dict[str, Any]]:
    """Per-step cost for runs of 10, 1000 and 10000 steps with ``InMemorySaver``."""
    rows = []
    for steps in (10, 1000, 10000):
        us, mem = _measure(10, steps, "memory", durability, runs if steps < 10000 else 1)
        rows.append({"steps": steps, "us_per_step": us, "bytes_per_step": mem})
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Print both curves."""
    parser = argparse.ArgumentParser(prog="python -m bench.curves")
    parser.add_argument("--saver", choices=("none", "memory"), default="memory")
    parser.add_argument("--durability", choices=("exit", "async", "sync"), default="exit")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"idle nodes (saver={args.saver}, durability={args.durability}, 200 steps)")
    for row in idle_curve(args.saver, args.durability, args.runs):
        print(
            f"  N={row['idle']:>5}: {row['us_per_step']:8.1f} us/step "
            f"{row['bytes_per_step']:10.0f} B kept/step"
        )
    print(f"history length (InMemorySaver, durability={args.durability})")
    for row in history_curve(args.durability, max(1, args.runs // 2)):
        print(
            f"  S={row['steps']:>6}: {row['us_per_step']:8.1f} us/step "
            f"{row['bytes_per_step']:10.0f} B kept/step"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
