"""Fixtures of the server tests: a real ``stategraph serve`` process per test module.

Each module that uses ``server`` gets its own server (a subprocess on a free port, its
own data directory), once per backend: embedded SQLite, and PostgreSQL when
``STATEGRAPH_TEST_PG`` names a database.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

APP = Path(__file__).parent / "app"
PG = os.environ.get("STATEGRAPH_TEST_PG")


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _have_psycopg() -> bool:
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        return False
    return True


BACKENDS = ["sqlite"] + (["postgres"] if PG and _have_psycopg() else [])


class ServerProcess:
    """A ``stategraph serve`` (or ``worker``) subprocess."""

    def __init__(
        self,
        data_dir: Path,
        *,
        command: str = "serve",
        postgres: str | None = None,
        config: Path = APP / "langgraph.json",
        extra: list[str] | None = None,
        env: dict[str, str] | None = None,
        port: int | None = None,
        wait: bool = True,
    ) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data_dir = data_dir
        args = [sys.executable, "-m", "stategraph.cli._main", command, "--config", str(config)]
        args += ["--data-dir", str(data_dir)]
        if command == "serve":
            args += ["--port", str(self.port)]
        if postgres:
            args += ["--postgres", postgres]
        args += extra or []
        self.log = data_dir.parent / f"{data_dir.name}-{command}-{self.port}.log"
        self._log_file = open(self.log, "wb")
        self.proc = subprocess.Popen(
            args,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            cwd=str(config.parent),
        )
        if wait and command == "serve":
            self.wait_ready()

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Wait until ``/ok`` answers."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited:\n{self.log.read_text()}")
            try:
                with urllib.request.urlopen(self.url + "/ok", timeout=1) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"the server did not start:\n{self.log.read_text()}")

    def stop(self, sig: int | None = None) -> None:
        """Stop the process (SIGTERM unless ``sig``) and wait for it."""
        if self.proc.poll() is None:
            if sig is None:
                self.proc.terminate()
            else:
                self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log_file.close()


def reset_postgres(dsn: str) -> str:
    """A new, empty database on ``dsn``'s server for one module's server; its DSN.

    Each server (its records, run queue, savers and leases) gets a database of its own:
    two servers on one database share the run queue, so one server's worker could take
    another module's run and the client waiting for it waited until the test timed out.
    The database is dropped when the test process exits (``atexit``: test modules
    import this file under another name than pytest's, so a list kept here for a hook
    would not be the one filled).
    """
    import atexit
    import uuid

    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    params = conninfo_to_dict(dsn)
    name = f"{params.get('dbname') or 'test'}_srv_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    atexit.register(_drop_database, make_conninfo(dsn, dbname="postgres"), name)
    return make_conninfo(dsn, dbname=name)


def _drop_database(admin: str, name: str) -> None:
    """Drop a database made by :func:`reset_postgres` (through the maintenance one)."""
    import psycopg

    try:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    except psycopg.Error:
        pass  # the server is gone: a later run's clean-up can drop it


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """A server on the test app, per module and backend."""
    data = tmp_path_factory.mktemp(f"server-{request.param}")
    postgres = PG if request.param == "postgres" else None
    if postgres:
        postgres = reset_postgres(postgres)
    proc = ServerProcess(data / "data", postgres=postgres)
    yield proc
    proc.stop()
    shutil.rmtree(data, ignore_errors=True)


# A server test starts real processes (the server, workers, PostgreSQL-backed queues)
# and drives them through LangGraph's SDKs: on a loaded 2-core machine one such setup
# took up to 38 s, so the suite-wide 120 s cut two of them short. They get 300 s (still
# bounded: a hang fails) unless a test sets its own limit.
SERVER_TEST_TIMEOUT = 300


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(SERVER_TEST_TIMEOUT))
