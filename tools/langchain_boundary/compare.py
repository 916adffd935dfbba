"""Compare two recordings of the boundary scenarios (LangGraph's and stategraph's).

    python compare.py recorded/langgraph.json /tmp/sg.json            # summary
    python compare.py A.json B.json --show react_basic_tool_call        # diffs of one
    python compare.py A.json B.json --all-diffs | less                  # every diff

Each scenario's observations are compared per *part*: ``invoke``, ``stream:<mode>``,
``events``, ``tracer``, ``history``, each a list of lines (one per item). A part of the
candidate matches when it equals one of the variants recorded for the reference (see
``run.py --repeat``). Otherwise it differs by *value* (the multisets of lines differ)
or only by *order* (same lines, another order). Known differences and their
causes are listed in :data:`known.KNOWN`; the summary says which scenarios match, which
differ as known, and which differ in a way nobody has explained (``NEW``).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from known import CAUSES, KNOWN  # noqa: E402

__all__ = ["parts", "compare_parts", "summarize", "report", "show"]


def _line(item: Any) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


_LABEL = re.compile(r"#\d+")


def _unordered(lines: list[str]) -> list[str]:
    """Lines of each step sorted, ids fully masked (for concurrent scenarios)."""
    out: list[str] = []
    segment: list[str] = []
    for line in [*lines, "-- end"]:
        if line.startswith("-- "):
            out.extend(sorted(segment))
            segment = []
            out.append(line)
        else:
            segment.append(_LABEL.sub("#", line))
    return out[:-1]


def parts(observations: dict[str, Any]) -> Iterator[tuple[str, list[str]]]:
    """Each comparable part of one scenario's observations, as lines (one per item).

    In a scenario whose branches run concurrently in worker threads, the order of the
    items of one step varies from run to run, in LangGraph too, and so do the labels
    of ids (given in order of first appearance): there, the lines of each step are
    compared as a multiset, with ids fully masked.
    """
    found = _parts(observations)
    if observations.get("concurrent"):
        return ((part, _unordered(lines)) for part, lines in found)
    return found


def _parts(observations: dict[str, Any]) -> Iterator[tuple[str, list[str]]]:
    for mode in ("invoke", "history"):
        value = observations.get(mode)
        if isinstance(value, list):
            yield mode, [line for i, v in enumerate(value) for line in (f"-- {i}", _line(v))]
        else:
            yield mode, [_line(value)]
    stream = observations.get("stream")
    if isinstance(stream, list):
        modes = sorted({m for step in stream for m in (step.get("chunks") or {})})
        for mode in modes:
            lines = []
            for i, step in enumerate(stream):
                lines.append(f"-- step {i}")
                lines.extend(_line(c) for c in (step.get("chunks") or {}).get(mode, []))
            yield f"stream:{mode}", lines
        yield "stream:error", [_line(step.get("error")) for step in stream]
    else:
        yield "stream", [_line(stream)]
    for mode, key in (("events", "events"), ("tracer", "runs")):
        value = observations.get(mode)
        if not isinstance(value, list):
            yield mode, [_line(value)]
            continue
        lines = []
        for i, step in enumerate(value):
            lines.append(f"-- step {i}")
            if key == "runs":
                lines.append(_line({"result": step.get("result")}))
                lines.extend(_tree_lines(step.get("runs") or []))
            else:
                lines.extend(_line(e) for e in step.get(key, []))
                lines.append(_line({"error": step.get("error"), "action": step.get("action")}))
        yield mode, lines


def _tree_lines(runs: list[dict[str, Any]], depth: int = 0) -> Iterator[str]:
    for run in runs:
        fields = {k: v for k, v in run.items() if k != "children"}
        yield "  " * depth + _line(fields)
        yield from _tree_lines(run.get("children", []), depth + 1)


def compare_parts(
    reference: dict[str, list[list[str]]], candidate: dict[str, list[list[str]]]
) -> dict[str, str]:
    """``{part: "value" | "order"}`` for each part whose candidate variant(s) are not
    among the reference's variants ("order": same items as a reference variant)."""
    out: dict[str, str] = {}
    for part in sorted(set(reference) | set(candidate)):
        ref = reference.get(part, [])
        cand = candidate.get(part, [])
        if cand and all(variant in ref for variant in cand):
            continue
        if not cand and not ref:
            continue
        sorted_ref = [sorted(v) for v in ref]
        same_items = bool(cand) and all(sorted(v) in sorted_ref for v in cand)
        out[part] = "order" if same_items else "value"
    return out


def show(
    name: str,
    reference: dict[str, list[list[str]]],
    candidate: dict[str, list[list[str]]],
    context: int = 2,
) -> str:
    """A unified diff of every differing part of one scenario (against the reference's
    first variant)."""
    out = []
    for part in compare_parts(reference, candidate):
        x = (reference.get(part) or [[]])[0]
        y = (candidate.get(part) or [[]])[0]
        out.append(f"=== {name} / {part}")
        out.extend(difflib.unified_diff(x, y, "langgraph", "stategraph", n=context, lineterm=""))
    return "\n".join(out)


def summarize(
    reference: dict[str, Any], candidate: dict[str, Any]
) -> tuple[dict[str, dict[str, str]], list[str]]:
    """The differing parts of each scenario, and the scenarios missing on one side."""
    diffs: dict[str, dict[str, str]] = {}
    missing = sorted(set(reference) ^ set(candidate))
    for name in sorted(set(reference) & set(candidate)):
        found = compare_parts(reference[name]["parts"], candidate[name]["parts"])
        if found:
            diffs[name] = found
    return diffs, missing


def report(reference: dict[str, Any], candidate: dict[str, Any]) -> tuple[str, int]:
    """The summary text and the number of unexplained results (new diffs, stale entries)."""
    diffs, missing = summarize(reference, candidate)
    names = sorted(set(reference) & set(candidate))
    lines = [f"{len(names)} scenarios compared"]
    by_cause: dict[str, list[str]] = {}
    unexplained = 0
    for name in names:
        found = diffs.get(name)
        known = KNOWN.get(name, [])
        if not found:
            status = "match" if not known else "MATCHES NOW (remove from known.KNOWN)"
            unexplained += bool(known)
        else:
            status = "differs: " + ", ".join(f"{p}({k})" for p, k in found.items())
            if known:
                status += "  [known: " + ", ".join(known) + "]"
                for cause in known:
                    by_cause.setdefault(cause, []).append(name)
            else:
                status += "  [NEW]"
                unexplained += 1
        lines.append(f"  {name}: {status}")
    lines.append("")
    lines.append(
        f"matching: {len(names) - len(diffs)}   differing: {len(diffs)}   "
        f"unexplained: {unexplained}"
    )
    for cause, scen in sorted(by_cause.items()):
        lines.append(f"  {cause} ({CAUSES.get(cause, '?')}): {len(scen)} scenario(s)")
    if missing:
        lines.append(f"missing on one side: {', '.join(missing)}")
        unexplained += len(missing)
    return "\n".join(lines), unexplained


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference")
    parser.add_argument("candidate")
    parser.add_argument("--show", nargs="*", default=None, help="scenarios to print diffs of")
    parser.add_argument("--all-diffs", action="store_true")
    parser.add_argument("--context", type=int, default=2)
    args = parser.parse_args(argv)
    with open(args.reference, encoding="utf-8") as f:
        reference = json.load(f)
    with open(args.candidate, encoding="utf-8") as f:
        candidate = json.load(f)
    if args.show is not None or args.all_diffs:
        names = args.show or sorted(set(reference) & set(candidate))
        for name in names:
            text = show(name, reference[name]["parts"], candidate[name]["parts"], args.context)
            if text:
                print(text)
        return 0
    text, unexplained = report(reference, candidate)
    print(text)
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
