"""Write ``format3_checkpoints.sqlite`` and ``format3_expected.json``.

Run once, with the release before interned list items (storage format 3: checkpoint
bodies packed, list values stored as deltas, every list element stored inline)::

    PYTHONPATH=<that release>/src python tests/persistence/data/make_format3_fixture.py

Besides the threads of ``format_fixture_graphs`` it writes ``longchat``: a chat long
enough (:data:`TURNS` turns of ~400-byte messages) that its ``messages`` channel holds
snapshots and deltas of every level. The files are committed; never regenerate them
with a newer release, or the test that reads them stops proving anything.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from format_fixture_graphs import (  # noqa: E402
    cfg,
    chat_graph,
    describe,
    raw_tuples,
    snapshot_threads,
    write_threads,
)

from stategraph.checkpoint.sqlite import SqliteSaver  # noqa: E402

TURNS = 40
"""Turns of the ``longchat`` thread."""


def long_text(i: int) -> str:
    """The content of human message ``i`` of ``longchat`` (well over 128 bytes)."""
    return f"turn {i}: " + "lorem ipsum dolor sit amet " * 12


def write_longchat(saver: Any) -> None:
    """Run the ``longchat`` thread."""
    g = chat_graph(saver)
    for i in range(TURNS):
        g.invoke(
            {"messages": [{"role": "user", "content": long_text(i), "id": f"h-{i:03}"}]},
            cfg("longchat"),
        )


def digest(text: str) -> str:
    """The sha256 of ``text`` (keeps the expected file small: the long thread's
    history repeats its messages in every snapshot)."""
    return hashlib.sha256(text.encode()).hexdigest()


def longchat_snapshot(saver: Any) -> dict[str, Any]:
    """``longchat``'s latest state (``describe``) and the digests of every snapshot
    of its history (of ``json.dumps(describe(s), sort_keys=True)``)."""
    g = chat_graph(saver)
    return {
        "state": describe(g.get_state(cfg("longchat"))),
        "history_sha256": [
            digest(json.dumps(describe(s), sort_keys=True))
            for s in g.get_state_history(cfg("longchat"))
        ],
    }


def tuple_digests(saver: Any) -> list[str]:
    """The digests of ``repr`` of every checkpoint tuple (all threads, namespaces)."""
    return [digest(t) for t in raw_tuples(saver)]


def main() -> None:
    db = HERE / "format3_checkpoints.sqlite"
    db.unlink(missing_ok=True)
    conn = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
    saver = SqliteSaver(conn)
    write_threads(saver)
    write_longchat(saver)
    expected = {
        "threads": snapshot_threads(saver),
        "longchat": longchat_snapshot(saver),
        "tuples_sha256": tuple_digests(saver),
    }
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("VACUUM")
    conn.close()
    (HERE / "format3_expected.json").write_text(
        json.dumps(expected, indent=1, sort_keys=True) + "\n"
    )


if __name__ == "__main__":
    main()
