"""The abandoned-runs stress harness (``tools/stress_abandon.py``), briefly, in CI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[2] / "tools" / "stress_abandon.py"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_abandoned_runs_never_make_a_later_run_hang() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-W",
            "ignore",
            str(HARNESS),
            "--seconds",
            "20",
            "--processes",
            "2",
            "--seed",
            "20",
            "--probe-timeout",
            "60",
        ],
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    total = json.loads(proc.stdout.strip().splitlines()[-1])
    assert total["hangs"] == 0
    assert total.get("failures", 0) == 0
    # it did exercise what it claims to
    assert total["abandoned"] >= 20 and total["probes"] == total["abandoned"]
    assert total["forks"] >= 1
