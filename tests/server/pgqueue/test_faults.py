"""Fault tests of the PostgreSQL run queue on the real database (slow).

Stand-in worker processes (``standin_worker.py``) run a real ``StateGraph`` that
checkpoints every step with ``AsyncPostgresSaver``: SIGKILL them at random points
mid-run, restart PostgreSQL under load, race cron ticks across processes, and measure
1 against 2 worker processes.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
import uuid

import pytest
from tests.checkpoint.saver_harness import PG_URL, require_postgres
from tests.server.pgqueue.fleet import ROOT, Fleet, drop, enqueue, outcome, prepare
from tests.server.pgqueue.private_pg import PrivatePostgres, find_bin

pytestmark = [pytest.mark.slow, pytest.mark.server]

STEPS = 6


def schema_name(tag: str) -> str:
    return f"sg_pgq_{tag}_{uuid.uuid4().hex[:8]}"


def check_exactly_once(dsn: str, schema: str, run_ids: list[str], steps: int) -> dict:
    """Every run succeeded once (one procrastinate ``succeeded`` event) and its thread
    holds the state of one uninterrupted run: resumed from its checkpoints, no step
    applied twice."""
    out = outcome(dsn, schema, run_ids)
    assert sorted(out) == sorted(run_ids)
    for run_id, got in out.items():
        assert got["status"] == "succeeded", (run_id, got)
        assert got["final"] == "success", (run_id, got)
        assert got["succeeded_events"] == 1, (run_id, got)
        assert got["n"] == steps, (run_id, got)
        assert got["log"] == list(range(1, steps + 1)), (run_id, got)
    return out


@pytest.mark.timeout(480)
def test_sigkill_at_random_points_every_run_completes_exactly_once() -> None:
    require_postgres()
    schema = schema_name("kill")
    prepare(PG_URL, schema)
    rng = random.Random(24)
    fleet = Fleet(PG_URL, schema, lease=1.0, slots=1)
    try:
        workers = [fleet.start() for _ in range(3)]
        for w in workers:
            fleet.wait_ready(w)
        run_ids = enqueue(PG_URL, schema, 50, steps=STEPS, pause=0.12)
        mid_run_kills = 0
        killed_runs: set[str] = set()
        deadline = time.monotonic() + 240
        while mid_run_kills < 22 and time.monotonic() < deadline:
            if all(r in fleet.finished for r in run_ids):
                break
            # spread the kills over many runs: prefer a worker on a run not hit before
            busy = [w for w in workers if w.popen.poll() is None and set(w.claimed) - killed_runs]
            if not busy:
                time.sleep(0.02)
                continue
            victim = rng.choice(busy)
            time.sleep(rng.uniform(0.0, 0.35))
            if victim.claimed:  # still mid-run: the kill lands inside a run
                mid_run_kills += 1
                killed_runs.update(victim.claimed)
            fleet.kill(victim)
            workers.remove(victim)
            workers.append(fleet.start())  # a replacement; it joins when it is ready
        assert mid_run_kills >= 20, f"only {mid_run_kills} kills landed mid-run"
        fleet.wait_finished(run_ids, timeout=180)
        fleet.stop_all()
        out = check_exactly_once(PG_URL, schema, run_ids, STEPS)
        taken_over = {run_id for run_id, got in out.items() if got["attempt"] > 1}
        # each run hit mid-run went on in another claim, from its last checkpoint (but a
        # kill may land just after a finish committed, before the worker printed it)
        assert len(killed_runs - taken_over) <= 2, killed_runs - taken_over
        assert len(taken_over) >= 15, f"only {len(taken_over)} runs were taken over"
        assert all(count == 1 for count in fleet.finished.values())
    finally:
        fleet.stop_all()
        if not os.environ.get("SG_PGQ_KEEP"):
            drop(PG_URL, schema)
        else:
            print("kept schema", schema)
            for p in fleet.procs:
                print(p.popen.pid, p.lines)


@pytest.mark.timeout(420)
def test_postgres_restart_during_load_runs_resume() -> None:
    bindir = find_bin()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl) on this machine")
    pg = PrivatePostgres(bindir)
    pg.start()
    schema = "sg_pgq_restart"
    fleet = Fleet(pg.dsn, schema, lease=2.0, slots=2)
    try:
        prepare(pg.dsn, schema)
        workers = [fleet.start() for _ in range(2)]
        for w in workers:
            fleet.wait_ready(w)
        run_ids = enqueue(pg.dsn, schema, 40, steps=STEPS, pause=0.05)
        deadline = time.monotonic() + 120
        while len(fleet.finished) < 8:
            assert time.monotonic() < deadline, "the load never got going"
            time.sleep(0.05)
        while not any(p.claimed for p in fleet.procs):  # restart with runs in flight
            time.sleep(0.005)
        started = pg.started_at()
        before = len(fleet.finished)
        pg.restart()
        assert pg.started_at() > started, "the server did not restart"
        fleet.wait_finished(run_ids, timeout=240)
        assert before < len(run_ids), "every run had finished before the restart"
        assert all(p.popen.poll() is None for p in fleet.procs), "a worker died"
        fleet.stop_all()
        check_exactly_once(pg.dsn, schema, run_ids, STEPS)
    finally:
        fleet.stop_all()
        pg.stop()


CRON_SCRIPT = """
import asyncio, random, sys
from stategraph.server._pgqueue import PostgresRunQueue

async def main(dsn, schema, seed):
    rng = random.Random(seed)
    queue = PostgresRunQueue(dsn, schema=schema)
    await queue.setup()
    keys = [(f"cron-{c}", 1_800_000_000.0 + 60.0 * t) for c in range(3) for t in range(120)]
    rng.shuffle(keys)
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(0, len(keys), 8):
        batch = keys[i:i + 8]
        fired = await asyncio.gather(*(queue.claim_tick(c, t) for c, t in batch))
        for (c, t), ok in zip(batch, fired):
            if ok:
                print("fired", c, t, flush=True)
    await queue.aclose()

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


@pytest.mark.timeout(180)
def test_two_processes_racing_for_cron_ticks_fire_each_tick_once() -> None:
    require_postgres()
    schema = schema_name("cron")
    prepare(PG_URL, schema)
    try:
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", CRON_SCRIPT, PG_URL, schema, str(seed)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            )
            for seed in (1, 2)
        ]
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        for p in procs:  # both start claiming together
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        outs = [p.communicate(timeout=150)[0] for p in procs]
        assert [p.returncode for p in procs] == [0, 0]
        fired = [tuple(line.split()[1:]) for out in outs for line in out.splitlines()]
        assert len(fired) == 3 * 120 == len(set(fired))  # every tick once, none twice
        assert all(out.count("fired") > 0 for out in outs), "one process fired everything"
    finally:
        drop(PG_URL, schema)


@pytest.mark.timeout(480)
@pytest.mark.skipif(
    not os.environ.get("STATEGRAPH_PGQ_BENCH"),
    reason="a measurement, not a check: set STATEGRAPH_PGQ_BENCH=1 to run it",
)
def test_throughput_of_one_and_two_worker_processes() -> None:
    """Stand-in runs (4 steps of 10 ms CPU, a checkpoint each) through 1, then 2,
    worker processes; prints runs/s, the speed-up, and the queue's share of the time."""
    require_postgres()
    figures = {}
    for procs in (1, 2):
        schema = schema_name(f"tp{procs}")
        prepare(PG_URL, schema)
        fleet = Fleet(PG_URL, schema, lease=10.0, slots=2)
        try:
            workers = [fleet.start() for _ in range(procs)]
            for w in workers:
                fleet.wait_ready(w)
            start = time.monotonic()
            run_ids = enqueue(PG_URL, schema, 60, steps=4, cpu=0.01)
            fleet.wait_finished(run_ids, timeout=300)
            elapsed = time.monotonic() - start
            stats = fleet.stop_all()
            queue_s = sum(float(s[1]) for s in stats)
            run_s = sum(float(s[2]) for s in stats)
            figures[procs] = (len(run_ids) / elapsed, queue_s / (queue_s + run_s))
            check_exactly_once(PG_URL, schema, run_ids, 4)
        finally:
            fleet.stop_all()
            drop(PG_URL, schema)
    ratio = figures[2][0] / figures[1][0]
    print(
        f"\nthroughput: 1 process {figures[1][0]:.1f} runs/s (queue share {figures[1][1]:.0%}),"
        f" 2 processes {figures[2][0]:.1f} runs/s (queue share {figures[2][1]:.0%}),"
        f" speed-up {ratio:.2f}x"
    )
    assert figures[1][0] > 0 and figures[2][0] > 0
