"""Several server processes on one storage: crons fire once per tick however many
servers run; an API process SIGKILLed during a stream loses nothing (the worker goes
on, another API process's ``join_stream`` picks the run up)."""

from __future__ import annotations

import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

langgraph_sdk = pytest.importorskip("langgraph_sdk")
from langgraph_sdk import get_sync_client  # noqa: E402
from tests.server.conftest import BACKENDS, PG, ServerProcess, reset_postgres  # noqa: E402

pytestmark = [pytest.mark.server, pytest.mark.slow]


@pytest.fixture(params=BACKENDS)
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str | None]]:
    postgres = PG if request.param == "postgres" else None
    if postgres:
        postgres = reset_postgres(postgres)
    yield tmp_path / "data", postgres
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_two_servers_fire_each_cron_tick_once(storage: tuple[Path, str | None]) -> None:
    data, postgres = storage
    servers = [ServerProcess(data, postgres=postgres) for _ in range(2)]
    try:
        client = get_sync_client(url=servers[0].url)
        thread = client.threads.create()
        cron = client.crons.create_for_thread(
            thread["thread_id"], "steps", schedule="* * * * * */1", input={"n": 0}
        )
        started = time.time()
        time.sleep(4.5)
        client.crons.delete(cron["cron_id"])
        elapsed = time.time() - started
        time.sleep(1.0)
        runs = client.runs.list(thread["thread_id"], limit=100)
        seconds = sorted(r["created_at"][:19] for r in runs)
        assert 2 <= len(runs) <= elapsed + 2, seconds
        assert len(set(seconds)) == len(seconds), f"a tick fired twice: {seconds}"
    finally:
        for server in servers:
            server.stop()


def test_api_killed_during_a_stream_loses_nothing(storage: tuple[Path, str | None]) -> None:
    data, postgres = storage
    api = ServerProcess(data, postgres=postgres, extra=["--workers", "0"])
    worker = ServerProcess(data, command="worker", postgres=postgres)
    second = None
    try:
        client = get_sync_client(url=api.url)
        thread = client.threads.create()
        seen: list[tuple[str, str | None]] = []
        stream = client.runs.stream(
            thread["thread_id"], "marathon", input={"n": 0}, stream_mode="updates"
        )
        run_id = None
        for part in stream:
            if part.event == "metadata":
                run_id = part.data["run_id"]
            seen.append((part.event, getattr(part, "id", None)))
            if sum(1 for e, _ in seen if e == "updates") == 3:
                break
        assert run_id is not None
        api.stop(signal.SIGKILL)
        second = ServerProcess(data, postgres=postgres, extra=["--workers", "0"])
        client2 = get_sync_client(url=second.url)
        rest = [
            (part.event, part.data)
            for part in client2.runs.join_stream(thread["thread_id"], run_id, last_event_id="3")
        ]
        updates = [next(iter(data)) for event, data in rest if event == "updates"]
        assert updates == [f"m{i}" for i in range(3, 10)]
        assert client2.runs.get(thread["thread_id"], run_id)["status"] == "success"
        final = client2.threads.get_state(thread["thread_id"])["values"]
        assert final["n"] == 10 and final["log"] == [f"m{i}" for i in range(10)]
    finally:
        for proc in (second, worker, api):
            if proc is not None:
                proc.stop()
