"""How checkpoint storage and ``invoke`` latency grow with a chat thread's length.

A one-node graph over ``MessagesState`` takes one ~300-byte human message per turn
(the node answers nothing, so each turn appends exactly one message). After each turn
the script measures the bytes the saver holds (payload bytes: the serialized
checkpoints, metadata, channel values and writes, the interned list items with their
16-byte hashes, and the SQL savers' ``base`` column of delta rows) and times the ``invoke``.

Run from the repository root::

    python -m bench.history_growth --saver memory sqlite postgres --turns 1000

It prints, at turns 10, 100, 500 and 1000 (those reached): bytes written by that turn,
total bytes stored, total / raw message bytes, the channel values' share of it
(values / raw), and the median ``invoke`` time of the turns around it (wall clock:
repeat on a quiet machine). ``--no-delta`` stores every value whole, for comparison.
Not a test: a measurement.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from stategraph.checkpoint.base import BaseCheckpointSaver
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.graph import END, START, MessagesState, StateGraph
from stategraph.messages import HumanMessage

PG_URL = os.environ.get("STATEGRAPH_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")
MARKS = (10, 100, 500, 1000)
MESSAGE = "x" * 260  # with its id and type, ~300 bytes serialized


def memory_bytes(saver: InMemorySaver) -> tuple[int, int]:
    """Payload bytes an ``InMemorySaver`` holds: in total, and in channel values."""
    total = 0
    for by_ns in saver.storage.values():
        for by_id in by_ns.values():
            for cp, md, _ in by_id.values():
                total += len(cp[1]) + len(md[1])
    values = 0
    for blob in saver.blobs.values():
        if blob is not None:
            values += len(blob[1])
    for bucket in saver.writes.values():
        for _, _, value, _ in bucket.values():
            total += len(value[1])
    for (_, _, key), item in saver.items.items():
        total += len(key) + len(item[1])
    return total + values, values


def sqlite_bytes(conn: sqlite3.Connection) -> tuple[int, int]:
    """Payload bytes of the SQLite saver's tables: in total, and in channel values."""
    q = (
        "SELECT (SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints)"
        " + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes)"
        " + (SELECT COALESCE(SUM(LENGTH(base)), 0) FROM blobs)"
        " + (SELECT COALESCE(SUM(LENGTH(hash) + LENGTH(value)), 0) FROM items),"
        " (SELECT COALESCE(SUM(LENGTH(blob)), 0) FROM blobs)"
    )
    other, values = conn.execute(q).fetchone()
    return int(other) + int(values), int(values)


@contextmanager
def open_saver(
    kind: str, delta: bool = True
) -> Iterator[tuple[BaseCheckpointSaver[Any], Callable[[], tuple[int, int]]]]:
    """A fresh saver of ``kind`` and a function measuring its payload bytes."""
    if kind == "memory":
        saver = InMemorySaver(delta_storage=delta)
        yield saver, lambda: memory_bytes(saver)
        return
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bench.sqlite")
            with SqliteSaver.from_conn_string(path) as sq:
                sq.delta = sq.delta if delta else None
                sq.setup()
                probe = sqlite3.connect(path)
                try:
                    yield sq, lambda: sqlite_bytes(probe)
                finally:
                    probe.close()
        return
    import psycopg

    from stategraph.checkpoint.postgres import PostgresSaver

    schema = f"bench_{os.getpid()}"
    with psycopg.connect(PG_URL, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
        try:
            url = f"{PG_URL}?options=-csearch_path%3D{schema}"
            with PostgresSaver.from_conn_string(url) as pg:
                pg.delta = pg.delta if delta else None
                pg.setup()

                def pg_bytes() -> tuple[int, int]:
                    row = admin.execute(
                        f"SELECT (SELECT COALESCE(SUM(octet_length(checkpoint) + "
                        f"octet_length(metadata_blob)), 0) FROM {schema}.sg_checkpoints) + "
                        f"(SELECT COALESCE(SUM(octet_length(blob)), 0) FROM "
                        f"{schema}.sg_checkpoint_writes) + (SELECT COALESCE(SUM("
                        f"octet_length(base)), 0) FROM {schema}.sg_checkpoint_blobs) + "
                        f"(SELECT COALESCE(SUM(octet_length(hash) + octet_length(value)), 0) "
                        f"FROM {schema}.sg_checkpoint_items), "
                        f"(SELECT COALESCE(SUM("
                        f"octet_length(blob)), 0) FROM {schema}.sg_checkpoint_blobs)"
                    ).fetchone()
                    assert row is not None
                    return int(row[0]) + int(row[1]), int(row[1])

                yield pg, pg_bytes
        finally:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


def graph(saver: BaseCheckpointSaver[Any]) -> Any:
    """``START -> noop -> END`` over ``MessagesState``."""
    builder = StateGraph(MessagesState)
    builder.add_node("noop", lambda state: {})
    builder.add_edge(START, "noop")
    builder.add_edge("noop", END)
    return builder.compile(checkpointer=saver)


def run(kind: str, turns: int, delta: bool = True) -> list[dict[str, float]]:
    """Drive ``turns`` turns on one thread; return one row per mark reached."""
    rows: list[dict[str, float]] = []
    with open_saver(kind, delta) as (saver, measure):
        g = graph(saver)
        config = {"configurable": {"thread_id": "chat"}}
        times: list[float] = []
        sizes: dict[int, tuple[int, int]] = {0: measure()}
        wanted = {m for m in MARKS} | {m - 1 for m in MARKS}
        for turn in range(1, turns + 1):
            message = HumanMessage(MESSAGE, id=f"m{turn:06}")
            start = time.perf_counter()
            g.invoke({"messages": [message]}, config)
            times.append(time.perf_counter() - start)
            if turn in wanted:
                sizes[turn] = measure()
        raw = len(saver.serde.dumps_typed(HumanMessage(MESSAGE, id="m000001"))[1])
        for mark in MARKS:
            if mark > turns:
                continue
            window = times[max(0, mark - 6) : mark + 4]
            rows.append(
                {
                    "turn": mark,
                    "bytes_this_turn": sizes[mark][0] - sizes[mark - 1][0],
                    "total_bytes": sizes[mark][0],
                    "total_over_raw": sizes[mark][0] / (raw * mark),
                    "values_over_raw": sizes[mark][1] / (raw * mark),
                    "ms_per_invoke": 1000 * statistics.median(window),
                    "message_bytes": raw,
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--saver", nargs="+", default=["memory", "sqlite", "postgres"])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument(
        "--no-delta", action="store_true", help="store every value whole (delta_storage=False)"
    )
    args = parser.parse_args()
    print(
        "saver     turn  bytes/turn   total bytes  total/raw  values/raw  ms/invoke  (message bytes)"
    )
    for kind in args.saver:
        for row in run(kind, args.turns, delta=not args.no_delta):
            print(
                f"{kind:<9} {row['turn']:>4}  {row['bytes_this_turn']:>10.0f}  "
                f"{row['total_bytes']:>12.0f}  {row['total_over_raw']:>9.2f}  "
                f"{row['values_over_raw']:>10.2f}  {row['ms_per_invoke']:>9.2f}  "
                f"({row['message_bytes']:.0f})"
            )


if __name__ == "__main__":
    main()
