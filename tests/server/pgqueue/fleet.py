"""Worker processes for the fault tests: start, read, kill, and check the outcome."""

from __future__ import annotations

import asyncio
import os
import queue as queue_mod
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from tests.server.pgqueue.standin_worker import build_graph

from stategraph.checkpoint.postgres.aio import AsyncPostgresSaver
from stategraph.server._pgqueue import PostgresRunQueue
from stategraph.server._queue import QueuedRun

ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Proc:
    """One worker process and what it printed."""

    popen: subprocess.Popen[str]
    lines: list[list[str]] = field(default_factory=list)
    claimed: dict[str, float] = field(default_factory=dict)
    """Runs claimed and not (yet) finished by this process, with the claim time."""


class Fleet:
    """Stand-in worker processes on one queue schema; every line they print is kept."""

    def __init__(self, dsn: str, schema: str, *, lease: float = 1.0, slots: int = 1) -> None:
        self.dsn = dsn
        self.schema = schema
        self.lease = lease
        self.slots = slots
        self.procs: list[Proc] = []
        self.events: queue_mod.Queue[tuple[Proc, list[str]]] = queue_mod.Queue()
        self.finished: dict[str, int] = {}

    def start(self) -> Proc:
        popen = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.server.pgqueue.standin_worker",
                self.dsn,
                self.schema,
                "--lease",
                str(self.lease),
                "--slots",
                str(self.slots),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        proc = Proc(popen)
        self.procs.append(proc)
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()
        return proc

    def _read(self, proc: Proc) -> None:
        assert proc.popen.stdout is not None
        for line in proc.popen.stdout:
            parts = line.split()
            proc.lines.append(parts)
            if parts and parts[0] == "claimed":
                proc.claimed[parts[1]] = time.monotonic()
            elif parts and parts[0] in ("finished", "lost", "error") and len(parts) > 1:
                proc.claimed.pop(parts[1], None)
                if parts[0] == "finished":
                    self.finished[parts[1]] = self.finished.get(parts[1], 0) + 1
            self.events.put((proc, parts))

    def wait_ready(self, proc: Proc, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while ["ready"] not in proc.lines:
            if proc.popen.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"worker did not start: {proc.lines}")
            time.sleep(0.02)

    def kill(self, proc: Proc) -> None:
        proc.popen.send_signal(signal.SIGKILL)
        proc.popen.wait()

    def stop_all(self) -> list[list[str]]:
        """SIGTERM every live worker; their ``stats`` lines."""
        live = [p for p in self.procs if p.popen.poll() is None]
        for p in live:
            p.popen.send_signal(signal.SIGTERM)
        stats = []
        for p in live:
            try:
                p.popen.wait(30)
            except subprocess.TimeoutExpired:
                p.popen.kill()
                p.popen.wait()
            stats += [line for line in p.lines if line and line[0] == "stats"]
        return stats

    def wait_finished(self, run_ids: list[str], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not all(r in self.finished for r in run_ids):
            if time.monotonic() > deadline:
                missing = [r for r in run_ids if r not in self.finished]
                raise AssertionError(f"{len(missing)} runs never finished: {missing[:5]}")
            time.sleep(0.05)


def prepare(dsn: str, schema: str) -> None:
    """A fresh schema with the queue and the checkpoint tables set up."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))

    async def go() -> None:
        q = PostgresRunQueue(dsn, schema=schema)
        await q.setup()
        await q.aclose()
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            await AsyncPostgresSaver(conn).setup()

    asyncio.run(go())


def drop(dsn: str, schema: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def enqueue(dsn: str, schema: str, count: int, **kwargs: Any) -> list[str]:
    """``count`` runs, one per new thread; their run ids."""
    runs = [
        QueuedRun(str(uuid.uuid4()), f"thread-{i}-{uuid.uuid4().hex[:6]}", "standin", kwargs)
        for i in range(count)
    ]

    async def go() -> None:
        q = PostgresRunQueue(dsn, schema=schema)
        for run in runs:
            await q.enqueue(run)
        await q.aclose()

    asyncio.run(go())
    return [r.run_id for r in runs]


def outcome(dsn: str, schema: str, run_ids: list[str]) -> dict[str, Any]:
    """Per run: procrastinate's job status, its ``succeeded`` events, the claims it
    took, and the final checkpointed state (``n``, ``log``)."""
    out: dict[str, Any] = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        rows = conn.execute(
            """
            SELECT r.run_id, r.thread_id, j.status::text, r.attempt, r.final_status,
                   (SELECT count(*) FROM procrastinate_events e
                     WHERE e.job_id = j.id AND e.type = 'succeeded')
              FROM sg_runs r JOIN procrastinate_jobs j ON j.id = r.job_id
             WHERE r.run_id = ANY(%s)
            """,
            (run_ids,),
        ).fetchall()
        threads = {r[0]: r[1] for r in rows}
        for run_id, _thread, status, attempt, final, succeeded in rows:
            out[run_id] = {
                "status": status,
                "attempt": attempt,
                "final": final,
                "succeeded_events": succeeded,
            }

    async def states() -> None:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            graph = build_graph(AsyncPostgresSaver(conn))
            for run_id, thread in threads.items():
                state = await graph.aget_state({"configurable": {"thread_id": thread}})
                values = state.values
                out[run_id]["n"] = values.get("n")
                out[run_id]["log"] = values.get("log")

    asyncio.run(states())
    return out
