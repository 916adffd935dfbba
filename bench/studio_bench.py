"""How fast the studio's pages load on a large checkpoint database.

``python -m bench.studio_bench [--threads N] [--checkpoints M] [--db FILE] [--repeat R]``

Builds (once; reused when the file exists with the right size) a SQLite database with
N threads of M checkpoints each (default 10,000 x 100 = one million checkpoints), each
checkpoint with its channel values and the pending writes of its step, written through
``SqliteSaver``'s public API. Then it serves the studio in-process (read-only, as
``stategraph studio --sqlite FILE`` does) and times, over R requests each, the median
and worst wall time of: the first, a middle and the last page of the thread list, a
search, a metadata filter, a thread's timeline page (all M checkpoints) and the API's
thread state and history. Reading every thread (what ``stategraph studio`` does before
it serves) is reported apart. Wall-clock figures on a shared machine are noisy: medians of R runs.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from stategraph.checkpoint.base import empty_checkpoint
from stategraph.checkpoint.sqlite import SqliteSaver

__all__ = ["build", "measure", "main"]


def build(path: str, threads: int, checkpoints: int) -> float:
    """Write the database; returns the seconds it took."""
    started = time.perf_counter()
    Path(path).unlink(missing_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    saver = SqliteSaver(conn)
    saver.setup()
    conn.execute("PRAGMA synchronous = OFF")  # a benchmark file: no need to survive a crash
    for t in range(threads):
        thread_id = f"thread-{t:05d}"
        config: dict[str, Any] = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        cp = empty_checkpoint()
        for step in range(-1, checkpoints - 1):
            version = f"{step + 2:032}.0"
            cp = {
                **cp,
                "id": _uuid(step),
                "ts": time.strftime("%Y-%m-%dT%H:%M:%S+00:00"),
                "channel_values": {
                    "topic": f"topic {t}",
                    "count": step + 1,
                    "notes": [f"note {i}" for i in range(3)],
                },
                "channel_versions": {"topic": "1", "count": version, "notes": version},
                "versions_seen": {"work": {"count": version}},
                "updated_channels": ["count", "notes"],
            }
            metadata = {
                "source": "input" if step < 0 else "loop",
                "step": step,
                "user": f"user{t % 50}",
                "parents": {},
            }
            new_versions = {"count": version, "notes": version}
            if step < 0:
                new_versions["topic"] = "1"
            config = saver.put(config, cp, metadata, new_versions)
            saver.put_writes(config, [("count", step + 2), ("notes", ["next"])], f"task-{step}")
    conn.close()
    return time.perf_counter() - started


def _uuid(step: int) -> str:
    from stategraph.checkpoint._ids import uuid6_str

    return uuid6_str(clock_seq=max(step, 0))


def _size(path: str) -> tuple[int, int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        threads = conn.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
        total = conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
    finally:
        conn.close()
    return int(threads), int(total)


def measure(path: str, threads: int, repeat: int) -> list[tuple[str, float, float]]:
    """``(what, median ms, worst ms)`` of each request."""
    from starlette.testclient import TestClient

    from stategraph.studio._reading import thread_index_for, warm
    from stategraph.studio.app import create_app

    conn = sqlite3.connect(
        f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None
    )
    saver = SqliteSaver(conn)
    index = thread_index_for(saver, sqlite=path)
    client = TestClient(create_app(saver, index=index), base_url="http://127.0.0.1:2024")
    middle = f"thread-{threads // 2:05d}"
    started = time.perf_counter()
    warm(index)  # what `stategraph studio` does before it serves
    cold = (time.perf_counter() - started) * 1000
    requests = [
        ("thread list, first page", "GET", "/", None),
        ("thread list, middle page", "GET", f"/?offset={(threads // 2) // 50 * 50}", None),
        ("thread list, last page", "GET", f"/?offset={(threads - 1) // 50 * 50}", None),
        ("thread list, search 'thread-0999'", "GET", "/?q=thread-0999", None),
        ("thread list, filter user=user7", "GET", "/?meta=user%3Duser7", None),
        ("thread timeline page (all checkpoints)", "GET", f"/ui/threads/{middle}", None),
        ("API thread state", "GET", f"/threads/{middle}/state", None),
        ("API history, 100 checkpoints", "POST", f"/threads/{middle}/history", {"limit": 100}),
        ("API threads/search, 50", "POST", "/threads/search", {"limit": 50}),
    ]
    out = [("start-up: read every thread and its metadata", cold, cold)]
    # a thread opened for the first time (its pages not yet in the OS cache)
    times = []
    for k in range(repeat):
        t0 = time.perf_counter()
        resp = client.get(f"/ui/threads/thread-{(k * 997 + 13) % threads:05d}")
        times.append((time.perf_counter() - t0) * 1000)
        assert resp.status_code == 200
    out.append(("thread timeline page, first open", statistics.median(times), max(times)))
    for what, method, url, body in requests:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            resp = client.request(method, url, json=body)
            times.append((time.perf_counter() - t0) * 1000)
            assert resp.status_code == 200, (url, resp.status_code, resp.text[:200])
        out.append((what, statistics.median(times), max(times)))
    client.close()
    index.close()
    conn.close()
    return out


def main(argv: list[str] | None = None) -> int:
    """Build (if needed) and measure; prints a table."""
    parser = argparse.ArgumentParser(prog="python -m bench.studio_bench")
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--checkpoints", type=int, default=100)
    parser.add_argument("--db", default="/tmp/stategraph-studio-bench.sqlite")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    want = (args.threads, args.threads * args.checkpoints)
    if not Path(args.db).exists() or _size(args.db) != want:
        print(f"building {args.db}: {args.threads} threads x {args.checkpoints} checkpoints…")
        seconds = build(args.db, args.threads, args.checkpoints)
        print(f"  built in {seconds:.0f} s")
    size_mb = Path(args.db).stat().st_size / 1e6
    print(f"database: {want[0]} threads, {want[1]} checkpoints, {size_mb:.0f} MB")
    rows = measure(args.db, args.threads, args.repeat)
    width = max(len(r[0]) for r in rows)
    print(f"{'request':<{width}}  median ms  worst ms")
    for what, med, worst in rows:
        print(f"{what:<{width}}  {med:9.1f}  {worst:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
