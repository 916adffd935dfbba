"""Re-run ``tests/differential_hitl`` against LangGraph, to check the recorded values.

The regression tests import ``stategraph``; here every ``stategraph`` module they use
is aliased to its ``langgraph`` counterpart before pytest starts, so a test passing
here means its expected values are LangGraph's. Needs the scratch venv with LangGraph
and borrows pytest from the project venv::

    /work/lgvenv/bin/python tools/differential_hitl/verify_tests.py [pytest args]
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ALIASED = [
    "types",
    "graph",
    "errors",
    "checkpoint",
    "checkpoint.memory",
]


def alias_stategraph() -> None:
    """Make ``import stategraph.X`` return ``langgraph.X``."""
    import langgraph.graph

    sys.modules["stategraph"] = langgraph.graph  # only submodules are used
    for name in ALIASED:
        sys.modules[f"stategraph.{name}"] = importlib.import_module(f"langgraph.{name}")


def main() -> int:
    """Alias the modules and run pytest on the differential HITL tests."""
    alias_stategraph()
    venv_site = next((ROOT / ".venv" / "lib").glob("python3*/site-packages"))
    sys.path.append(str(venv_site))  # pytest and plugins, after LangGraph's own deps
    import pytest

    args = sys.argv[1:] or ["-q"]
    return int(
        pytest.main([str(ROOT / "tests" / "differential_hitl"), "-p", "no:cacheprovider", *args])
    )


if __name__ == "__main__":
    raise SystemExit(main())
