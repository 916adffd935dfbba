"""Smoke test of the benchmark suite: every workload runs and validates on stategraph."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.workloads import QUICK, ValidationError, make_workloads

ROOT = Path(__file__).resolve().parents[2]

WORKLOADS = {"sequential", "fanout", "wide_state", "agent_loop"}
SAVERS = {"none", "memory", "sqlite"}


def test_quick_suite_completes_with_validated_results(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "--quick",
            "--lib",
            "stategraph",
            "--repeat",
            "1",
            "--no-import-cost",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert report["ok"] is True
    assert report["quick"] is True
    assert report["libraries"] == ["stategraph"]
    assert report["sizes"] == {
        "nodes": 100,
        "sends": 10,
        "sub_loops": 10,
        "wide_loops": 30,
        "rounds": 10,
    }
    cases = report["cases"]
    assert {(c["workload"], c["saver"]) for c in cases} == {
        (w, s) for w in WORKLOADS for s in SAVERS
    }
    assert len(cases) == len(WORKLOADS) * len(SAVERS)
    for case in cases:
        assert case["lib"] == "stategraph"
        assert case["error"] is None, case
        assert case["validated"] is True, case
        assert len(case["times_ms"]) == 1
        assert case["median_ms"] > 0
        assert case["compile_ms"] > 0
    # the table names every workload and shows no failure
    for name in WORKLOADS:
        assert name in proc.stdout
    assert "FAILED" not in proc.stdout


def test_validation_rejects_a_wrong_result() -> None:
    sequential = next(w for w in make_workloads(QUICK) if w.name == "sequential")
    try:
        sequential.validate({"messages": []})
    except ValidationError as exc:
        assert "expected 101 messages, got 0" in str(exc)
    else:
        raise AssertionError("an empty message list passed validation")


def test_unknown_workload_is_a_usage_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--only", "nope"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "invalid choice: 'nope'" in proc.stderr
