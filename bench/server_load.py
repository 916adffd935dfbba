"""Load on an agent server: the human-in-the-loop flow with C concurrent clients.

``python -m bench.server_load [--server stategraph|stategraph-pg|langgraph-dev|URL]
[--clients 1 10 50] [--seconds 20] [--workers N] [--pg DSN] [--lgdev VENV]``

One flow = create a thread, stream a run to its interrupt, stream the resume to the
end (``tools/server_differential/app``'s ``agent`` graph, so every server runs the
same graph). Each client repeats flows for ``--seconds``. Reported per concurrency:
flows/s, p50/p99 time to first event (the first event after ``metadata``, i.e. the
run started), p99 flow latency, and the server's peak RSS (VmHWM of its processes).
The client is plain httpx (the same for every server, lighter than the SDK); client
and server share the machine, so the figures are the whole system's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "tools" / "server_differential" / "app"
HI = {"messages": [{"role": "user", "content": "hi"}]}


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _stream(http: httpx.AsyncClient, path: str, body: dict[str, Any]) -> float | None:
    """POST a streaming run; read it to the end; seconds to its first real event."""
    started = time.perf_counter()
    first: float | None = None
    async with http.stream(
        "POST", path, json=body, headers={"accept": "text/event-stream"}
    ) as reply:
        reply.raise_for_status()
        async for line in reply.aiter_lines():
            if line.startswith("event:") and first is None and "metadata" not in line:
                first = time.perf_counter() - started
            if line.startswith("event: error"):
                raise RuntimeError("the run failed")
    return first


async def _flow(http: httpx.AsyncClient) -> tuple[float, float]:
    started = time.perf_counter()
    thread = (await http.post("/threads", json={})).json()["thread_id"]
    base = {"assistant_id": "agent", "stream_mode": ["values"]}
    first = await _stream(http, f"/threads/{thread}/runs/stream", {**base, "input": HI})
    await _stream(http, f"/threads/{thread}/runs/stream", {**base, "command": {"resume": "yes"}})
    return (first if first is not None else float("nan")), time.perf_counter() - started


async def _load(url: str, clients: int, seconds: float) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=clients + 5, max_keepalive_connections=clients + 5)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as http:
        await _flow(http)  # warm-up
        stop = time.perf_counter() + seconds
        firsts: list[float] = []
        flows: list[float] = []
        errors = 0

        async def client() -> None:
            nonlocal errors
            while time.perf_counter() < stop:
                try:
                    first, total = await _flow(http)
                except Exception:
                    errors += 1
                    continue
                firsts.append(first)
                flows.append(total)

        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        elapsed = time.perf_counter() - started

    def pct(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")

    return {
        "clients": clients,
        "flows": len(flows),
        "errors": errors,
        "flows_per_s": len(flows) / elapsed,
        "ttfe_p50_ms": 1000 * statistics.median(firsts) if firsts else float("nan"),
        "ttfe_p99_ms": 1000 * pct(firsts, 0.99),
        "flow_p99_ms": 1000 * pct(flows, 0.99),
    }


def _tree(pid: int) -> list[int]:
    out = [pid]
    for child in Path("/proc").glob("[0-9]*"):
        try:
            fields = (child / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.extend(_tree(int(child.name)))
    return out


def _peak_rss_mb(pid: int) -> float:
    peak = 0
    for p in _tree(pid):
        try:
            text = Path(f"/proc/{p}/status").read_text()
        except OSError:
            continue
        found = re.search(r"VmHWM:\s+(\d+) kB", text)
        if found:
            peak = max(peak, int(found.group(1)))
    return peak / 1024


def _wait(url: str, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        if proc.poll() is not None:
            raise SystemExit(f"the server exited ({proc.returncode})")
        try:
            with urllib.request.urlopen(url + "/ok", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not start")


def _start(kind: str, args: argparse.Namespace, work: Path) -> tuple[str, subprocess.Popen[bytes]]:
    port = _port()
    url = f"http://127.0.0.1:{port}"
    app = work / "app"
    shutil.copytree(APP, app)
    log = open(work / "server.log", "wb")
    if kind == "langgraph-dev":
        for path in app.glob("*.py"):
            text = path.read_text().replace(
                "from stategraph.messages import", "from langchain_core.messages import"
            )
            path.write_text(re.sub(r"\bstategraph\.", "langgraph.", text))
        cmd = [
            str(Path(args.lgdev) / "bin" / "langgraph"),
            "dev",
            "--no-browser",
            "--no-reload",
            "--port",
            str(port),
        ]
    else:
        cmd = [sys.executable, "-m", "stategraph.cli._main", "serve", "--port", str(port)]
        cmd += ["--data-dir", str(work / "data"), "--workers", str(args.workers), "--no-ui"]
        if kind == "stategraph-pg":
            cmd += ["--postgres", args.pg]
    proc = subprocess.Popen(cmd, cwd=app, stdout=log, stderr=subprocess.STDOUT)
    _wait(url, proc)
    return url, proc


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--server", default="stategraph")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument(
        "--workers", type=int, default=10, help="runs at a time in stategraph serve"
    )
    parser.add_argument(
        "--pg",
        default=os.environ.get(
            "STATEGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/sg_server"
        ),
    )
    parser.add_argument("--lgdev", default="/work/scratch/server/lgdev")
    parser.add_argument("--json", type=Path, help="append the results here (one JSON per line)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="server-load-"))
    proc = None
    if args.server.startswith("http"):
        url = args.server
    else:
        url, proc = _start(args.server, args, work)
    try:
        print(f"{args.server}: flows/s, ttfe p50/p99 ms, flow p99 ms, peak RSS MB")
        for clients in args.clients:
            result = asyncio.run(_load(url, clients, args.seconds))
            result["server"] = args.server
            result["peak_rss_mb"] = _peak_rss_mb(proc.pid) if proc is not None else None
            print(
                f"  C={clients:3d}: {result['flows_per_s']:7.1f} flows/s  ttfe {result['ttfe_p50_ms']:7.1f} / "
                f"{result['ttfe_p99_ms']:7.1f}  flow p99 {result['flow_p99_ms']:8.1f}  "
                f"rss {result['peak_rss_mb'] or 0:6.1f}  ({result['flows']} flows, {result['errors']} errors)",
                flush=True,
            )
            if args.json:
                with args.json.open("a") as fh:
                    fh.write(json.dumps(result) + "\n")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
