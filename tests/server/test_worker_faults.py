"""Fault tests: workers SIGKILLed mid-run lose nothing.

An API process (``--workers 0``) and two ``stategraph worker`` processes share the
queue. Each round starts a ten-step run, SIGKILLs the worker executing it at a random
moment, and starts a fresh worker; the run's claim expires, the other worker takes it
over from the last checkpoint, and the client joining the run sees it finish. Every
run completes exactly once, with the final state the graph gives when run locally.
"""

from __future__ import annotations

import random
import shutil
import signal
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

langgraph_sdk = pytest.importorskip("langgraph_sdk")
from langgraph_sdk import get_sync_client  # noqa: E402
from tests.server.conftest import BACKENDS, PG, ServerProcess, reset_postgres  # noqa: E402

pytestmark = [pytest.mark.server, pytest.mark.slow]

LEASE = "1"
ROUNDS = 20


def _expected() -> dict[str, Any]:
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "app"))
    import graphs  # type: ignore[import-not-found]

    from stategraph.checkpoint.memory import InMemorySaver

    local = graphs.marathon.copy(checkpointer=InMemorySaver())
    out: dict[str, Any] = local.invoke({"n": 0}, {"configurable": {"thread_id": "local"}})
    return out


class Cluster:
    """An API process and two workers on one data directory (and database)."""

    def __init__(self, data: Path, postgres: str | None) -> None:
        self.data = data
        self.postgres = postgres
        common = ["--lease-seconds", LEASE]
        self.api = ServerProcess(data, postgres=postgres, extra=["--workers", "0", *common])
        self.workers = [self._worker() for _ in range(2)]

    def _worker(self) -> ServerProcess:
        return ServerProcess(
            self.data,
            command="worker",
            postgres=self.postgres,
            extra=["--lease-seconds", LEASE, "--concurrency", "2"],
        )

    def holder(self, run_id: str) -> ServerProcess | None:
        """The worker process executing ``run_id`` now (from the run's record)."""
        query = "SELECT worker_id FROM sg_srv_runs WHERE run_id = ? AND status = 'running'"
        if self.postgres:
            import psycopg

            with psycopg.connect(self.postgres, autocommit=True) as conn:
                row = conn.execute(query.replace("?", "%s"), (run_id,)).fetchone()
        else:
            with sqlite3.connect(self.data / "server.sqlite") as conn:
                row = conn.execute(query, (run_id,)).fetchone()
        if row is None or row[0] is None:
            return None
        pid = int(row[0].split(":")[1])
        return next((w for w in self.workers if w.proc.pid == pid), None)

    def replace(self, dead: ServerProcess) -> None:
        dead.stop(signal.SIGKILL)
        self.workers = [w for w in self.workers if w is not dead] + [self._worker()]

    def stop(self) -> None:
        for proc in [*self.workers, self.api]:
            proc.stop()


@pytest.fixture(params=BACKENDS)
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cluster]:
    postgres = PG if request.param == "postgres" else None
    if postgres:
        postgres = reset_postgres(postgres)
    made = Cluster(tmp_path / "data", postgres)
    yield made
    made.stop()
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.mark.timeout(900)
def test_sigkilled_workers_lose_nothing(cluster: Cluster) -> None:
    expected = _expected()
    client = get_sync_client(url=cluster.api.url)
    rng = random.Random(24)
    kills = 0
    durations: list[float] = []
    for _ in range(ROUNDS):
        thread = client.threads.create()
        tid = thread["thread_id"]
        run = client.runs.create(tid, "marathon", input={"n": 0})
        deadline = time.monotonic() + 30  # a busy machine starts a worker slowly
        holder = None
        while holder is None and time.monotonic() < deadline:
            holder = cluster.holder(run["run_id"])
            time.sleep(0.01)
        assert holder is not None, "no worker claimed the run"
        time.sleep(rng.uniform(0.0, 0.9))
        if cluster.holder(run["run_id"]) is holder:
            cluster.replace(holder)
            kills += 1
        joined_at = time.monotonic()
        out = client.runs.join(tid, run["run_id"])
        durations.append(time.monotonic() - joined_at)
        assert out == expected
        runs = client.runs.list(tid)
        assert [(r["run_id"], r["status"]) for r in runs] == [(run["run_id"], "success")]
        state = client.threads.get_state(tid)
        assert state["values"] == expected and state["next"] == []
        assert client.threads.get(tid)["status"] == "idle"
    assert kills >= ROUNDS * 0.7
    print(f"kills {kills}/{ROUNDS}; join waited {sorted(round(d, 1) for d in durations)}")
