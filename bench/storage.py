"""Bytes on disk of a long chat on ``SqliteSaver``: does storage follow the work?

    python -m bench.storage --lib stategraph [--turns 1000] [--json OUT]

One thread, ``turns`` invocations of a one-node ``MessagesState`` graph: each turn sends
one user message of 150 characters and the node answers with one assistant message of
150 characters (plain dict messages, random letters, so nothing compresses). The saver
is the library's ``SqliteSaver`` on a connection opened as the benchmark suite opens it,
with the default durability. After the last turn the WAL is checkpointed into the main
file (``PRAGMA wal_checkpoint(TRUNCATE)``) and the size of the file (and of any WAL
left) is reported, with the rows and payload bytes of every table, and the SQLite
settings in force (issue 23, goal 4: at most 2.9 MB for 1,000 turns).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import sqlite3
import string
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from typing import Any

from bench.harness import set_sqlite_synchronous

__all__ = ["MESSAGE_CHARS", "chat_messages", "main", "measure", "table_bytes"]

MESSAGE_CHARS = 150
GOAL_MB_PER_1000_TURNS = 2.9


def chat_messages(turns: int, seed: int = 0) -> list[tuple[str, str]]:
    """``(user text, assistant text)`` per turn, 150 random letters and spaces each."""
    rng = random.Random(seed)
    alphabet = string.ascii_lowercase + " "
    return [
        (
            "".join(rng.choices(alphabet, k=MESSAGE_CHARS)),
            "".join(rng.choices(alphabet, k=MESSAGE_CHARS)),
        )
        for _ in range(turns)
    ]


def table_bytes(conn: sqlite3.Connection) -> dict[str, dict[str, int]]:
    """Rows and summed column lengths of every table (what the rows carry, not pages)."""
    names = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    out: dict[str, dict[str, int]] = {}
    for name in names:
        cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{name}")')]
        size = " + ".join(f'COALESCE(LENGTH("{c}"), 0)' for c in cols) or "0"
        rows, total = conn.execute(
            f'SELECT COUNT(*), COALESCE(SUM({size}), 0) FROM "{name}"'
        ).fetchone()
        out[name] = {"rows": rows, "bytes": total}
    return out


def _build(lib: str, conn: sqlite3.Connection, replies: list[str]) -> Any:
    g = importlib.import_module(f"{lib}.graph")
    saver = importlib.import_module(f"{lib}.checkpoint.sqlite").SqliteSaver(conn)
    turn = iter(replies)

    def reply(_state: Any) -> dict[str, Any]:
        text = next(turn)
        return {"messages": [{"role": "assistant", "content": text, "id": uuid.uuid4().hex}]}

    builder = g.StateGraph(g.MessagesState)
    builder.add_node("reply", reply)
    builder.add_edge(g.START, "reply")
    builder.add_edge("reply", g.END)
    return builder.compile(checkpointer=saver)


def measure(
    lib: str, turns: int = 1000, sqlite_synchronous: str = "native", directory: str | None = None
) -> dict[str, Any]:
    """Run the chat and measure the file; return sizes, per-table bytes and settings."""
    texts = chat_messages(turns)
    with tempfile.TemporaryDirectory(prefix="bench-storage-", dir=directory) as tmp:
        path = os.path.join(tmp, "chat.sqlite")
        conn = sqlite3.connect(path, check_same_thread=False)
        try:
            graph = _build(lib, conn, [assistant for _, assistant in texts])
            config = {"configurable": {"thread_id": "chat"}}
            settings = None
            c0, t0 = time.process_time(), time.perf_counter()
            for n, (user, _) in enumerate(texts):
                message = {"role": "user", "content": user, "id": uuid.uuid4().hex}
                graph.invoke({"messages": [message]}, config)
                if n == 0:
                    settings = set_sqlite_synchronous(graph, sqlite_synchronous)
            cpu, wall = time.process_time() - c0, time.perf_counter() - t0
            final = graph.get_state(config).values["messages"]
            if len(final) != 2 * turns:
                raise AssertionError(f"{lib}: {len(final)} messages after {turns} turns")
            checkpoints = sum(1 for _ in graph.checkpointer.list(config))
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            tables = table_bytes(conn)
            main_size = os.path.getsize(path)
            wal = path + "-wal"
            wal_size = os.path.getsize(wal) if os.path.exists(wal) else 0
        finally:
            conn.close()
    total = main_size + wal_size
    return {
        "lib": lib,
        "turns": turns,
        "sqlite": settings,
        "file_bytes": main_size,
        "wal_bytes": wal_size,
        "total_mb": total / 1e6,
        "bytes_per_turn": total / turns,
        "text_bytes_per_turn": 2 * MESSAGE_CHARS,
        "checkpoints": checkpoints,
        "checkpoints_per_turn": checkpoints / turns,
        "tables": tables,
        "cpu_ms_per_turn": cpu / turns * 1e3,
        "wall_ms_per_turn": wall / turns * 1e3,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Print the chat's size on disk for one library; write it as JSON if asked."""
    parser = argparse.ArgumentParser(prog="python -m bench.storage", description=__doc__)
    parser.add_argument("--lib", default="stategraph")
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument(
        "--sqlite-synchronous",
        choices=("native", "off", "normal", "full", "extra"),
        default="native",
    )
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    result = measure(args.lib, args.turns, args.sqlite_synchronous)
    print(
        f"{args.lib}: {args.turns} turns -> {result['total_mb']:.2f} MB on disk "
        f"({result['bytes_per_turn']:.0f} B/turn for {2 * MESSAGE_CHARS} B of text, "
        f"{result['checkpoints_per_turn']:.1f} checkpoints/turn; {result['sqlite']}; "
        f"{result['cpu_ms_per_turn']:.2f} ms CPU/turn)"
    )
    for name, t in result["tables"].items():
        print(f"  {name:<20} {t['rows']:8d} rows {t['bytes'] / 1e6:8.2f} MB of column data")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
