"""Run the differential regression tests against LangGraph itself.

    /work/main/.venv/bin/python tools/differential/check_on_langgraph.py

Copies ``tests/differential/test_*.py`` (and their conftest) to a temporary directory
with the import prefix ``stategraph`` changed to ``langgraph`` and runs pytest there
with LangGraph's site-packages first on the path. Every test must pass: that proves the
recorded expectations are LangGraph's behaviour. (``test_recorded_programs.py`` is
skipped: it drives stategraph through the fuzzer's harness.)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LG_SITE = "/work/lgvenv/lib/python3.11/site-packages"
SKIP = {"test_recorded_programs.py"}


def main() -> int:
    """Copy, rewrite and run; return pytest's exit code."""
    src = ROOT / "tests" / "differential"
    with tempfile.TemporaryDirectory() as tmp:
        for path in src.glob("*.py"):
            if path.name in SKIP:
                continue
            text = re.sub(r"\bstategraph\.", "langgraph.", path.read_text())
            (Path(tmp) / path.name).write_text(text)
        env = dict(os.environ, PYTHONPATH=LG_SITE)
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", tmp]
        return subprocess.call(cmd, env=env, cwd=tmp)


if __name__ == "__main__":
    raise SystemExit(main())
