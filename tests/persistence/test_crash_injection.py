"""Write-ahead ordering under every durability, by killing the run at each saver call.

A run of ``a -> (b, c) -> d`` makes N saver calls. For every k in 1..N the run is
"killed" at the k-th call (:class:`Crash`, a ``BaseException``; every later call
fails too, as in a dead process). A fresh graph on a fresh saver over the same storage
then resumes the thread (``invoke(None, cfg)``, or the input again when nothing was
saved). The final state must equal the uninterrupted run's, and the resumed run may
re-run only the work that was not yet durable: the nodes of steps after the latest
saved checkpoint, minus the tasks whose writes were saved against it.

A second test kills the SQLite savers at each SQL write statement instead, to check
that a checkpoint is never visible without the values it references.
"""

from __future__ import annotations

import gc
import sqlite3
import sys
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from persistence_helpers import (
    DURABILITIES,
    Call,
    Crash,
    Harness,
    LogState,
    Runs,
    SpySaver,
    cfg,
    sqlite_integrity,
)

from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from stategraph.graph import END, START, StateGraph

INPUT = {"log": ["in"], "last": "in"}
FINAL = {"log": ["in", "a", "b", "c", "d"], "last": "d"}
STEP_OF = {"a": 1, "b": 2, "c": 2, "d": 3}  # the loop step each node's task runs in


def _graph(saver: Any, runs: Runs) -> Any:
    def node(name: str, last: bool) -> Any:
        def fn(state: LogState) -> dict[str, Any]:
            runs.hit(name)
            return {"log": [name], "last": name} if last else {"log": [name]}

        return fn

    builder = StateGraph(LogState)
    builder.add_node("a", node("a", True))
    builder.add_node("b", node("b", False))
    builder.add_node("c", node("c", False))
    builder.add_node("d", node("d", True))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.add_edge(["b", "c"], "d")
    builder.add_edge("d", END)
    return builder.compile(checkpointer=saver)


def _who(call: Call) -> str | None:
    for chan, val in call.values:
        if chan == "log":
            return str(val[0])
    return None


def _expected_rerun(durable: list[Call]) -> dict[str, int]:
    """The nodes a resume must run, given the saver calls that completed."""
    puts = [c for c in durable if c.method == "put"]
    if not puts:
        return dict.fromkeys(STEP_OF, 1)
    head = puts[-1]
    assert head.step is not None
    saved = {
        _who(c) for c in durable if c.method == "put_writes" and c.parent_id == head.checkpoint_id
    }
    return {name: 1 for name, step in STEP_OF.items() if step > head.step and name not in saved}


# a run abandoned by a crash may leave its loop generator to the garbage collector;
# test_a_failed_saver_call_leaves_no_unraisable_error checks that separately
QUIET = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@QUIET
@pytest.mark.parametrize("durability", DURABILITIES)
def test_crash_at_every_saver_call_loses_no_completed_step(
    h: Harness, tmp_path: Path, durability: str
) -> None:
    # the uninterrupted run, to count its saver calls
    runs = Runs()
    spy = SpySaver(h.saver)
    assert h.invoke(_graph(spy, runs), INPUT, cfg("t"), durability=durability) == FINAL
    assert runs.snapshot() == {"a": 1, "b": 1, "c": 1, "d": 1}
    total = len(spy.calls)
    assert total >= 1

    for k in range(1, total + 1):
        thread = cfg(f"t{k}")
        runs = Runs()
        crashing = SpySaver(h.saver, crash_at=k)
        with pytest.raises(Crash):
            h.invoke(_graph(crashing, runs), INPUT, thread, durability=durability)
        durable = list(crashing.calls)
        assert len(durable) == k - 1, f"k={k}: calls after the crash were performed"

        # resume like a new process: fresh graph, fresh saver on the same storage, and
        # a new counter (a sibling task of the crashed run may still be finishing)
        again = Runs()
        graph = _graph(h.new_saver(), again)
        saved = h.get_state(graph, thread)
        inp = INPUT if saved.metadata is None else None
        out = h.invoke(graph, inp, thread, durability=durability)
        assert out == FINAL, f"crash at call {k}/{total}"
        assert again.snapshot() == _expected_rerun(durable), (
            f"crash at call {k}/{total}: durable={[(c.method, c.step, _who(c)) for c in durable]}"
        )
        # the crashed run ran each node at most once
        assert all(n == 1 for n in runs.snapshot().values())
        snap = h.get_state(graph, thread)
        assert snap.values == FINAL
        assert snap.next == ()
        history = h.history(graph, thread)
        assert history[0].values == FINAL
        for newer, older in pairwise(history):
            assert newer.parent_config == older.config


# ---------------------------------------------------------------------- SQL level


class _Dying(sqlite3.Connection):
    """A connection that dies (raises :class:`Crash`) at the k-th write statement."""

    crash_at: int | None = None
    writes = 0
    dead = False

    def _gate(self, sql: str) -> None:
        if sql.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE", "COMMIT")):
            type(self).writes += 1
            if self.crash_at is not None and type(self).writes >= self.crash_at:
                type(self).dead = True
        if type(self).dead and not sql.lstrip().upper().startswith("ROLLBACK"):
            raise Crash(f"connection died at write statement {type(self).writes}")

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
        self._gate(sql)
        return super().execute(sql, *args)

    def executemany(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
        self._gate(sql)
        return super().executemany(sql, *args)

    def commit(self) -> None:
        self._gate("COMMIT")
        super().commit()


def _dying_class(crash_at: int | None) -> type[_Dying]:
    return type("Dying", (_Dying,), {"crash_at": crash_at, "writes": 0, "dead": False})


def _expire_leases(path: str) -> None:
    """Let time pass for the dead run: its thread lease (which it could not release)
    expires, as it would after ``lease_timeout``."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        if conn.execute("SELECT name FROM sqlite_master WHERE name = 'sg_leases'").fetchone():
            conn.execute("UPDATE sg_leases SET expires_at = 0")
    finally:
        conn.close()


SQL_COMBOS = [
    pytest.param(("sqlite", "sync"), id="sqlite-sync"),
    pytest.param(("aiosqlite", "async"), id="aiosqlite-async"),
]


def _open(kind: str, path: str, factory: type[sqlite3.Connection]) -> Any:
    conn = sqlite3.connect(path, factory=factory, check_same_thread=False, isolation_level=None)
    saver: Any = SqliteSaver(conn) if kind == "sqlite" else AsyncSqliteSaver(conn)
    return conn, saver


def _shut(kind: str, saver: Any, conn: sqlite3.Connection) -> None:
    """Stop the saver's worker (AsyncSqliteSaver) and close the connection."""
    if kind == "aiosqlite":
        saver._executor.shutdown(wait=True)
    conn.close()


@QUIET
@pytest.mark.parametrize("combo", SQL_COMBOS)
@pytest.mark.parametrize("durability", DURABILITIES)
def test_crash_at_every_sql_write_keeps_checkpoints_whole(
    combo: tuple[str, str], durability: str, tmp_path: Path
) -> None:
    kind, mode = combo
    probe = Harness(kind, mode, tmp_path)  # only its event loop is used
    path = str(tmp_path / "crash.sqlite")
    try:
        # the reference history comes from a sync-durability run (async must match it)
        conn, saver = _open(kind, path, sqlite3.Connection)
        graph = _graph(saver, Runs())
        assert probe.invoke(graph, INPUT, cfg("ref"), durability="sync") == FINAL
        reference = {
            (s.metadata["source"], s.metadata["step"]): s.values  # type: ignore[index]
            for s in probe.history(graph, cfg("ref"))
        }
        _shut(kind, saver, conn)
        # count the write statements of a full run with this durability
        counting = _dying_class(None)
        conn, saver = _open(kind, path, counting)
        graph = _graph(saver, Runs())
        assert probe.invoke(graph, INPUT, cfg("count"), durability=durability) == FINAL
        total = counting.writes
        _shut(kind, saver, conn)
        assert total >= 2

        crashes = 0
        for k in range(1, total + 1):
            thread = cfg(f"t{k}")
            conn, saver = _open(kind, path, _dying_class(k))
            try:
                out = probe.invoke(_graph(saver, Runs()), INPUT, thread, durability=durability)
            except Crash:
                crashes += 1
            else:
                # under "async" the saver batches the calls queued behind a slow one into
                # one transaction, so a run can make fewer write statements than the run
                # counted above and end before its k-th: it must then be whole and done
                assert durability == "async", f"k={k}: the run made no {k}th SQL write"
                assert out == FINAL, f"k={k}"
            _shut(kind, saver, conn)  # the process is gone: uncommitted work is rolled back
            _expire_leases(path)
            assert sqlite_integrity(path) == "ok"

            conn, saver = _open(kind, path, sqlite3.Connection)
            graph = _graph(saver, Runs())
            saved = probe.get_state(graph, thread)
            # every checkpoint that is visible is whole: same values as the reference
            for snap in probe.history(graph, thread):
                key = (snap.metadata["source"], snap.metadata["step"])  # type: ignore[index]
                assert snap.values == reference[key], f"k={k}: checkpoint {key} is not whole"
            inp = INPUT if saved.metadata is None else None
            assert probe.invoke(graph, inp, thread, durability=durability) == FINAL, f"k={k}"
            _shut(kind, saver, conn)
        # every crash point is reached but under "async", where the first one always is
        assert crashes == total or (durability == "async" and crashes >= 1), (crashes, total)
    finally:
        probe.close()


@pytest.mark.parametrize("error", [Crash, OSError], ids=["crash", "oserror"])
@pytest.mark.parametrize("durability", DURABILITIES)
def test_a_failed_saver_call_leaves_no_unraisable_error(
    h: Harness, durability: str, error: type[BaseException]
) -> None:
    """A run that dies on a saver error ends cleanly: its loop is closed, so nothing
    is reported later as "Exception ignored in: <generator Loop.drive>"."""
    seen: list[Any] = []
    previous = sys.unraisablehook
    sys.unraisablehook = seen.append
    try:
        # under "exit" the only saver call is the final put
        for k in (1,) if durability == "exit" else (1, 2, 4):
            with pytest.raises(error):
                graph = _graph(SpySaver(h.saver, crash_at=k, error=error), Runs())
                h.invoke(graph, INPUT, cfg(f"t{k}"), durability=durability)
            del graph
        gc.collect()
    finally:
        sys.unraisablehook = previous
    assert [f"{u.exc_type.__name__}: {u.exc_value} in {u.object!r}" for u in seen] == []
