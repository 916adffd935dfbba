"""``stategraph studio`` on the command line, in-process and as a real server process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from stategraph.cli._main import main
from stategraph.cli._studio import is_loopback

from .conftest import EXAMPLES, free_port


def test_loopback_detection():
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert is_loopback("127.3.4.5")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    assert not is_loopback("example.org")


def test_refuses_unsafe_or_incomplete_command_lines(capsys, demo_db, monkeypatch):
    monkeypatch.delenv("STATEGRAPH_STUDIO_TOKEN", raising=False)
    monkeypatch.delenv("STATEGRAPH_SQLITE", raising=False)
    assert main(["studio", "--sqlite", demo_db, "--host", "0.0.0.0"]) == 2
    assert "give --token" in capsys.readouterr().err
    assert main(["studio", "--sqlite", str(Path(demo_db).parent / "missing.sqlite")]) == 3
    assert "No such SQLite file" in capsys.readouterr().err
    assert main(["studio"]) == 2
    assert "--sqlite FILE or --postgres DSN" in capsys.readouterr().err
    assert main(["studio", "--sqlite", demo_db, "--store", "/nonexistent/store"]) == 3
    assert "No such store file" in capsys.readouterr().err


def _get(url: str, **headers: str) -> tuple[int, str]:
    req = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _post(url: str, body: object) -> tuple[int, str]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.fixture
def serve(demo_db):
    procs = []

    def start(*extra: str) -> str:
        port = free_port()
        cmd = [
            sys.executable, "-m", "stategraph.cli._main", "studio",
            f"{EXAMPLES / 'studio_demo.py'}:graph", "--sqlite", demo_db,
            "--port", str(port), *extra,
        ]  # fmt: skip
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
        procs.append(proc)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if _get(base + "/ok", **({"x-api-key": extra[-1]} if "--token" in extra else {}))[
                    0
                ] in (200, 401):
                    return base
            except OSError:
                time.sleep(0.1)
        proc.kill()
        raise AssertionError(
            f"the studio did not start: {proc.stdout.read() if proc.stdout else ''}"
        )

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=10)


def test_read_only_server_process(serve, demo_db):
    base = serve()
    status, page = _get(base + "/")
    assert status == 200 and 'data-thread="waiting"' in page and "read-only" in page
    status, body = _post(base + "/threads/waiting/state", {"values": {"topic": "x"}})
    assert status == 403 and "--allow-writes" in body
    status, body = _get(base + "/threads/waiting/state")
    assert status == 200 and json.loads(body)["next"] == ["review"]


def test_token_server_process(serve):
    base = serve("--allow-writes", "--token", "tok-123")
    assert _get(base + "/")[0] == 401
    status, body = _get(base + "/threads/failed/state", **{"Authorization": "Bearer tok-123"})
    assert status == 200 and json.loads(body)["values"]["topic"] == "forbidden lore"


def test_the_server_process_applies_its_request_limits(serve):
    """``stategraph studio --header-timeout/--body-timeout/--max-body-mib``: a client
    that never finishes its headers is cut off, a body too large is 413."""
    import socket

    base = serve("--header-timeout", "0.5", "--body-timeout", "0.5", "--max-body-mib", "1")
    port = int(base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        sock.settimeout(5)
        while sock.recv(4096):
            pass
        assert time.monotonic() - started < 3
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(
            b"POST /threads/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
            b"application/json\r\nContent-Length: 2000000\r\n\r\n"
        )  # answered before the body is sent
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413") and b"--max-body-mib" in answer
    status, _ = _post(base + "/threads/search", {"limit": 1})
    assert status == 200
