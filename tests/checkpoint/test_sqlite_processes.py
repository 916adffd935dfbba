"""Several processes on one SQLite file: concurrent writers, and a process killed in
the middle of a ``put``."""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite._schema import MIGRATIONS

WRITER = textwrap.dedent(
    """
    import os, sys, time
    from stategraph.checkpoint.base import create_checkpoint, empty_checkpoint
    from stategraph.checkpoint.sqlite import SqliteSaver

    path, name, n, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    open(start + "." + name, "w").close()  # ready
    while not os.path.exists(start):
        time.sleep(0.001)
    with SqliteSaver.from_conn_string(path) as saver:
        config = {"configurable": {"thread_id": name, "checkpoint_ns": ""}}
        common = {"configurable": {"thread_id": "common", "checkpoint_id": "shared"}}
        cp = empty_checkpoint()
        for i in range(n):
            cp = create_checkpoint(cp, None, i)
            v = saver.get_next_version(cp["channel_versions"].get("x"), None)
            cp["channel_values"]["x"] = [name, i]
            cp["channel_versions"]["x"] = v
            config = saver.put(config, cp, {"step": i, "proc": name}, {"x": v})
            saver.put_writes(config, [("x", i), ("__interrupt__", i)], "task")
            saver.put_writes(common, [("from", name), ("i", i)], f"{name}-{i}")
            if i % 10 == 0:
                saver.get_tuple({"configurable": {"thread_id": name}})
            time.sleep(0.002)  # yield the CPU so the two writers interleave even under load
    print("done", name)
    """
)

CRASHER = textwrap.dedent(
    """
    import os, sqlite3, sys
    from stategraph.checkpoint.base import create_checkpoint, empty_checkpoint
    from stategraph.checkpoint.sqlite import SqliteSaver

    class Conn(sqlite3.Connection):
        pass

    conn = sqlite3.connect(sys.argv[1], factory=Conn, check_same_thread=False,
                           isolation_level=None)
    saver = SqliteSaver(conn)
    cp = empty_checkpoint()
    cp["channel_values"] = {"x": "committed"}
    cp["channel_versions"] = {"x": saver.get_next_version(None, None)}
    config = saver.put({"configurable": {"thread_id": "t"}}, cp, {"step": 0},
                       dict(cp["channel_versions"]))
    print(config["configurable"]["checkpoint_id"], flush=True)
    real = conn.execute

    def die_after_blobs(sql, *args):
        if " INTO checkpoints " in sql:
            os._exit(17)  # the process dies: no rollback, no commit, no cleanup
        return real(sql, *args)

    conn.execute = die_after_blobs
    child = create_checkpoint(cp, None, 1)
    v = saver.get_next_version(cp["channel_versions"]["x"], None)
    child["channel_values"] = {"x": "lost", "y": "lost"}
    child["channel_versions"] = {"x": v, "y": v}
    saver.put(config, child, {"step": 1}, {"x": v, "y": v})
    """
)


def test_two_processes_write_one_file_at_once(tmp_path: Path) -> None:
    db = tmp_path / "shared.sqlite"  # fresh: both processes race to create the schema
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    start = tmp_path / "start"
    n = 150
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(db), name, str(n), str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("proc-a", "proc-b")
    ]
    deadline = time.monotonic() + 60
    while not all((tmp_path / f"start.{name}").exists() for name in ("proc-a", "proc-b")):
        assert time.monotonic() < deadline, "writer processes did not start"
        assert all(p.poll() is None for p in procs), procs[0].communicate()
        time.sleep(0.005)
    start.write_text("go")  # both are ready: release them together
    results = [p.communicate(timeout=90) for p in procs]
    for proc, (out, err) in zip(procs, results, strict=True):
        assert "database is locked" not in err
        assert proc.returncode == 0, err
        assert out.startswith("done")

    with SqliteSaver.from_conn_string(str(db)) as saver:
        for name in ("proc-a", "proc-b"):
            listed = list(saver.list({"configurable": {"thread_id": name}}))
            assert [t.metadata["step"] for t in listed] == list(range(n - 1, -1, -1))
            assert [t.checkpoint["channel_values"]["x"] for t in listed] == [
                [name, i] for i in range(n - 1, -1, -1)
            ]
            for newer, older in itertools.pairwise(listed):
                assert newer.parent_config == older.config
            assert all(
                t.pending_writes
                == [
                    ("task", "x", t.metadata["step"]),
                    ("task", "__interrupt__", t.metadata["step"]),
                ]
                for t in listed
            )
        # The two writers really ran at the same time: their checkpoints interleave.
        owners = [t.metadata["proc"] for t in saver.list(None)]  # type: ignore[typeddict-item]
        switches = sum(1 for a, b in itertools.pairwise(owners) if a != b)
        assert switches >= 2, owners
        conn = saver.conn
        common = conn.execute(
            "SELECT COUNT(*) FROM writes WHERE thread_id = 'common' AND checkpoint_id = 'shared'"
        ).fetchone()[0]
        assert common == 2 * n * 2
        migrations = conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0]
        assert migrations == len(MIGRATIONS)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_process_killed_inside_put_leaves_previous_checkpoint(tmp_path: Path) -> None:
    db = tmp_path / "crash.sqlite"
    script = tmp_path / "crasher.py"
    script.write_text(CRASHER)
    proc = subprocess.run(
        [sys.executable, str(script), str(db)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 17, proc.stderr
    committed_id = proc.stdout.strip()

    with SqliteSaver.from_conn_string(str(db)) as saver:
        conn = saver.conn
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        latest = saver.get_tuple({"configurable": {"thread_id": "t"}})
        assert latest is not None
        assert latest.checkpoint["id"] == committed_id
        assert latest.checkpoint["channel_values"] == {"x": "committed"}
        assert [t.checkpoint["id"] for t in saver.list(None)] == [committed_id]
        # The blobs written before the crash were rolled back with the transaction.
        assert conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 1
