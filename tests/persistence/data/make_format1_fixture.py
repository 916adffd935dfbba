"""Write ``format1_checkpoints.sqlite`` and ``format1_expected.json``.

Run once, with the release that predates checkpoint format versioning (the first
on-disk format: every channel value stored whole in ``blobs``)::

    python tests/persistence/data/make_format1_fixture.py

The files are committed; never regenerate them with a newer release, or the test
that reads them stops proving anything about old databases.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from format_fixture_graphs import raw_tuples, snapshot_threads, write_threads  # noqa: E402

from stategraph.checkpoint.sqlite import SqliteSaver  # noqa: E402


def main() -> None:
    db = HERE / "format1_checkpoints.sqlite"
    db.unlink(missing_ok=True)
    conn = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
    saver = SqliteSaver(conn)
    write_threads(saver)
    expected = {"threads": snapshot_threads(saver), "tuples": raw_tuples(saver)}
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("VACUUM")
    conn.close()
    (HERE / "format1_expected.json").write_text(
        json.dumps(expected, indent=1, sort_keys=True) + "\n"
    )


if __name__ == "__main__":
    main()
