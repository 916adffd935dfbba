"""A private PostgreSQL server for the restart test, so restarting it disturbs nobody.

The machine's shared cluster (``STATEGRAPH_TEST_PG``) serves every other test and
engineer; restarting it under them would fail their runs. This starts a throwaway
server from the installed PostgreSQL binaries (``initdb`` + ``pg_ctl``) on a free
port in a temporary directory, restarts it on demand (``pg_ctl restart -m fast``:
every connection is cut, as in a real restart) and removes it afterwards. As root it
runs the server as the ``postgres`` user (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import psycopg

__all__ = ["PrivatePostgres", "find_bin"]


def find_bin() -> Path | None:
    """The newest installed PostgreSQL ``bin`` folder with ``initdb`` and ``pg_ctl``."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: (
            int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0
        ),
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrivatePostgres:
    """One throwaway PostgreSQL server (trust auth, user ``postgres``, db ``postgres``)."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.port = _free_port()
        self.root = Path(tempfile.mkdtemp(prefix="sg-pgq-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self.prefix = ["runuser", "-u", "postgres", "--"]
        self.dsn = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, timeout: float = 120) -> None:
        subprocess.run(
            [*self.prefix, *args], check=True, timeout=timeout, capture_output=True, text=True
        )

    def _ctl(self, action: str, *extra: str) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} "
            "-c fsync=off -c max_connections=60"
        )
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            *extra,
            action,
        )

    def start(self) -> None:
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
        )
        self._ctl("start")

    def restart(self) -> None:
        """Fast restart: active connections are terminated, the server comes back."""
        self._ctl("restart", "-m", "fast")

    def started_at(self) -> float:
        """When the running server started (``pg_postmaster_start_time()``, epoch)."""
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            row = conn.execute("SELECT extract(epoch FROM pg_postmaster_start_time())").fetchone()
        assert row is not None
        return float(row[0])

    def stop(self) -> None:
        try:
            self._ctl("stop", "-m", "immediate")
        except subprocess.SubprocessError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)
