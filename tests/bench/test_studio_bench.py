"""Smoke test of the studio benchmark: a small database, every request measured."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bench.studio_bench import build, main, measure


def test_build_and_measure_a_small_database(tmp_path: Path, capsys) -> None:
    db = str(tmp_path / "bench.sqlite")
    build(db, threads=60, checkpoints=4)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone()[0] == 60
    assert conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 240
    assert conn.execute("SELECT COUNT(*) FROM writes").fetchone()[0] == 480
    conn.close()
    rows = measure(db, threads=60, repeat=1)
    names = [name for name, _median, _worst in rows]
    assert names[0].startswith("start-up") and "thread timeline page (all checkpoints)" in names
    assert all(median > 0 for _n, median, _w in rows)
    assert main(["--threads", "60", "--checkpoints", "4", "--db", db, "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "database: 60 threads, 240 checkpoints" in out and "building" not in out
