"""Load on an agent server: the human-in-the-loop flow with C concurrent clients.

``python -m bench.server_load [--server stategraph|stategraph-pg|langgraph-dev|URL]
[--clients 1 10 50] [--seconds 20] [--workers N] [--pg DSN] [--lgdev VENV]
[--worker-procs 1 2 --rounds 3]``

One flow = create a thread, stream a run to its interrupt, stream the resume to the
end (``tools/server_differential/app``'s ``agent`` graph, so every server runs the
same graph). Each client repeats flows for ``--seconds``. Reported per concurrency:
flows/s, p50/p99 time to first event (the first event after ``metadata``, i.e. the
run started), p99 flow latency, and the server's peak RSS (VmHWM of its processes).
The client is plain httpx (the same for every server, lighter than the SDK); client
and server share the machine, so the figures are the whole system's.

``--worker-procs 1 2`` (with ``--server stategraph-pg``) measures worker scaling: the
API runs with ``--workers 0`` and, for each round, that many ``stategraph worker``
processes (``--concurrency`` = ``--workers``) are started, loaded, and stopped; the
settings alternate for ``--rounds`` rounds, so the machine's other load spreads over
all of them. Each round also reports the CPU each part spent per flow (API, workers,
the PostgreSQL backends of the database, this client) and the PostgreSQL
transactions per flow (``xact_commit`` of ``pg_stat_database``).
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


def _start(
    kind: str, args: argparse.Namespace, work: Path, workers: int | None = None
) -> tuple[str, subprocess.Popen[bytes]]:
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
        runs_here = args.workers if workers is None else workers
        cmd += ["--data-dir", str(work / "data"), "--workers", str(runs_here), "--no-ui"]
        if kind == "stategraph-pg":
            cmd += ["--postgres", args.pg]
    proc = subprocess.Popen(cmd, cwd=app, stdout=log, stderr=subprocess.STDOUT)
    _wait(url, proc)
    return url, proc


# -- worker scaling (--worker-procs) ------------------------------------------------------

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu(pids: list[int]) -> float:
    """CPU seconds (user + system, every thread) the processes ``pids`` have used."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / _TICK
    return total


class _PgProbe:
    """Committed transactions of the bench's database and the CPU of its backends."""

    def __init__(self, dsn: str) -> None:
        import psycopg

        self.conn = psycopg.connect(dsn, autocommit=True)
        self.db = self.conn.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]

    def sample(self) -> tuple[int, dict[int, float]]:
        self.conn.execute("SELECT pg_stat_clear_snapshot()")
        row = self.conn.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s",
            (self.db,),
        ).fetchone()
        pids = self.conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (self.db,),
        ).fetchall()
        return int(row[0]) if row else 0, {p[0]: _cpu([p[0]]) for p in pids}

    def close(self) -> None:
        self.conn.close()


def _start_worker(args: argparse.Namespace, work: Path, index: int) -> subprocess.Popen[bytes]:
    log_path = work / f"worker{index}.log"
    cmd = [sys.executable, "-m", "stategraph.cli._main", "worker", "--postgres", args.pg]
    cmd += ["--data-dir", str(work / "data"), "--concurrency", str(args.workers)]
    proc = subprocess.Popen(
        cmd, cwd=work / "app", stdout=open(log_path, "wb"), stderr=subprocess.STDOUT
    )
    for _ in range(600):
        if proc.poll() is not None:
            raise SystemExit(f"worker {index} exited ({proc.returncode}): see {log_path}")
        if b"ready" in log_path.read_bytes():
            return proc
        time.sleep(0.1)
    raise SystemExit(f"worker {index} did not start: see {log_path}")


def _scaling(args: argparse.Namespace, work: Path) -> int:
    """Alternate rounds of 1, 2, ... worker processes behind one API (see the docstring)."""
    url, api = _start("stategraph-pg", args, work, workers=0)
    probe = _PgProbe(args.pg)
    results: dict[tuple[int, int], list[dict[str, Any]]] = {}
    me = os.getpid()
    try:
        for rnd in range(args.rounds):
            for count in args.worker_procs:
                procs = [_start_worker(args, work, i) for i in range(count)]
                try:
                    for clients in args.clients:
                        pids = [p.pid for p in procs]
                        xact0, pg0 = probe.sample()
                        cpu0 = (_cpu([api.pid]), _cpu(pids), _cpu([me]))
                        result = asyncio.run(_load(url, clients, args.seconds))
                        time.sleep(1.0)  # PostgreSQL publishes its counters when idle
                        xact1, pg1 = probe.sample()
                        cpu1 = (_cpu([api.pid]), _cpu(pids), _cpu([me]))
                        flows = result["flows"] + 1  # and the warm-up flow
                        pg_cpu = sum(v - pg0.get(pid, 0.0) for pid, v in pg1.items())
                        per = [1000 * (b - a) / flows for a, b in zip(cpu0, cpu1, strict=True)]
                        result.update(
                            server="stategraph-pg",
                            worker_procs=count,
                            round=rnd,
                            xact_per_flow=(xact1 - xact0) / flows,
                            cpu_ms_per_flow={
                                "api": per[0],
                                "workers": per[1],
                                "postgres": 1000 * pg_cpu / flows,
                                "client": per[2],
                            },
                        )
                        results.setdefault((count, clients), []).append(result)
                        cpu = result["cpu_ms_per_flow"]
                        print(
                            f"  round {rnd} workers={count} C={clients:3d}: "
                            f"{result['flows_per_s']:6.1f} flows/s  "
                            f"flow p99 {result['flow_p99_ms']:7.1f} ms  "
                            f"xact/flow {result['xact_per_flow']:5.1f}  CPU ms/flow api "
                            f"{cpu['api']:5.1f} workers {cpu['workers']:5.1f} pg "
                            f"{cpu['postgres']:5.1f} client {cpu['client']:5.1f}  "
                            f"({result['errors']} errors)",
                            flush=True,
                        )
                        if args.json:
                            with args.json.open("a") as fh:
                                fh.write(json.dumps(result) + "\n")
                finally:
                    for proc in procs:
                        proc.terminate()
                    for proc in procs:
                        proc.wait(timeout=60)
    finally:
        probe.close()
        api.terminate()
        api.wait(timeout=30)
    print("median flows/s per setting (ratio to the first worker count):")
    base = args.worker_procs[0]
    for clients in args.clients:
        first = statistics.median(r["flows_per_s"] for r in results[(base, clients)])
        for count in args.worker_procs:
            rows = results[(count, clients)]
            median = statistics.median(r["flows_per_s"] for r in rows)
            xact = statistics.median(r["xact_per_flow"] for r in rows)
            print(
                f"  C={clients:3d} workers={count}: {median:6.1f} flows/s  "
                f"x{median / first:4.2f}  xact/flow {xact:5.1f}  "
                f"samples {[round(r['flows_per_s'], 1) for r in rows]}"
            )
    return 0


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
    parser.add_argument(
        "--worker-procs",
        type=int,
        nargs="+",
        default=None,
        help="stategraph-pg: API with --workers 0 and this many `stategraph worker`s, in turn",
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds of --worker-procs")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="server-load-"))
    if args.worker_procs:
        if args.server != "stategraph-pg":
            parser.error("--worker-procs needs --server stategraph-pg")
        try:
            return _scaling(args, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
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
