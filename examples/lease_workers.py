"""Many threads, many workers: worker processes sharing one PostgreSQL database.

Each worker process takes jobs from a queue table (``FOR UPDATE SKIP LOCKED``) and runs
the job's thread with ``PostgresSaver``. Every run is guarded by its thread's lease
(``multitask_strategy="enqueue"``: should two workers get jobs of one thread at once,
the second waits its turn instead of forking the thread). On SIGTERM a worker drains:
the run in flight stops at its next step boundary with everything saved, the job goes
back to the queue marked "resume", and the worker exits; any worker continues the
thread with ``invoke(None, config)``.

Run a demo (needs ``pip install "stategraph[postgres]" psycopg-pool`` and a PostgreSQL
server)::

    python examples/lease_workers.py demo --dsn postgresql://postgres@127.0.0.1:5432/test \\
        --workers 2 --jobs 40 --threads 8

``demo`` creates a fresh schema, queues the jobs, starts the workers, waits until the
queue is empty, checks every thread and prints one JSON line (runs/s included).
``worker`` is one worker process (what you would run on each host).
"""

from __future__ import annotations

import argparse
import json
import operator
import os
import subprocess
import sys
import time
import uuid
from typing import Annotated, Any

from typing_extensions import TypedDict

from stategraph.graph import END, START, StateGraph
from stategraph.types import Send

KINDS = ("chat", "fanout", "cpu")
"""The mixed workload: a two-step reply, a fan-out of four tasks, a CPU-bound step."""


class State(TypedDict, total=False):
    kind: str
    message: str
    log: Annotated[list[str], operator.add]


def _spin(seconds: float) -> None:
    """Pure-Python CPU work for about ``seconds``."""
    end = time.process_time() + seconds
    n = 0
    while time.process_time() < end:
        n += 1


def build_graph(saver: Any, slow: float = 0.0) -> Any:
    """The graph every worker runs. ``slow`` > 0 makes ``plan`` sleep that long
    (the tests use it to catch a worker in the middle of a run)."""

    def plan(state: State) -> dict[str, Any]:
        if slow:
            time.sleep(slow)
        return {"log": [f"plan:{state['message']}"]}

    def route(state: State) -> Any:
        if state["kind"] == "fanout":
            return [Send("work", {"message": f"{state['message']}.{i}"}) for i in range(4)]
        return "crunch" if state["kind"] == "cpu" else "reply"

    def work(item: dict[str, str]) -> dict[str, Any]:
        return {"log": [f"work:{item['message']}"]}

    def crunch(state: State) -> dict[str, Any]:
        _spin(0.01)
        return {"log": [f"crunch:{state['message']}"]}

    def reply(state: State) -> dict[str, Any]:
        return {"log": [f"reply:{state['message']}"]}

    builder = StateGraph(State)
    builder.add_node("plan", plan)
    builder.add_node("work", work)
    builder.add_node("crunch", crunch)
    builder.add_node("reply", reply)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", route, ["work", "crunch", "reply"])
    for name in ("work", "crunch", "reply"):
        builder.add_edge(name, END)
    return builder.compile(checkpointer=saver)


def expected_entries(kind: str, message: str) -> list[str]:
    """What one completed job adds to its thread's ``log``, in order."""
    if kind == "fanout":
        return [f"plan:{message}", *(f"work:{message}.{i}" for i in range(4))]
    return [f"plan:{message}", f"{'crunch' if kind == 'cpu' else 'reply'}:{message}"]


JOBS_DDL = """
CREATE TABLE IF NOT EXISTS demo_jobs (
    id BIGSERIAL PRIMARY KEY,
    thread_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued',
    resume BOOLEAN NOT NULL DEFAULT FALSE,
    worker TEXT,
    started DOUBLE PRECISION,
    finished DOUBLE PRECISION
)
"""

# the oldest queued job of a thread that has no job running; SKIP LOCKED lets workers
# claim different jobs at once without waiting for each other
CLAIM = """
UPDATE demo_jobs SET status = 'running', worker = %s, started = extract(epoch from now())
WHERE id = (
    SELECT j.id FROM demo_jobs AS j
    WHERE j.status = 'queued' AND NOT EXISTS (
        SELECT 1 FROM demo_jobs AS o WHERE o.thread_id = j.thread_id
        AND (o.status = 'running' OR (o.status = 'queued' AND o.id < j.id)))
    ORDER BY j.id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id, thread_id, kind, message, resume
"""


def unleased_saver_class() -> Any:
    """``PostgresSaver`` with the in-process lease fallback instead of database
    leases: no cross-process exclusion, no fencing. Only for measuring what leases
    cost (``bench/workers.py --leases off``); the queue's claim already keeps one job
    per thread running, so the demo's threads stay exact without leases."""
    from stategraph.checkpoint.lease import LeaseSupport
    from stategraph.checkpoint.postgres import PostgresSaver

    primitives = ("acquire", "enqueue", "dequeue", "renew", "release", "rollback")
    body: dict[str, Any] = {f"lease_{p}": getattr(LeaseSupport, f"lease_{p}") for p in primitives}
    body.update(lease_fencing=False, lease_rollback_supported=False)
    return type("UnleasedPostgresSaver", (PostgresSaver,), body)


def worker(dsn: str, name: str, slow: float, stop_when_empty: bool, leases: bool = True) -> int:
    """Serve jobs until SIGTERM (or, with ``stop_when_empty``, until none is left);
    ``leases=False`` only for benchmarks (see :func:`unleased_saver_class`)."""
    import psycopg
    from psycopg_pool import ConnectionPool

    from stategraph.checkpoint.postgres import PostgresSaver
    from stategraph.errors import GraphDrained
    from stategraph.runtime import SignalDrain

    with (
        SignalDrain() as drain,
        ConnectionPool(dsn, min_size=1, max_size=4, kwargs={"autocommit": True}) as pool,
        psycopg.connect(dsn, autocommit=True) as queue,
    ):
        saver_class = PostgresSaver if leases else unleased_saver_class()
        graph = build_graph(saver_class(pool), slow)
        while not drain.received:
            row = queue.execute(CLAIM, (name,)).fetchone()
            if row is None:
                if (
                    stop_when_empty
                    and not queue.execute(
                        "SELECT 1 FROM demo_jobs WHERE status <> 'done' LIMIT 1"
                    ).fetchone()
                ):
                    return 0
                time.sleep(0.02)
                continue
            job_id, thread_id, kind, message, resume = row
            config = {"configurable": {"thread_id": thread_id}}
            run_input = None if resume else {"kind": kind, "message": message}
            try:
                graph.invoke(
                    run_input, config, control=drain.control(), multitask_strategy="enqueue"
                )
            except GraphDrained:
                # stopped at a step boundary, everything saved: any worker resumes it
                queue.execute(
                    "UPDATE demo_jobs SET status = 'queued', resume = TRUE, worker = NULL "
                    "WHERE id = %s",
                    (job_id,),
                )
                print(json.dumps({"worker": name, "drained": job_id}), flush=True)
                return 0
            queue.execute(
                "UPDATE demo_jobs SET status = 'done', finished = extract(epoch from now()) "
                "WHERE id = %s",
                (job_id,),
            )
    return 0


def queue_jobs(dsn: str, jobs: int, threads: int) -> None:
    """Create the queue table and add ``jobs`` jobs spread over ``threads`` threads."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(JOBS_DDL)
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO demo_jobs (thread_id, kind, message) VALUES (%s, %s, %s)",
                [(f"thread-{i % threads}", KINDS[i % len(KINDS)], f"m{i}") for i in range(jobs)],
            )


def check_threads(dsn: str) -> dict[str, Any]:
    """Every job's entries are in its thread's state exactly once, in job order."""
    import psycopg
    from psycopg_pool import ConnectionPool

    from stategraph.checkpoint.postgres import PostgresSaver

    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT thread_id, kind, message, status, started, finished FROM demo_jobs ORDER BY id"
        ).fetchall()
    with ConnectionPool(dsn, min_size=1, max_size=2, kwargs={"autocommit": True}) as pool:
        graph = build_graph(PostgresSaver(pool))
        expected: dict[str, list[str]] = {}
        for thread_id, kind, message, status, _, _ in rows:
            assert status == "done", (thread_id, message, status)
            expected.setdefault(thread_id, []).extend(expected_entries(kind, message))
        for thread_id, entries in expected.items():
            log = graph.get_state({"configurable": {"thread_id": thread_id}}).values["log"]
            assert log == entries, (thread_id, log, entries)
    started = min(r[4] for r in rows)
    finished = max(r[5] for r in rows)
    return {"jobs": len(rows), "threads": len(expected), "seconds": finished - started}


def demo(dsn: str, workers: int, jobs: int, threads: int, leases: bool = True) -> dict[str, Any]:
    """Queue the jobs in a fresh schema, run ``workers`` worker processes, check
    (``leases=False``: workers without database leases, for benchmarks)."""
    import psycopg

    schema = f"lease_demo_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    scoped = psycopg.conninfo.make_conninfo(dsn, options=f"-c search_path={schema}")
    try:
        queue_jobs(scoped, jobs, threads)
        procs = [
            subprocess.Popen(
                [sys.executable, __file__, "worker", "--dsn", scoped, "--name", f"w{i}"]
                + ([] if leases else ["--unleased"]),
                env={**os.environ, "LEASE_WORKERS_STOP_WHEN_EMPTY": "1"},
            )
            for i in range(workers)
        ]
        for proc in procs:
            assert proc.wait(timeout=600) == 0
        summary = check_threads(scoped)
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    summary["workers"] = workers
    summary["runs_per_s"] = round(summary["jobs"] / summary["seconds"], 1)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["demo", "worker"])
    parser.add_argument("--dsn", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--name", default=f"worker-{os.getpid()}")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--slow", type=float, default=0.0)
    parser.add_argument(
        "--unleased", action="store_true", help="no database leases (benchmarks only)"
    )
    args = parser.parse_args(argv)
    if args.mode == "worker":
        stop = os.environ.get("LEASE_WORKERS_STOP_WHEN_EMPTY") == "1"
        return worker(args.dsn, args.name, args.slow, stop, leases=not args.unleased)
    print(json.dumps(demo(args.dsn, args.workers, args.jobs, args.threads, not args.unleased)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
