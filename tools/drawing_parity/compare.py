"""Draw the same graphs with LangGraph and stategraph and diff the Mermaid sources.

    .venv-test/bin/python tools/drawing_parity/compare.py [--lg-python PATH]

Exit code 0 when every case is identical, 1 otherwise (the diffs are printed).
"""

from __future__ import annotations

import argparse
import difflib
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def draw(python: str, lib: str) -> dict[str, str]:
    """Run graphs.py under ``python`` with the ``lib`` import prefix."""
    out = subprocess.run(
        [python, str(HERE / "graphs.py"), lib], check=True, capture_output=True, text=True
    )
    result: dict[str, str] = json.loads(out.stdout)
    return result


def main() -> int:
    """Compare every case; print a diff for each that differs."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lg-python", default="/work/lgvenv/bin/python")
    args = parser.parse_args()
    theirs = draw(args.lg_python, "langgraph")
    ours = draw(sys.executable, "stategraph")
    differ = 0
    for name in theirs:
        if theirs[name] == ours.get(name):
            print(f"same      {name}")
            continue
        differ += 1
        print(f"DIFFERENT {name}")
        diff = difflib.unified_diff(
            theirs[name].splitlines(),
            ours.get(name, "").splitlines(),
            "langgraph",
            "stategraph",
            lineterm="",
        )
        print("\n".join(diff))
    print(f"{len(theirs) - differ}/{len(theirs)} identical")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
