"""The deployment recipe (``examples/lease_workers.py``) with two worker processes on
PostgreSQL: every job's thread ends exact, and a worker that gets SIGTERM drains (its
run stops at a step boundary, saved) while another worker finishes the job."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lease_workers.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_lease_workers", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def dsn(target_for: Any) -> Iterator[str]:
    yield target_for("postgres")


@pytest.mark.slow  # ~7 s: two worker processes start and serve 24 jobs
def test_two_workers_serve_many_threads(dsn: str) -> None:
    recipe = _load()
    summary = recipe.demo(dsn, workers=2, jobs=24, threads=6)
    # demo() checked every thread: each job's entries exactly once, in job order
    assert summary["jobs"] == 24 and summary["threads"] == 6 and summary["workers"] == 2
    assert summary["runs_per_s"] > 0


def _worker(dsn: str, name: str, *extra: str, stop_when_empty: bool) -> subprocess.Popen[str]:
    env = {"LEASE_WORKERS_STOP_WHEN_EMPTY": "1"} if stop_when_empty else {}
    return subprocess.Popen(
        [sys.executable, str(EXAMPLE), "worker", "--dsn", dsn, "--name", name, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )


def test_a_worker_drains_on_sigterm_and_another_finishes_its_job(dsn: str) -> None:
    import psycopg

    recipe = _load()
    recipe.queue_jobs(dsn, jobs=1, threads=1)
    first = _worker(dsn, "first", "--slow", "1.5", stop_when_empty=False)
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            deadline = time.monotonic() + 60
            while conn.execute("SELECT status FROM demo_jobs").fetchone() != ("running",):
                assert first.poll() is None, first.communicate()
                assert time.monotonic() < deadline
                time.sleep(0.02)
            time.sleep(0.3)  # inside the slow first step
            first.send_signal(signal.SIGTERM)
            out, err = first.communicate(timeout=60)
            assert first.returncode == 0, err
            assert json.loads(out.splitlines()[-1]) == {"worker": "first", "drained": 1}
            assert conn.execute("SELECT status, resume FROM demo_jobs").fetchone() == (
                "queued",
                True,
            )
        second = _worker(dsn, "second", stop_when_empty=True)
        assert second.wait(timeout=60) == 0, second.communicate()
        summary = recipe.check_threads(dsn)
        assert summary["jobs"] == 1
        # the drained run's step was kept: "plan" ran once, the resume did the rest
        with psycopg.connect(dsn, autocommit=True) as conn:
            assert conn.execute("SELECT worker FROM demo_jobs").fetchone() == ("second",)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
