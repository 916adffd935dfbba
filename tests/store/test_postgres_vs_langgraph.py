"""stategraph's PostgresStore answers like LangGraph's on the same operations, each on
a fresh schema of the real server (LangGraph runs in its own interpreter, as a black
box; skipped when that interpreter is not installed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .pg_helpers import Schema, require_postgres

PROBE = Path(__file__).resolve().parent / "store_probe.py"
LANGGRAPH_PYTHON = Path("/work/lgvenv/bin/python")


def _clean_env() -> dict[str, str]:
    """This environment without PYTHONPATH/PYTHONHOME: another interpreter must not load
    this one's modules (the cluster fixtures export a PYTHONPATH for their workers)."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def run_probe(python: str, lib: str, attempts: int = 1) -> dict[str, object]:
    """The probe's answers; a failed run reports the probe's stderr. ``attempts > 1``
    retries (used for LangGraph's side only: a reference, not the code under test)."""
    for attempt in range(attempts):
        schema = Schema()
        try:
            done = subprocess.run(
                [python, str(PROBE), lib, schema.conninfo],
                capture_output=True,
                text=True,
                timeout=120,
                env=_clean_env(),
            )
        finally:
            schema.drop()
        if done.returncode == 0:
            result: dict[str, object] = json.loads(done.stdout)
            return result
        if attempt + 1 == attempts:
            pytest.fail(f"the {lib} probe failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    raise AssertionError("unreachable: attempts must be >= 1")


def test_same_answers_as_langgraph_postgres_store() -> None:
    require_postgres()
    if not LANGGRAPH_PYTHON.exists():
        pytest.skip("LangGraph's interpreter (/work/lgvenv) is not installed here")
    ours = run_probe(sys.executable, "stategraph")
    theirs = run_probe(str(LANGGRAPH_PYTHON), "langgraph", attempts=2)
    # Deliberate departures: stategraph's stores (memory, SQLite, PostgreSQL) share one
    # filter semantics; LangGraph's PostgresStore compares $gt/$lt as text ("10" < "2"),
    # drops items missing the field from $ne, and has no dotted paths.
    departures = {
        "filter_gt": (["k1", "k4", "k3"], ["k4", "k3"]),
        "filter_lte": (["k3", "k2"], ["k1", "k3", "k2"]),
        "filter_ne": (["k1", "k5", "k4", "k2"], ["k1", "k4", "k2"]),
        "filter_dotted": (["k2"], []),
    }
    for key, (expected_ours, expected_theirs) in departures.items():
        assert (ours.pop(key), theirs.pop(key)) == (expected_ours, expected_theirs), key
    assert ours == theirs
    assert ours["search"] == ["k1", "k5", "k3", "k2"]  # newest update first
