"""Differential fuzzer: the same HITL scenarios on LangGraph and on stategraph.

Run from the repository root with the venv that has both libraries::

    /work/lgvenv/bin/python tools/differential_hitl/run.py --seeds 0:1500 --jobs 2
    /work/lgvenv/bin/python tools/differential_hitl/run.py --show 123   # one seed, verbose

After every action the two observations are compared field by field (returned value,
exception type, get_state() parts, history, per-node run counts). A scenario whose
LangGraph runs disagree with each other is reported as flaky, not as a difference.
Differences are grouped by signature ``(action kind, differing fields)`` and each group
keeps its smallest example, shrunk by dropping actions and graph features.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from classify import classify
from observe import AVOIDABLE, observe
from scenarios import Scenario, describe, generate, load_lib

LIBS: dict[str, Any] = {}


def libs() -> tuple[Any, Any]:
    """LangGraph and stategraph adapters, loaded once per process."""
    if not LIBS:
        LIBS["lg"] = load_lib("langgraph")
        LIBS["sg"] = load_lib("stategraph")
    return LIBS["lg"], LIBS["sg"]


MASK = False  # set by --mask: skip known triggers and ignore known-divergent fields


def _masked(obs: dict[str, Any], cmd_seen: bool) -> dict[str, Any]:
    """``obs`` without the parts known to differ (subgraph task snapshots, etc.)."""
    out = copy.deepcopy(obs)
    state = out.get("state")
    if isinstance(state, dict):
        for t in state.get("tasks", []):
            t.pop("sub", None)
    if isinstance(out.get("result"), dict) and "__interrupt__" not in out["result"]:
        out["result"] = "state-or-none"  # invoke's None-versus-state divergence
    elif out.get("result") is None and out.get("error") is None:
        out["result"] = "state-or-none"
    if cmd_seen and out.get("history"):
        out["history"] = [h[:3] for h in out["history"]]
    return out


def diff_fields(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Names of the fields where two observations of one action differ."""
    out = []
    for key in ("result", "error", "counts", "history"):
        if a.get(key) != b.get(key):
            out.append(key)
    sa, sb = a.get("state"), b.get("state")
    if isinstance(sa, dict) and isinstance(sb, dict):
        for key in sa:
            if sa[key] != sb.get(key):
                out.append(f"state.{key}")
    elif sa != sb:
        out.append("state")
    return out


def compare(sc: Scenario) -> dict[str, Any] | None:
    """The first divergence of ``sc`` between the libraries, or None."""
    lg, sg = libs()
    avoid = AVOIDABLE if MASK else frozenset()
    tl, ts = observe(sc, lg, avoid), observe(sc, sg, avoid)
    cmd_threads: set[str] = set()
    for i, (ol, os_) in enumerate(zip(tl, ts, strict=True)):
        if sc.actions[i].kind == "cmd":
            cmd_threads.add(sc.actions[i].thread)
        if MASK:
            seen = sc.actions[i].thread in cmd_threads
            fields = diff_fields(_masked(ol, seen), _masked(os_, seen))
        else:
            fields = diff_fields(ol, os_)
        if fields:
            seen = sc.actions[i].thread in cmd_threads
            masked_equal = not diff_fields(_masked(ol, seen), _masked(os_, seen))
            return {
                "index": i,
                "kind": sc.actions[i].kind,
                "fields": fields,
                "lg": ol,
                "sg": os_,
                "masked_equal": masked_equal,
            }
    return None


def lg_stable(sc: Scenario, runs: int = 2) -> bool:
    """Whether LangGraph gives the same trace on repeated runs of ``sc``."""
    lg, _ = libs()
    avoid = AVOIDABLE if MASK else frozenset()
    first = observe(sc, lg, avoid)
    return all(observe(sc, lg, avoid) == first for _ in range(runs))


def signature(d: dict[str, Any]) -> str:
    """A grouping key for a divergence."""
    fields = d["fields"]
    # The downstream fields follow from the first visible one; keep the coarse shape.
    return (
        f"{d['kind']}: {','.join(fields)} | err lg={d['lg'].get('error')} sg={d['sg'].get('error')}"
    )


def _variants(sc: Scenario) -> list[Scenario]:
    """Smaller neighbours of ``sc``: one action or one feature fewer."""
    out = []
    for i in range(len(sc.actions)):
        s = copy.deepcopy(sc)
        del s.actions[i]
        if s.actions:
            out.append(s)
    for attr in ("interrupt_before", "interrupt_after"):
        if getattr(sc, attr):
            s = copy.deepcopy(sc)
            setattr(s, attr, [])
            out.append(s)
    for n in range(len(sc.nodes)):
        node = sc.nodes[n]
        for attr, empty in (
            ("asks", []),
            ("writes_last", False),
            ("fails_on_boom", False),
            ("command_goto", None),
            ("sub", None),
        ):
            if getattr(node, attr) not in (empty, None, False, []):
                s = copy.deepcopy(sc)
                setattr(s.nodes[n], attr, copy.deepcopy(empty))
                out.append(s)
        if len(node.asks) > 1:
            s = copy.deepcopy(sc)
            s.nodes[n].asks = node.asks[:-1]
            out.append(s)
    for i, a in enumerate(sc.actions):
        if a.api == "async" or a.durability is not None or a.run_before or a.run_after:
            s = copy.deepcopy(sc)
            s.actions[i].api, s.actions[i].durability = "sync", None
            s.actions[i].run_before = s.actions[i].run_after = None
            out.append(s)
    return out


def shrink(sc: Scenario, sig: str, budget: int = 150) -> Scenario:
    """Greedy shrinking of ``sc`` while its divergence keeps signature ``sig``."""
    best = copy.deepcopy(sc)
    d = compare(best)
    if d is not None:
        best.actions = best.actions[: d["index"] + 1]
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        for cand in _variants(best):
            tries += 1
            try:
                d = compare(cand)
            except Exception:  # a variant that cannot even build (e.g. unreachable node)
                continue
            if d is not None and signature(d) == sig:
                cand.actions = cand.actions[: d["index"] + 1]
                best = cand
                improved = True
                break
            if tries >= budget:
                break
    return best


def check_seed(seed: int) -> dict[str, Any]:
    """Run one seed; returns its status and divergence (if any)."""
    sc = generate(seed)
    try:
        d = compare(sc)
    except Exception as exc:  # the harness itself failed (e.g. build raised in one lib)
        return {"seed": seed, "status": "harness-error", "error": f"{type(exc).__name__}: {exc}"}
    if d is None:
        return {"seed": seed, "status": "same"}
    if not lg_stable(sc):
        return {"seed": seed, "status": "lg-flaky", "sig": signature(d)}
    category, cause = classify(sc, d, d["masked_equal"] and not MASK)
    status = "diff" if category == "?" else f"known-{category}"
    sig = signature(d) if category == "?" else cause
    return {"seed": seed, "status": status, "sig": sig, "index": d["index"]}


def show(seed: int, sc: Scenario | None = None) -> str:
    """Both traces of one scenario, side by side, up to the first divergence."""
    sc = sc or generate(seed)
    lg, sg = libs()
    avoid = AVOIDABLE if MASK else frozenset()
    tl, ts = observe(sc, lg, avoid), observe(sc, sg, avoid)
    d = compare(sc)
    lines = [describe(sc)]
    for i, (ol, os_) in enumerate(zip(tl, ts, strict=True)):
        fields = d["fields"] if d is not None and d["index"] == i else []
        lines.append(f"--- action[{i}] {sc.actions[i].kind} differs: {fields or 'no'}")
        for key in ["error", "error_msg", "result", "counts", "state", "history", "warnings"]:
            vl, vs = ol.get(key), os_.get(key)
            if vl == vs:
                lines.append(f"  {key}: {json.dumps(vl, default=repr)}")
            else:
                lines.append(f"  {key} LG: {json.dumps(vl, default=repr)}")
                lines.append(f"  {key} SG: {json.dumps(vs, default=repr)}")
        if fields:
            break
    return "\n".join(lines)


def _parse_range(text: str) -> range:
    lo, _, hi = text.partition(":")
    return range(int(lo), int(hi))


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", default="0:1500", help="range lo:hi")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--show", type=int, help="print one seed's traces")
    ap.add_argument("--shrink", action="store_true", help="shrink one example per signature")
    ap.add_argument("--out", default="/tmp/differential_hitl.json")
    ap.add_argument("--mask", action="store_true", help="skip/ignore the known divergences")
    args = ap.parse_args(argv)
    global MASK  # a process-wide switch, read by the pool workers too
    MASK = args.mask
    if args.show is not None:
        print(show(args.show))
        return 0
    seeds = list(_parse_range(args.seeds))
    start = time.perf_counter()
    if args.jobs > 1:
        from multiprocessing import Pool

        with Pool(args.jobs) as pool:
            results = pool.map(check_seed, seeds, chunksize=10)
    else:
        results = [check_seed(s) for s in seeds]
    elapsed = time.perf_counter() - start
    groups: dict[str, list[int]] = defaultdict(list)
    status: dict[str, int] = defaultdict(int)
    for r in results:
        status[r["status"]] += 1
        if r["status"] != "same":
            groups[f"[{r['status']}] {r.get('sig') or r.get('error')}"].append(r["seed"])
    print(f"{len(seeds)} scenarios in {elapsed:.1f}s: {dict(status)}")
    report: dict[str, Any] = {"status": dict(status), "groups": {}}
    for sig, members in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(members):5d}  {sig}  e.g. seeds {members[:8]}")
        entry: dict[str, Any] = {"seeds": members}
        if args.shrink and sig.startswith("[diff]"):  # unknown causes only
            smallest = min(members, key=lambda s: (len(generate(s).actions), s))
            small = shrink(generate(smallest), sig.split("] ", 1)[1])
            entry["shrunk"] = show(smallest, small)
            print("      shrunk from seed", smallest)
            print("      " + entry["shrunk"].replace("\n", "\n      "))
        report["groups"][sig] = entry
    Path(args.out).write_text(json.dumps(report, indent=1, default=repr))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
