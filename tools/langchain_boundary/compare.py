"""Compare two recordings of the boundary scenarios (LangGraph's and stategraph's).

    python compare.py recorded/langgraph.json.gz /tmp/sg.json         # summary
    python compare.py A.json B.json --show react_basic_tool_call        # diffs of one
    python compare.py A.json B.json --all-diffs | less                  # every diff
    python compare.py A.json B.json --write-expected                    # accept causes

Each scenario's observations are compared per *part*: ``invoke``, ``stream:<mode>``,
``events``, ``tracer``, ``history``, each a list of lines (one per item). A part of the
candidate matches when it equals one of the variants recorded for the reference (see
``run.py --repeat``). Otherwise it differs by *value* (the multisets of lines differ)
or only by *order* (same lines, another order). A differing scenario is then explained
by the known causes of causes.py (each cause neutralizes one difference; the scenario's
causes are the smallest set that makes it match); expected_causes.json lists the causes
each scenario is known to differ by. The summary says which scenarios match, which
differ and why, and flags differences no cause explains and causes a scenario did not
have before.
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


def _scenarios(recording: dict[str, Any]) -> set[str]:
    return {k for k in recording if not k.startswith("~")}


def summarize(
    reference: dict[str, Any], candidate: dict[str, Any]
) -> tuple[dict[str, dict[str, str]], list[str]]:
    """The differing parts of each scenario, and the scenarios missing on one side."""
    diffs: dict[str, dict[str, str]] = {}
    missing = sorted(_scenarios(reference) ^ _scenarios(candidate))
    for name in sorted(_scenarios(reference) & _scenarios(candidate)):
        found = compare_parts(reference[name]["parts"], candidate[name]["parts"])
        if found:
            diffs[name] = found
    return diffs, missing


def classify(
    reference: dict[str, Any],
    candidate: dict[str, Any],
    expected: dict[str, list[str]] | None = None,
) -> dict[str, list[str] | None]:
    """Each scenario's causes: ``[]`` when it matches, the causes explaining its
    differences (see causes.py), or ``None`` when they do not explain it all. Where
    several sets would explain a scenario, its ``expected`` causes are preferred."""
    from causes import explain

    diffs, _ = summarize(reference, candidate)
    out: dict[str, list[str] | None] = {}
    for name in sorted(_scenarios(reference) & _scenarios(candidate)):
        if name not in diffs:
            out[name] = []
        else:
            prefer = (expected or {}).get(name, [])
            out[name] = explain(reference[name]["parts"], candidate[name]["parts"], prefer)
    return out


def report(
    reference: dict[str, Any], candidate: dict[str, Any], expected: dict[str, list[str]]
) -> tuple[str, int]:
    """The summary text and the number of problems: scenarios no known cause explains,
    causes beyond the ``expected`` ones (a regression), missing scenarios."""
    from causes import CAUSES

    titles = {c.key: c.title for c in CAUSES}
    diffs, missing = summarize(reference, candidate)
    found = classify(reference, candidate, expected)
    lines = [f"{len(found)} scenarios compared"]
    by_cause: dict[str, list[str]] = {}
    problems = 0
    for name, causes in found.items():
        allowed = set(expected.get(name, []))
        if causes == []:
            status = "match" + ("  (expected causes no longer apply: update)" if allowed else "")
        elif causes is None:
            parts = ", ".join(f"{p}({k})" for p, k in diffs[name].items())
            status = f"differs: {parts}  [UNEXPLAINED]"
            problems += 1
        else:
            extra = sorted(set(causes) - allowed)
            status = "differs: " + ", ".join(causes)
            if extra:
                status += f"  [NEW CAUSES: {', '.join(extra)}]"
                problems += 1
            for cause in causes:
                by_cause.setdefault(cause, []).append(name)
        lines.append(f"  {name}: {status}")
    matching = sum(1 for c in found.values() if c == [])
    lines.append("")
    per_part: dict[str, int] = {}
    for name in found:
        for part in diffs.get(name, {}):
            per_part[part] = per_part.get(part, 0) + 1
    all_parts = sorted({p for n in found for p in reference[n]["parts"]})
    lines.append(
        "parts matching as they are: "
        + ", ".join(f"{p} {len(found) - per_part.get(p, 0)}/{len(found)}" for p in all_parts)
    )
    lines.append(
        f"scenarios: {len(found)}   matching: {matching}   differing: {len(found) - matching}"
        f"   unexplained: {sum(1 for c in found.values() if c is None)}"
    )
    lines.append("differing scenarios by cause (a scenario may have several):")
    for cause, names in sorted(by_cause.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines.append(f"  {len(names):3d}  {cause}: {titles.get(cause, '?')}")
    if missing:
        lines.append(f"missing on one side: {', '.join(missing)}")
        problems += len(missing)
    return "\n".join(lines), problems


EXPECTED = os.path.join(HERE, "expected_causes.json")


def load_expected(path: str = EXPECTED) -> dict[str, list[str]]:
    """The causes each scenario is known to differ by (``--write-expected`` writes it)."""
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return dict(json.load(f))


def main(argv: list[str] | None = None) -> int:
    from recording import load

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference")
    parser.add_argument("candidate")
    parser.add_argument("--show", nargs="*", default=None, help="scenarios to print diffs of")
    parser.add_argument("--all-diffs", action="store_true")
    parser.add_argument("--context", type=int, default=2)
    parser.add_argument(
        "--write-expected", action="store_true", help="save each scenario's causes as expected"
    )
    args = parser.parse_args(argv)
    reference = load(args.reference)
    candidate = load(args.candidate)
    if args.show is not None or args.all_diffs:
        names = args.show or sorted(_scenarios(reference) & _scenarios(candidate))
        for name in names:
            text = show(name, reference[name]["parts"], candidate[name]["parts"], args.context)
            if text:
                print(text)
        return 0
    if args.write_expected:
        found = classify(reference, candidate)
        expected = {name: causes for name, causes in found.items() if causes}
        with open(EXPECTED, "w", encoding="utf-8") as f:
            json.dump(expected, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"wrote {EXPECTED} ({len(expected)} differing scenarios)")
    text, problems = report(reference, candidate, load_expected())
    print(text)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
