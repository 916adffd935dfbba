"""The floor of a super-step: a hand-written Pregel loop over plain dicts.

    python -m bench.floor [--json OUT]

What ``../shared/langgraph-bench/floor.py`` measures, and the same loop: apply writes
(with reducers), bump versions, pick the triggered nodes, run them on a snapshot of the
values, emit one ``{node: update}`` chunk per task. No checkpoint, no threads, no
validation. The per-step figures of ``bench.scaling`` are compared with these: the
chain of N no-op nodes, and a chain of 10 nodes over K keys each writing one key.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bench.scaling import CHAIN_SIZES, CHAIN_STEPS, KEY_SIZES, best_cpu

__all__ = ["chain", "keys", "main", "measure", "pregel"]

Node = tuple[Callable[[dict], Any], tuple[str, ...], Any, tuple[str, ...]]


def pregel(
    nodes: Mapping[str, Node],
    subs: Mapping[str, tuple[str, ...]],
    reducers: Mapping[str, Callable[[Any, Any], Any]],
    values: Mapping[str, Any],
    inp: Mapping[str, Any],
    limit: int = 10**9,
) -> list[dict[str, Any]]:
    """Run the plain-dict loop; return its chunks.

    ``nodes``: name -> (fn, triggers, router or None, static successors); ``subs``:
    channel -> the nodes it triggers; ``values``: initial channel values.
    """
    vals = dict(values)
    versions = dict.fromkeys(vals, 0)
    seen: dict[str, dict[str, int]] = {n: {} for n in nodes}
    for ch, v in inp.items():
        r = reducers.get(ch)
        vals[ch] = r(vals[ch], v) if r else v
    updated = set(inp) | {"start:"}
    versions["start:"] = 1
    chunks: list[dict[str, Any]] = []
    step = 0
    while updated and step < limit:
        triggered: list[str] = []
        for ch in updated:
            for n in subs.get(ch, ()):
                s = seen[n]
                if versions[ch] > s.get(ch, 0) and n not in triggered:
                    trig = nodes[n][1]
                    if len(trig) <= 1 or all(versions.get(t, 0) > s.get(t, 0) for t in trig):
                        triggered.append(n)
        if not triggered:
            break
        snapshot = dict(vals)
        writes = []
        for n in triggered:
            fn, trig, router, succ = nodes[n]
            s = seen[n]
            for t in trig:
                s[t] = versions.get(t, 0)
            writes.append((n, fn(snapshot), router, succ))
        updated = set()
        for n, out, _router, _succ in writes:
            if out:
                for k, v in out.items():
                    r = reducers.get(k)
                    vals[k] = r(vals[k], v) if r else v
                    updated.add(k)
            chunks.append({n: out})
        for n, _out, router, succ in writes:
            if router is not None:
                dest = router(dict(vals))
                if dest != "__end__":
                    updated.add(f"branch:{n}->{dest}")
            for d in succ:
                updated.add(f"branch:{n}->{d}")
        for ch in updated:
            versions[ch] = versions.get(ch, 0) + 1
        step += 1
    return chunks


def _noop(_state: Any) -> None:
    return None


def chain(
    n: int, fns: Sequence[Callable[[dict], Any]] | None = None
) -> tuple[dict[str, Node], dict[str, tuple[str, ...]]]:
    """Nodes and subscriptions of a chain of ``n`` nodes (``fns[i]`` or a no-op each)."""
    nodes: dict[str, Node] = {}
    subs: dict[str, tuple[str, ...]] = {}
    prev = "start:"
    for i in range(n):
        name = f"n{i}"
        succ = (f"n{i + 1}",) if i + 1 < n else ()
        nodes[name] = (fns[i] if fns else _noop, (prev,), None, succ)
        subs[prev] = (name,)
        prev = f"branch:{name}->n{i + 1}"
    return nodes, subs


def _writer(i: int) -> Callable[[dict], dict[str, int]]:
    return lambda _s: {f"k{i}": i}


def keys(k: int) -> tuple[dict[str, Node], dict[str, tuple[str, ...]], dict[str, Any]]:
    """A chain of 10 nodes over ``k`` last-value keys, node i writing key ``k{i}``."""
    fns = [_writer(i) for i in range(10)]
    nodes, subs = chain(10, fns)
    return nodes, subs, {f"k{i}": None for i in range(k)}


def measure(
    chain_sizes: Sequence[int] = CHAIN_SIZES,
    key_sizes: Sequence[int] = KEY_SIZES,
    log: Callable[[str], None] = lambda _msg: None,
) -> dict[str, dict[str, float]]:
    """Microseconds of CPU per step of the floor: ``{"chain": {N: us}, "keys": {K: us}}``."""
    out: dict[str, dict[str, float]] = {"chain": {}, "keys": {}}
    for n in chain_sizes:
        nodes, subs = chain(n)
        steps = min(n, CHAIN_STEPS)
        cpu = best_cpu(
            functools.partial(pregel, nodes, subs, {}, {"messages": []}, {"messages": []}, steps),
            reps=7,
            min_time=0.3,
        )
        out["chain"][str(n)] = cpu / steps * 1e6
        log(f"floor chain N={n}: {out['chain'][str(n)]:.2f} us/step")
    for k in key_sizes:
        knodes, ksubs, kvals = keys(k)
        cpu = best_cpu(
            functools.partial(pregel, knodes, ksubs, {}, kvals, {"k0": 0}), reps=7, min_time=0.3
        )
        out["keys"][str(k)] = cpu / 10 * 1e6
        log(f"floor keys K={k}: {out['keys'][str(k)]:.2f} us/step")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Print the floor's per-step figures; write them as JSON if asked."""
    parser = argparse.ArgumentParser(prog="python -m bench.floor", description=__doc__)
    parser.add_argument("--chain", default=",".join(map(str, CHAIN_SIZES)))
    parser.add_argument("--keys", default=",".join(map(str, KEY_SIZES)))
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    result = measure(
        [int(x) for x in args.chain.split(",") if x],
        [int(x) for x in args.keys.split(",") if x],
        log=lambda m: print(m, flush=True),
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
