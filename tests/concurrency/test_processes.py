"""Runs from several processes on one thread (SQLite file, PostgreSQL server).

* N processes x M runs on one thread id, per ``multitask_strategy``: no fork, no input
  lost, each completed run's result exact;
* a holder killed with SIGKILL in the middle of a step: its thread is taken over once
  its lease expires;
* a holder paused with SIGSTOP past its lease: another run takes the thread over, and
  when the holder wakes (SIGCONT) its writes are refused (``LeaseLostError``).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from lease_helpers import build, check_linear_history, check_outcomes, open_sync_saver, run_input

from stategraph.errors import ThreadBusyError

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs POSIX signals")

WORKER = str(Path(__file__).with_name("lease_worker.py"))
PROCESSES = 3
RUNS = 3
TTL = 1.5
CONFIG: dict[str, Any] = {"configurable": {"thread_id": "busy"}}


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, WORKER, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _lines(proc: subprocess.Popen[str], timeout: float = 120) -> list[Any]:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("strategy", ["reject", "enqueue", "interrupt", "rollback"])
# PostgreSQL's take over 5 s on a loaded 2-core machine
@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def test_processes_on_one_thread_id(kind: str, strategy: str, target_for: Any) -> None:
    target = target_for(kind)
    start = time.time() + 2.0  # let every process import and connect first
    procs = [
        _spawn("many", kind, target, strategy, str(p), str(RUNS), str(TTL), str(start))
        for p in range(PROCESSES)
    ]
    outcomes: dict[str, tuple[str, Any]] = {}
    for proc in procs:
        for msg, status, value in _lines(proc):
            outcomes[msg] = (status, value)
    assert len(outcomes) == PROCESSES * RUNS
    with open_sync_saver(kind, target) as saver:
        final = build(saver).get_state(CONFIG).values.get("log", [])
        counts = check_outcomes(strategy, outcomes, final)
        check_linear_history(saver, "busy")
    lost = counts.get("lost", 0)
    assert lost <= 1, counts  # only a machine stalling a process past its lease
    if strategy == "enqueue":
        assert counts.get("ok", 0) == PROCESSES * RUNS - lost
    else:
        assert counts.get("ok", 0) >= 1


def _wait_for(path: Path, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the holder never reached its node"
        time.sleep(0.02)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_killed_holder_is_taken_over_after_its_lease_expires(
    kind: str, target_for: Any, tmp_path: Path
) -> None:
    target = target_for(kind)
    ready = tmp_path / "ready"
    holder = _spawn("hold", kind, target, str(ready), "60", "1.0")
    try:
        _wait_for(ready, holder)
        with open_sync_saver(kind, target) as saver:
            app = build(saver)
            # while the holder lives, a rejecting run fails naming the holder's run
            with pytest.raises(ThreadBusyError) as busy:
                app.invoke(run_input("early"), CONFIG)
            assert busy.value.thread_id == "busy"
            assert busy.value.holder_run_id == "holder-run"
            assert "holder-run" in str(busy.value)
            holder.send_signal(signal.SIGKILL)
            holder.wait(timeout=30)
            killed = time.monotonic()
            out = app.invoke(
                run_input("next"),
                {**CONFIG, "enqueue_timeout": 10},
                multitask_strategy="enqueue",
            )
            waited = time.monotonic() - killed
            # the dead holder's input was saved; its unfinished step is dropped
            assert out["log"] == ["hold", "next", "a:next", "b:next"]
            assert waited < 1.0 + 3.0
            check_linear_history(saver, "busy")
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_paused_holder_cannot_write_after_its_lease_expired(
    kind: str, target_for: Any, tmp_path: Path
) -> None:
    target = target_for(kind)
    ready = tmp_path / "ready"
    holder = _spawn("hold", kind, target, str(ready), "0.5", "0.5")
    try:
        _wait_for(ready, holder)
        holder.send_signal(signal.SIGSTOP)
        time.sleep(1.0)  # past the holder's lease
        with open_sync_saver(kind, target) as saver:
            app = build(saver)
            out = app.invoke(run_input("next"), CONFIG)
            assert out["log"] == ["hold", "next", "a:next", "b:next"]
            before = [t.checkpoint["id"] for t in saver.list(CONFIG)]
            head = saver.get_tuple(CONFIG)
            assert head is not None
            holder.send_signal(signal.SIGCONT)
            woken_out, woken_err = holder.communicate(timeout=120)
            # nothing of the woken holder reached the thread
            assert [t.checkpoint["id"] for t in saver.list(CONFIG)] == before
            after = saver.get_tuple(CONFIG)
            assert after is not None and after.pending_writes == head.pending_writes
            assert build(saver).get_state(CONFIG).values["log"] == out["log"]
            check_linear_history(saver, "busy")
            if holder.returncode < 0 and sys.version_info[:3] == (3, 13, 0):
                # seen once in CI: CPython 3.13.0's process crashed (SIGSEGV) on waking
                # from SIGSTOP; the thread is intact (checked above), the report is lost
                pytest.xfail(f"the woken holder died of signal {-holder.returncode} on 3.13.0")
            assert holder.returncode == 0, woken_err
            lines = [json.loads(line) for line in woken_out.splitlines() if line.strip()]
            ((msg, status, detail),) = lines
            assert (msg, status) == ("hold", "lost")
            assert "busy" in detail and "no longer held" in detail
    finally:
        if holder.poll() is None:
            holder.send_signal(signal.SIGCONT)
            holder.kill()
            holder.wait()
