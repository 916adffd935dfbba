"""Record LangGraph's observations of generated programs for the regression suite.

    /work/lgvenv/bin/python tools/differential/record.py --seeds 0:400 --count 60

Keeps programs on which LangGraph is stable (two identical runs) and stategraph agrees
today (with the known differences masked), preferring a mix of features, and writes
``tests/differential/recorded_programs.json``: each entry holds the spec and
LangGraph's result, so ``tests/differential/test_recorded_programs.py`` can compare
stategraph against it without LangGraph installed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from graphs import generate  # noqa: E402
from run import Pair  # noqa: E402

OUT = HERE.parent.parent / "tests" / "differential" / "recorded_programs.json"
MAX_CHARS = 8_000


def features(spec: dict) -> set[str]:
    """Names of the features a program uses (to keep the recorded set varied)."""
    text = json.dumps(spec)
    found = set()
    for name, probe in [
        ("send", '"send":'),
        ("command", '"ret": "cmd"'),
        ("defer", '"defer": true'),
        ("subgraph", '"kind": "sub"'),
        ("parent", '"parent_goto": ['),
        ("interrupt", '"interrupt": true'),
        ("interrupt2", '"interrupt": 2'),
        ("retry", '"retry":'),
        ("path_map", '"path_map": "'),
        ("remaining", '"remaining": true'),
        ("async", '"async": true'),
        ("update", '"update": {'),
    ]:
        if probe in text:
            found.add(name)
    if any(isinstance(src, list) for src, _ in spec["edges"]):
        found.add("barrier")
    if spec["checkpointer"]:
        found.add("checkpointer")
    if len(spec["inputs"]) > 1:
        found.add("two_inputs")
    return found


def main() -> None:
    """Command line entry point."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0:400")
    ap.add_argument("--count", type=int, default=60)
    args = ap.parse_args()
    lo, hi = map(int, args.seeds.split(":"))
    pair = Pair()
    chosen: list[dict] = []
    seen: Counter = Counter()
    outcomes: Counter = Counter()
    for seed in range(lo, hi):
        if len(chosen) >= args.count:
            break
        spec = generate(seed)
        lg, _sg, diffs = pair.run(spec)
        blob = json.dumps(lg)
        if diffs or "Explode" in blob or "harness_error" in lg or len(blob) > MAX_CHARS:
            continue
        lg2, _, diffs2 = pair.run(spec)
        if lg2 != lg or diffs2:
            continue
        feats = features(spec)
        inv = lg["modes"].get("invoke", lg["modes"].get("ainvoke", {})).get("steps", [{}])
        outcome = next((s["error"] for s in inv if "error" in s), "ok")
        # prefer programs that add a feature or an outcome not yet well covered
        if min((seen[f] for f in feats), default=0) >= 8 and outcomes[outcome] >= 10:
            continue
        seen.update(feats)
        outcomes[outcome] += 1
        chosen.append({"seed": seed, "spec": spec, "langgraph": lg})
    pair.close()
    lines = ",\n".join(json.dumps(p, separators=(",", ":"), sort_keys=True) for p in chosen)
    OUT.write_text('{"langgraph": "1.2.24", "programs": [\n' + lines + "\n]}\n")
    print(f"recorded {len(chosen)} programs to {OUT}")
    print("features:", dict(seen.most_common()))
    print("outcomes:", dict(outcomes.most_common()))


if __name__ == "__main__":
    main()
