"""Peak memory of one workload, stage by stage, against the size of its state.

    python -m bench.rss --lib stategraph [--workload react_agent_100x_checkpoint] [--json OUT]

The method of ``../shared/langgraph-bench/rss_react.py``, in a fresh process: the peak
resident set (``VmHWM``) after the harness's own imports, after importing ``LIB.graph``,
after building the graph and after the first run. "Above harness" is the peak after the
run minus the peak of the harness alone (issue 23's goal 3 compares it with twice the
state payload plus 3 MB). The payload is the deep ``getsizeof`` of the final
``messages`` (of the whole final state, for a workload without one); the saver's bytes are the serialized values its in-memory tables hold.
Run it with ``python -m bench.rss`` (never imported into a process that did other work:
the high-water mark is the process's whole life).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import sys
from collections.abc import Sequence
from typing import Any

from bench import langgraph_suite as W
from bench.harness import consume_sync, drop_threads

__all__ = ["deep_size", "goal_mb", "main", "measure", "vm_mb"]

DEFAULT_WORKLOAD = "react_agent_100x_checkpoint"


def vm_mb() -> dict[str, float]:
    """``VmHWM`` (peak) and ``VmRSS`` of this process, in MiB (Linux ``/proc``)."""
    out: dict[str, float] = {}
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(("VmHWM", "VmRSS")):
                out[line.split()[0][:-1]] = int(line.split()[1]) / 1024
    return out


def deep_size(obj: Any, seen: set[int] | None = None) -> int:
    """``sys.getsizeof`` of ``obj`` and everything it holds, each object counted once."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    if isinstance(obj, dict):
        size += sum(deep_size(k, seen) + deep_size(v, seen) for k, v in obj.items())
    elif isinstance(obj, (list, tuple, set, frozenset)):
        size += sum(deep_size(x, seen) for x in obj)
    elif hasattr(obj, "__dict__"):
        size += deep_size(vars(obj), seen)
    elif hasattr(obj, "__slots__"):
        size += sum(deep_size(getattr(obj, a, None), seen) for a in obj.__slots__)
    return size


def _saver_bytes(saver: Any) -> int:
    total = 0

    def walk(obj: Any) -> None:
        nonlocal total
        if isinstance(obj, (bytes, bytearray, memoryview)):
            total += len(obj)
        elif isinstance(obj, dict):
            for v in obj.values():
                walk(v)
        elif isinstance(obj, (list, tuple)):
            for v in obj:
                walk(v)

    for attr in ("storage", "blobs", "writes", "items", "_storage", "_blobs", "_writes"):
        found = getattr(saver, attr, None)
        if found is not None:
            walk(found)
    return total


def goal_mb(payload_mb: float) -> float:
    """Issue 23's goal 3: peak above the harness at most twice the payload plus 3 MB."""
    return 2 * payload_mb + 3


def measure(lib: str, name: str = DEFAULT_WORKLOAD) -> dict[str, Any]:
    """Peak RSS stage by stage of one run of ``name`` (call it first thing in a process)."""
    stages: dict[str, float] = {"harness": vm_mb()["VmHWM"]}
    importlib.import_module(f"{lib}.graph")
    stages["import"] = vm_mb()["VmHWM"]
    before = set(sys.modules)
    graph, data, config = W.build(name, lib)
    stages["build"] = vm_mb()["VmHWM"]
    kwargs = W.stream_kwargs(name)
    cfg = W.fresh_config(config)
    consume_sync(graph, data, cfg, kwargs)
    stages["run"] = vm_mb()["VmHWM"]
    lazy = len(set(sys.modules) - before)
    if graph.checkpointer is not None:
        values = graph.get_state(cfg).values
    else:  # no saved state to read: the output of one more run (after the peak is taken)
        values = graph.invoke(data, W.fresh_config(config))
    messages = values.get("messages", values)
    payload = deep_size(messages) / 2**20
    saver_mb = _saver_bytes(graph.checkpointer) / 2**20 if graph.checkpointer else 0.0
    del messages, values
    drop_threads(graph, [cfg])
    gc.collect()
    for _ in range(2):
        cfg = W.fresh_config(config)
        consume_sync(graph, data, cfg, kwargs)
        drop_threads(graph, [cfg])
    stages["runs 2-3"] = vm_mb()["VmHWM"]
    above = stages["run"] - stages["harness"]
    return {
        "lib": lib,
        "workload": name,
        "hwm_mb": stages,
        "above_harness_mb": above,
        "payload_mb": payload,
        "goal_mb": goal_mb(payload),
        "saver_mb": saver_mb,
        "modules_imported_lazily": lazy,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Print the stages of one library's peak memory; write them as JSON if asked."""
    parser = argparse.ArgumentParser(prog="python -m bench.rss", description=__doc__)
    parser.add_argument("--lib", default="stategraph")
    parser.add_argument("--workload", default=DEFAULT_WORKLOAD)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    result = measure(args.lib, args.workload)
    for stage, mb in result["hwm_mb"].items():
        print(f"{args.lib} {stage:<10} HWM {mb:7.1f} MB")
    print(
        f"{args.lib} {args.workload}: {result['above_harness_mb']:.1f} MB above the harness, "
        f"payload {result['payload_mb']:.2f} MB (goal <= {result['goal_mb']:.1f}), "
        f"saver holds {result['saver_mb']:.2f} MB, "
        f"{result['modules_imported_lazily']} modules imported while building and running"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
