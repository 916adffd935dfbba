"""Differential fuzzer: run random StateGraph programs on LangGraph and stategraph.

    /work/lgvenv/bin/python tools/differential/run.py --seeds 0:2000 [--shrink] [--out DIR]
    /work/lgvenv/bin/python tools/differential/run.py --show SEED      # source + diff of one seed

Each program runs in a LangGraph worker and a stategraph worker (separate processes).
Results are compared after canonicalization: first with lists sorted (a *value*
difference), then exactly (an *order* difference: same multiset, different order).
Differing seeds are shrunk (nodes, edges, options and features deleted while the same
kind of difference persists) and printed as standalone scripts.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare import FIXED, MASKS, compare, signature  # noqa: E402
from emit import standalone  # noqa: E402
from graphs import generate  # noqa: E402
from shrink import candidates  # noqa: E402

PY = "/work/lgvenv/bin/python"


class Worker:
    """A long-lived worker process for one library."""

    def __init__(self, lib: str) -> None:
        self.lib = lib
        env = dict(os.environ, PYTHONHASHSEED="0")
        self.proc = subprocess.Popen(
            [PY, str(HERE / "worker.py"), lib],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )

    def send(self, spec: dict) -> None:
        """Queue one spec."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(spec) + "\n")
        self.proc.stdin.flush()

    def recv(self) -> dict:
        """Read the result of the oldest queued spec."""
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.lib} worker died")
        return json.loads(line)

    def close(self) -> None:
        """Stop the worker."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


class Pair:
    """One LangGraph and one stategraph worker."""

    def __init__(self, masks: set[str] | None = None) -> None:
        self.masks = masks
        self.lg = Worker("langgraph")
        self.sg = Worker("stategraph")

    def run(self, spec: dict) -> tuple[dict, dict, list[dict]]:
        """Run ``spec`` on both and compare."""
        self.lg.send(spec)
        self.sg.send(spec)
        lg, sg = self.lg.recv(), self.sg.recv()
        return lg, sg, compare(lg, sg, spec, self.masks)

    def close(self) -> None:
        """Stop both workers."""
        self.lg.close()
        self.sg.close()


def shrink(pair: Pair, spec: dict, sig: tuple, budget: float = 60.0) -> dict:
    """Greedily delete parts of ``spec`` while a difference with ``sig`` persists."""
    deadline = time.monotonic() + budget
    best = copy.deepcopy(spec)
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for cand in candidates(best):
            if time.monotonic() > deadline:
                break
            try:
                _, _, diffs = pair.run(cand)
            except RuntimeError:
                pair.close()
                pair.__init__(pair.masks)  # type: ignore[misc]
                continue
            if any(signature(d) == sig for d in diffs) and reproducible(pair, cand, sig, 1):
                best = cand
                progress = True
                break
    return best


def reproducible(pair: Pair, spec: dict, sig: tuple, runs: int = 2) -> bool:
    """Whether a difference of kind ``sig`` shows up again in ``runs`` more runs."""
    for _ in range(runs):
        _, _, diffs = pair.run(spec)
        if not any(signature(d) == sig for d in diffs):
            return False
    return True


def _short(x: Any, limit: int = 700) -> str:
    s = json.dumps(x, sort_keys=True)
    return s if len(s) <= limit else s[:limit] + "..."


def report(spec: dict, diffs: list[dict], out: Path | None) -> None:
    """Print (and save) a reproduction."""
    d = diffs[0]
    print(f"--- seed {spec['seed']}: {d['where']} ({d['kind']})")
    print(f"    langgraph : {_short(d['lg'])}")
    print(f"    stategraph: {_short(d['sg'])}")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        body = (
            standalone(spec)
            + "\n# differences:\n"
            + "".join(
                f"# {x['where']} ({x['kind']})\n#   lg: {_short(x['lg'], 3000)}\n#   sg: {_short(x['sg'], 3000)}\n"
                for x in diffs
            )
        )
        (out / f"seed_{spec['seed']}.py").write_text(body)


def main() -> None:
    """Command line entry point."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0:200")
    ap.add_argument("--shrink", action="store_true")
    ap.add_argument("--show", type=int)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--max-shrinks", type=int, default=40)
    ap.add_argument("--raw", action="store_true", help="do not mask known differences")
    ap.add_argument("--census", action="store_true", help="count programs per known difference")
    ap.add_argument("--mask-fixed", action="store_true", help="also mask the fixed (a) ones")
    args = ap.parse_args()
    masks = set(MASKS) | (set(FIXED) if args.mask_fixed else set())
    pair = Pair(set() if args.raw else masks)
    if args.show is not None:
        spec = generate(args.show)
        print(standalone(spec))
        lg, sg, diffs = pair.run(spec)
        for d in diffs:
            print(
                d["where"],
                d["kind"],
                "\n  lg:",
                _short(d["lg"], 4000),
                "\n  sg:",
                _short(d["sg"], 4000),
            )
        pair.close()
        return
    lo, hi = map(int, args.seeds.split(":"))
    sigs: Counter = Counter()
    examples: dict[tuple, list[int]] = {}
    outcomes: Counter = Counter()
    census: Counter = Counter()
    started = time.monotonic()
    window = 8
    queue: list[dict] = []
    seeds = iter(range(lo, hi))
    done = 0
    shrunk = 0

    def feed() -> None:
        for seed in seeds:
            spec = generate(seed)
            queue.append(spec)
            pair.lg.send(spec)
            pair.sg.send(spec)
            if len(queue) >= window:
                return

    feed()
    differing: list[tuple[dict, list[dict]]] = []
    while queue:
        spec = queue.pop(0)
        lg, sg = pair.lg.recv(), pair.sg.recv()
        diffs = compare(lg, sg, spec, pair.masks)
        done += 1
        if args.census:
            for m in MASKS:
                if compare(lg, sg, spec, masks - {m}) and not diffs:
                    census[m] += 1
        inv = lg.get("modes", {}).get("invoke", {}).get("steps", [{}])
        outcomes[
            lg.get("build_error") or next((s["error"] for s in inv if "error" in s), "ok")
        ] += 1
        if diffs:
            sig = signature(diffs[0])
            sigs[sig] += 1
            examples.setdefault(sig, []).append(spec["seed"])
            differing.append((spec, diffs))
        if not queue:
            feed()
    print(f"ran {done} programs in {time.monotonic() - started:.0f}s")
    print("outcomes (langgraph invoke):", dict(outcomes.most_common()))
    if args.census:
        print("programs showing each known difference (unmasking it alone):")
        for m, cls in MASKS.items():
            print(f"  {census[m]:5d}  ({cls}) {m}")
    stable: Counter = Counter()
    unstable: list[int] = []
    kept: list[tuple[dict, list[dict]]] = []
    for spec, diffs in differing:
        sig = signature(diffs[0])
        if reproducible(pair, spec, sig):
            stable[sig] += 1
            kept.append((spec, diffs))
        else:
            unstable.append(spec["seed"])
    print(
        f"{len(differing)} differing programs, {len(unstable)} not reproducible "
        f"(timing-dependent): seeds {unstable[:20]}"
    )
    print("reproducible differences by signature:")
    for sig, n in stable.most_common():
        seeds_of = [sp["seed"] for sp, d in kept if signature(d[0]) == sig]
        print(f"  {n:5d}  {sig}  seeds {seeds_of[:8]}")
    seen: Counter = Counter()
    for spec, diffs in kept:
        sig = signature(diffs[0])
        seen[sig] += 1
        if seen[sig] > 2:
            continue
        if args.shrink and shrunk < args.max_shrinks:
            shrunk += 1
            spec = shrink(pair, spec, sig)
            _, _, diffs = pair.run(spec)
            if not diffs:
                continue
        report(spec, diffs, args.out)
    pair.close()


if __name__ == "__main__":
    main()
