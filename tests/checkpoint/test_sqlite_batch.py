"""``SqliteSaver.batch()``: the calls of a block share one transaction (one commit),
each call still saved or failing on its own; and the runtime's background saver
thread uses it for the calls it finds queued together."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.checkpoint.checkpoint_steps import put_step
from typing_extensions import TypedDict

from stategraph.checkpoint.base import create_checkpoint, empty_checkpoint
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.graph import END, START, StateGraph
from stategraph.pregel._effects import Put
from stategraph.pregel._sync_shell import _Saver


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    with SqliteSaver.from_conn_string(str(tmp_path / "batch.sqlite")) as s:
        yield s


def _put(
    saver: SqliteSaver, config: dict[str, Any], parent: Any, step: int
) -> tuple[dict[str, Any], Any]:
    return put_step(saver, config, parent, step, step)


def test_batch_commits_once_and_keeps_every_call(saver: SqliteSaver, tmp_path: Path) -> None:
    root = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    saver.setup()
    other = sqlite3.connect(str(tmp_path / "batch.sqlite"), isolation_level=None)
    before = other.execute("PRAGMA data_version").fetchone()[0]
    parent = empty_checkpoint()
    config = root
    with saver.batch():
        for step in range(5):
            config, parent = _put(saver, config, parent, step)
            saver.put_writes(config, [("x", step)], f"task-{step}")
        # not visible to another connection before the block ends
        assert other.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 0
        # but visible to the batch's own calls
        latest = saver.get_tuple(root)
        assert latest is not None and latest.checkpoint["channel_values"]["x"] == 4
    assert other.execute("PRAGMA data_version").fetchone()[0] == before + 1  # one commit
    assert other.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 5
    steps = [t.metadata["step"] for t in saver.list(root)]
    assert steps == [4, 3, 2, 1, 0]
    latest = saver.get_tuple(root)
    assert latest is not None
    assert latest.pending_writes == [("task-4", "x", 4)]
    assert not saver.conn.in_transaction
    other.close()


def test_failing_call_in_batch_leaves_nothing_and_keeps_earlier_calls(
    saver: SqliteSaver,
) -> None:
    root = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    config, parent = _put(saver, root, empty_checkpoint(), 0)
    with saver.batch():
        saver.put_writes(config, [("x", "kept")], "task-a")
        with pytest.raises(ValueError, match="checkpoint_id"):
            saver.put_writes(root, [("x", "no checkpoint id")], "task-b")
        # a call that fails inside the statement: its savepoint is rolled back
        real = saver.conn

        class Failing:
            """Delegates to the connection, failing on the checkpoint insert."""

            def __getattr__(self, name: str) -> Any:
                return getattr(real, name)

            def execute(self, sql: str, *args: Any) -> Any:
                if " INTO checkpoints " in sql:
                    raise sqlite3.OperationalError("disk I/O error (injected)")
                return real.execute(sql, *args)

        saver.conn = Failing()  # type: ignore[assignment]
        try:
            with pytest.raises(sqlite3.OperationalError, match="injected"):
                _put(saver, config, parent, 1)
        finally:
            saver.conn = real
    tuples = list(saver.list(root))
    assert [t.metadata["step"] for t in tuples] == [0]
    assert tuples[0].pending_writes == [("task-a", "x", "kept")]
    # the failed put's blob did not survive either
    blobs = saver.conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0]
    assert blobs == 1


def test_error_in_block_rolls_back_the_batch(saver: SqliteSaver) -> None:
    root = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    with pytest.raises(RuntimeError, match="boom"):
        with saver.batch():
            _put(saver, root, empty_checkpoint(), 0)
            raise RuntimeError("boom")
    assert saver.get_tuple(root) is None
    assert not saver.conn.in_transaction
    _put(saver, root, empty_checkpoint(), 0)  # the saver still works
    assert saver.get_tuple(root) is not None


def test_batch_blocks_other_threads_until_it_ends(saver: SqliteSaver) -> None:
    root = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    seen: list[Any] = []
    with saver.batch():
        _put(saver, root, empty_checkpoint(), 0)
        reader = threading.Thread(target=lambda: seen.append(saver.get_tuple(root)))
        reader.start()
        reader.join(0.2)
        assert reader.is_alive()  # waits for the lock
    reader.join(5)
    assert seen and seen[0] is not None and seen[0].metadata["step"] == 0


class _Recording(InMemorySaver):
    """An in-memory saver that records its batches and fails on one call."""

    def __init__(self, fail_step: int | None = None) -> None:
        super().__init__()
        self.batches: list[int] = []
        self.depth = 0
        self.fail_step = fail_step
        self.gate = threading.Event()
        self.entered = threading.Event()

    def batch(self) -> Any:
        saver = self

        class Block:
            def __enter__(self) -> None:
                saver.depth += 1

            def __exit__(self, *exc: Any) -> None:
                saver.depth -= 1

        self.batches.append(0)
        return Block()

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        self.entered.set()
        self.gate.wait(5)
        if self.depth:
            self.batches[-1] += 1
        if metadata.get("step") == self.fail_step:
            raise RuntimeError(f"put failed at step {self.fail_step}")
        return super().put(config, checkpoint, metadata, new_versions)


def _queue_puts(worker: _Saver, saver: InMemorySaver, steps: int) -> None:
    root = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    parent = empty_checkpoint()
    config: dict[str, Any] = root
    for step in range(steps):
        checkpoint = create_checkpoint(parent, None, step)
        worker.perform(Put(config, checkpoint, {"source": "loop", "step": step}, {}, False), False)
        config = {"configurable": {**root["configurable"], "checkpoint_id": checkpoint["id"]}}
        parent = checkpoint


def test_background_saver_batches_calls_queued_together() -> None:
    saver = _Recording()
    worker = _Saver(saver)
    _queue_puts(worker, saver, 1)  # the worker takes this one alone, then waits
    assert saver.entered.wait(5)
    _queue_puts(worker, saver, 4)
    saver.gate.set()
    worker.close()
    root = {"configurable": {"thread_id": "t"}}
    assert len(list(saver.list(root))) == 5
    assert saver.batches == [4]  # the first call alone, the four queued meanwhile together


def test_background_saver_error_skips_the_rest_of_a_batch() -> None:
    saver = _Recording(fail_step=2)
    worker = _Saver(saver)
    _queue_puts(worker, saver, 5)
    saver.gate.set()
    with pytest.raises(RuntimeError, match="put failed at step 2"):
        worker.flush()
    worker.close()
    steps = sorted(t.metadata["step"] for t in saver.list({"configurable": {"thread_id": "t"}}))
    assert steps == [0, 1]


def test_run_with_async_durability_saves_every_step_on_sqlite(saver: SqliteSaver) -> None:
    class S(TypedDict):
        n: int

    def bump(state: dict[str, Any]) -> dict[str, Any]:
        return {"n": state["n"] + 1}

    builder = StateGraph(S)
    builder.add_node("a", bump)
    builder.add_node("b", bump)
    builder.add_node("c", bump)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    builder.add_edge("c", END)
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "run"}}
    for _ in range(3):
        graph.invoke({"n": 0}, config, durability="async")
    history = list(graph.get_state_history(config))
    assert len(history) == 3 * 5  # per run: the input and the steps of __start__, a, b, c
    assert history[0].values == {"n": 3}
    assert [h.metadata["step"] for h in history] == list(range(13, -2, -1))
    assert not saver.conn.in_transaction
