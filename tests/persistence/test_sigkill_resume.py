"""A process running a graph on SQLite (``durability="sync"``) is killed with SIGKILL in
the middle of a step; a new process resumes the thread.

Graph: ``a -> b -> (fast, slow) -> d``. In the first process ``slow`` waits until
``fast``'s writes are saved, touches a "ready" file and sleeps; the test then kills the
process. Every completed step must be kept, ``fast`` (a finished sibling) must not run
again, ``slow`` runs again, and the database passes ``PRAGMA integrity_check``. Node
executions are counted in a file, since the processes share nothing else.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from persistence_helpers import cfg, sqlite_integrity

from stategraph.checkpoint.sqlite import SqliteSaver

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")

WORKER = textwrap.dedent(
    """
    import asyncio, json, operator, os, sys, time
    from typing import Annotated
    from typing_extensions import TypedDict
    from stategraph.checkpoint.sqlite import SqliteSaver
    from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from stategraph.graph import END, START, StateGraph

    db, work, phase, mode = sys.argv[1:5]
    # the killed process cannot release its thread lease: the new one waits for it to
    # expire (lease_timeout) and takes the thread over
    CFG = {
        "configurable": {"thread_id": "job"},
        "lease_timeout": 1.0,
        "multitask_strategy": "enqueue",
    }

    class State(TypedDict):
        log: Annotated[list[str], operator.add]

    def count(name):
        fd = os.open(os.path.join(work, "runs.txt"), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, (name + "\\n").encode())
        finally:
            os.close(fd)

    def node(name):
        def fn(state):
            count(name)
            return {"log": [name]}
        return fn

    def fast_is_saved():
        with SqliteSaver.from_conn_string(db) as reader:
            saved = reader.get_tuple(CFG)
            return saved is not None and any(
                chan == "log" and val == ["fast"] for _, chan, val in saved.pending_writes
            )

    def slow(state):
        count("slow")
        if phase == "run":
            deadline = time.monotonic() + 30
            while not fast_is_saved() and time.monotonic() < deadline:
                time.sleep(0.01)
            open(os.path.join(work, "ready"), "w").close()
            time.sleep(60)  # killed here
        return {"log": ["slow"]}

    builder = StateGraph(State)
    for name in ("a", "b", "fast", "d"):
        builder.add_node(name, node(name))
    builder.add_node("slow", slow)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "fast")
    builder.add_edge("b", "slow")
    builder.add_edge(["fast", "slow"], "d")
    builder.add_edge("d", END)

    inp = {"log": ["in"]} if phase == "run" else None
    if mode == "sync":
        with SqliteSaver.from_conn_string(db) as saver:
            out = builder.compile(checkpointer=saver).invoke(inp, CFG, durability="sync")
    else:
        async def main():
            async with AsyncSqliteSaver.from_conn_string(db) as saver:
                graph = builder.compile(checkpointer=saver)
                return await graph.ainvoke(inp, CFG, durability="sync")
        out = asyncio.run(main())
    print(json.dumps(out))
    """
)


def _runs(work: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in (work / "runs.txt").read_text().split():
        counts[line] = counts.get(line, 0) + 1
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_sigkill_mid_step_then_resume_in_a_new_process(tmp_path: Path, mode: str) -> None:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    db = str(tmp_path / "graph.sqlite")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, str(script), db, str(tmp_path)]

    proc = subprocess.Popen([*cmd, "run", mode], env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "ready").exists():
            assert proc.poll() is None, proc.stderr.read().decode()  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the worker never reached the slow node"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()  # type: ignore[union-attr]

    assert sqlite_integrity(db) == "ok"
    assert _runs(tmp_path) == {"a": 1, "b": 1, "fast": 1, "slow": 1}
    # every completed step survived the kill, and fast's writes with them
    with SqliteSaver.from_conn_string(db) as saver:
        saved = saver.get_tuple(cfg("job"))
        assert saved is not None
        assert saved.metadata["step"] == 2
        assert saved.checkpoint["channel_values"]["log"] == ["in", "a", "b"]
        assert [(c, v) for _, c, v in saved.pending_writes if c == "log"] == [("log", ["fast"])]
        steps = [(t.metadata["source"], t.metadata["step"]) for t in saver.list(cfg("job"))]
        assert steps == [("loop", 2), ("loop", 1), ("loop", 0), ("input", -1)]

    done = subprocess.run(
        [*cmd, "resume", mode], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"log": ["in", "a", "b", "fast", "slow", "d"]}
    # fast (finished before the kill) did not run again; slow did
    assert _runs(tmp_path) == {"a": 1, "b": 1, "fast": 1, "slow": 2, "d": 1}
    assert sqlite_integrity(db) == "ok"
    with SqliteSaver.from_conn_string(db) as saver:
        steps = [(t.metadata["source"], t.metadata["step"]) for t in saver.list(cfg("job"))]
        assert steps == [
            ("loop", 4),
            ("loop", 3),
            ("loop", 2),
            ("loop", 1),
            ("loop", 0),
            ("input", -1),
        ]
        assert saver.get_tuple(cfg("job")).checkpoint["channel_values"]["log"] == [  # type: ignore[union-attr]
            "in",
            "a",
            "b",
            "fast",
            "slow",
            "d",
        ]
