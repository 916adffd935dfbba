"""Write ``format5_checkpoints.sqlite`` and ``format5_expected.json``.

Run once, with the last release that stored a row of type ``empty`` for each
channel with a version but no value (storage format 5, schema version 9)::

    PYTHONPATH=<that release>/src python tests/persistence/data/make_format5_fixture.py

Besides the threads of ``format_fixture_graphs`` and ``longchat`` (see
``make_format3_fixture``) it writes ``chain``: a state of :data:`KEYS` keys, enough
that its checkpoint bodies are stored as changes from keyframe bodies (``body_base``
set). The files are committed; never regenerate them with a newer
release, or the test that reads them stops proving anything.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from typing_extensions import TypedDict

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from format_fixture_graphs import cfg, snapshot_threads, write_threads  # noqa: E402
from make_format3_fixture import (  # noqa: E402
    digest,
    longchat_snapshot,
    tuple_digests,
    write_longchat,
)

from stategraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from stategraph.graph import END, START, StateGraph  # noqa: E402

KEYS = 300
"""State keys of the ``chain`` graph (more than ``_compact.PACK_LIMIT`` channels)."""
STEPS = 20
"""Nodes of ``chain`` after the one filling every key."""

Wide = TypedDict("Wide", {f"k{i}": int for i in range(KEYS)}, total=False)  # type: ignore[misc]


def chain_graph(saver: Any) -> Any:
    """START -> fill (every key 0) -> node_0 -> ... -> node_{STEPS-1} -> END; node
    ``j`` sets key ``k{j}`` to ``j + 1``."""
    builder = StateGraph(Wide)
    builder.add_node("fill", lambda s: {f"k{i}": 0 for i in range(KEYS)})
    builder.add_edge(START, "fill")
    previous = "fill"
    for j in range(STEPS):
        builder.add_node(f"node_{j}", lambda s, _j=j: {f"k{_j}": _j + 1})
        builder.add_edge(previous, f"node_{j}")
        previous = f"node_{j}"
    builder.add_edge(previous, END)
    return builder.compile(checkpointer=saver)


def chain_snapshot(saver: Any) -> dict[str, Any]:
    """``chain``'s final values and the digest of every checkpoint body of its history."""
    g = chain_graph(saver)
    return {
        "values": g.get_state(cfg("chain")).values,
        "bodies_sha256": [
            digest(repr(sorted((k, v) for k, v in t.checkpoint.items() if k != "ts")))
            for t in saver.list(cfg("chain"))
        ],
    }


def main() -> None:
    db = HERE / "format5_checkpoints.sqlite"
    db.unlink(missing_ok=True)
    conn = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
    saver = SqliteSaver(conn)
    write_threads(saver)
    write_longchat(saver)
    chain_graph(saver).invoke({}, cfg("chain"))
    expected = {
        "threads": snapshot_threads(saver),
        "longchat": longchat_snapshot(saver),
        "chain": chain_snapshot(saver),
        "tuples_sha256": tuple_digests(saver),
    }
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("VACUUM")
    conn.close()
    (HERE / "format5_expected.json").write_text(
        json.dumps(expected, indent=1, sort_keys=True) + "\n"
    )


if __name__ == "__main__":
    main()
