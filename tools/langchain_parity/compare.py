"""Run app.py on LangGraph and on stategraph and print the lines that differ.

    python tools/langchain_parity/compare.py [--langgraph-python P] [--stategraph-python Q]

P needs langgraph and langchain-core (default /work/lgvenv/bin/python); Q needs
stategraph and langchain-core (default .venv-test-langchain/bin/python, built by
``make unit-langchain``). Exit status 1 when the outputs differ.
"""

from __future__ import annotations

import argparse
import difflib
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def run(python: str, lib: str, mode: str) -> list[str]:
    args = [python, str(HERE / "app.py"), lib] + ([mode] if mode == "async" else [])
    done = subprocess.run(args, capture_output=True, text=True, check=True, timeout=300)
    return done.stdout.splitlines()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langgraph-python", default="/work/lgvenv/bin/python")
    parser.add_argument(
        "--stategraph-python", default=str(ROOT / ".venv-test-langchain" / "bin" / "python")
    )
    args = parser.parse_args()
    status = 0
    for mode in ("sync", "async"):
        theirs = run(args.langgraph_python, "langgraph", mode)
        ours = run(args.stategraph_python, "stategraph", mode)
        diff = list(difflib.unified_diff(theirs, ours, "langgraph", "stategraph", lineterm="", n=0))
        print(f"{mode}: {len(theirs)} lines, {'identical' if not diff else 'DIFFERENT'}")
        if diff:
            status = 1
            print("\n".join(diff))
    return status


if __name__ == "__main__":
    sys.exit(main())
