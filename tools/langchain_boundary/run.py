"""Record the boundary scenarios' observations on one library.

    python run.py --lib langgraph  --out /tmp/lg.json     # in a venv with LangGraph
    python run.py --lib stategraph --out /tmp/sg.json     # in .venv-test-langchain
    python run.py --lib stategraph --only react_basic_tool_call --modes events
    python run.py --lib langgraph --repeat 5 --out recorded/langgraph.json

The output is JSON: ``{scenario: {"features": [...], "parts": {part: [variant, ...]}}}``
where a part (``invoke``, ``stream:<mode>``, ``events``, ``tracer``, ``history``) is a
list of lines, one per observed item (see ``compare.parts``). With ``--repeat N`` each
scenario runs N times and every distinct variant of a part is kept: LangGraph's own
scheduling of concurrent work varies from run to run in a few places.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from compare import parts  # noqa: E402
from lib import namespace  # noqa: E402
from observe import MODES, observe  # noqa: E402
from recording import save  # noqa: E402
from registry import load_all  # noqa: E402

__all__ = ["record", "versions"]


def versions() -> dict[str, str]:
    """The versions of the libraries the observations depend on."""
    from importlib import metadata

    found = {}
    for dist in ("langgraph", "stategraph", "langchain-core", "langchain", "pydantic"):
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return found


def record(
    lib: str,
    only: list[str] | None = None,
    modes: tuple[str, ...] = MODES,
    repeat: int = 1,
    verbose: bool = False,
) -> dict[str, Any]:
    """The parts of every (or each ``only``) scenario on ``lib``, every variant seen."""
    ns = namespace(lib)
    scenarios = load_all()
    out: dict[str, Any] = {}
    for name, scenario in scenarios.items():
        if only and name not in only:
            continue
        start = time.perf_counter()
        variants: dict[str, list[list[str]]] = {}
        for _ in range(repeat):
            for part, lines in parts(observe(scenario, ns, modes)):
                seen = variants.setdefault(part, [])
                if lines not in seen:
                    seen.append(lines)
        out[name] = {"features": scenario.features, "doc": scenario.doc, "parts": variants}
        if verbose:
            varying = [p for p, v in variants.items() if len(v) > 1]
            note = f" (varies: {', '.join(varying)})" if varying else ""
            print(f"{name}: {time.perf_counter() - start:.2f}s{note}", file=sys.stderr)
    out["~meta"] = {"lib": lib, "repeat": repeat, "versions": versions()}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", required=True, choices=["langgraph", "stategraph"])
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", nargs="*", help="scenario names")
    parser.add_argument("--modes", nargs="*", default=list(MODES), choices=list(MODES))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    data = record(args.lib, args.only, tuple(args.modes), args.repeat, args.verbose)
    save(data, args.out)
    print(f"{len(data) - 1} scenarios recorded on {args.lib} -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
