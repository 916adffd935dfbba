"""The lease primitives of every bundled saver, and what other savers get.

Fencing: once a lease expired or was taken over, a ``put``/``put_writes`` carrying
the old token fails with ``LeaseLostError`` and stores nothing. Queue order, stop
requests and rollback as the runtime relies on them. Bad lease settings are refused
before a run starts.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from lease_helpers import State, build, open_sync_saver, run_input

from stategraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from stategraph.checkpoint.lease import (
    LEASE_TOKEN_KEY,
    PRIORITY_ENQUEUE,
    PRIORITY_PREEMPT,
    STOP_INTERRUPT,
    STOP_ROLLBACK,
)
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.errors import LeaseLostError, ThreadBusyError
from stategraph.graph import END, START, StateGraph

KINDS = ["memory", "sqlite", "postgres"]


def _put(saver: Any, token: int | None, parent: str | None = None) -> str:
    checkpoint = empty_checkpoint()
    conf: dict[str, Any] = {"thread_id": "t", "checkpoint_ns": ""}
    if parent is not None:
        conf["checkpoint_id"] = parent
    if token is not None:
        conf[LEASE_TOKEN_KEY] = token
    saver.put({"configurable": conf}, checkpoint, {"source": "loop", "step": 0}, {})
    return checkpoint["id"]


def _writes(saver: Any, token: int, checkpoint_id: str) -> None:
    conf = {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": checkpoint_id}
    saver.put_writes({"configurable": {**conf, LEASE_TOKEN_KEY: token}}, [("x", 1)], "task")


def _ids(saver: Any) -> list[str]:
    return [t.checkpoint["id"] for t in saver.list({"configurable": {"thread_id": "t"}})]


@pytest.mark.parametrize("kind", KINDS)
def test_one_holder_at_a_time_with_growing_tokens(kind: str, target_for: Any) -> None:
    with open_sync_saver(kind, target_for(kind)) as saver:
        assert saver.lease_fencing and saver.lease_rollback_supported
        first = saver.lease_acquire("t", "run-1", 5.0)
        assert first.lease is not None and first.lease.token == 1
        busy = saver.lease_acquire("t", "run-2", 5.0)
        assert busy.lease is None
        assert (busy.holder_run_id, busy.holder_token) == ("run-1", 1)
        assert saver.lease_renew(first.lease) is None
        # another thread id is independent
        other = saver.lease_acquire("u", "run-3", 5.0)
        assert other.lease is not None and other.lease.token == 1
        saver.lease_release(first.lease)
        second = saver.lease_acquire("t", "run-2", 5.0)
        assert second.lease is not None and second.lease.token == 2
        # the released holder cannot renew
        with pytest.raises(LeaseLostError, match="'t'"):
            saver.lease_renew(first.lease)


@pytest.mark.parametrize("kind", KINDS)
def test_an_expired_holder_cannot_write(kind: str, target_for: Any) -> None:
    with open_sync_saver(kind, target_for(kind)) as saver:
        old = saver.lease_acquire("t", "old", 1.0).lease
        assert old is not None
        head = _put(saver, old.token)
        _writes(saver, old.token, head)
        time.sleep(1.2)
        # expired, nobody took over yet: its writes are refused all the same
        with pytest.raises(LeaseLostError, match="expired"):
            _put(saver, old.token, head)
        new = saver.lease_acquire("t", "new", 5.0).lease
        assert new is not None and new.token == old.token + 1
        with pytest.raises(LeaseLostError, match="took the thread over"):
            _put(saver, old.token, head)
        with pytest.raises(LeaseLostError):
            _writes(saver, old.token, head)
        with pytest.raises(LeaseLostError):
            saver.lease_renew(old)
        assert _ids(saver) == [head]
        saved = saver.get_tuple({"configurable": {"thread_id": "t"}})
        assert saved is not None and saved.pending_writes == [("task", "x", 1)]
        # the holder writes; a write without a token (no lease asked) is not checked
        _put(saver, new.token, head)
        _put(saver, None, head)
        assert len(_ids(saver)) == 3
        # releasing a lost lease changes nothing
        saver.lease_release(old)
        assert saver.lease_renew(new) is None


@pytest.mark.parametrize("kind", KINDS)
def test_waiters_are_served_preempters_first_then_in_arrival_order(
    kind: str, target_for: Any
) -> None:
    with open_sync_saver(kind, target_for(kind)) as saver:
        holder = saver.lease_acquire("t", "holder", 5.0).lease
        assert holder is not None
        t1 = saver.lease_enqueue("t", "w1", 5.0, PRIORITY_ENQUEUE)
        t2 = saver.lease_enqueue("t", "w2", 5.0, PRIORITY_ENQUEUE)
        t3 = saver.lease_enqueue("t", "w3", 5.0, PRIORITY_PREEMPT)
        assert t1 < t2 < t3
        # a waiter asking the holder to stop: the holder hears it on renewal
        asked = saver.lease_acquire(
            "t", "w3", 5.0, ticket=t3, priority=PRIORITY_PREEMPT, stop=STOP_INTERRUPT
        )
        assert asked.lease is None and asked.holder_run_id == "holder"
        assert saver.lease_renew(holder) == STOP_INTERRUPT
        # a rollback request wins over an interrupt request
        saver.lease_acquire(
            "t", "w3", 5.0, ticket=t3, priority=PRIORITY_PREEMPT, stop=STOP_ROLLBACK
        )
        assert saver.lease_renew(holder) == STOP_ROLLBACK
        saver.lease_release(holder, finished=False)
        # free, but runs wait: a newcomer without a ticket does not jump the queue
        newcomer = saver.lease_acquire("t", "late", 5.0)
        assert newcomer.lease is None and newcomer.holder_run_id is None
        assert saver.lease_acquire("t", "w1", 5.0, ticket=t1).lease is None
        got = saver.lease_acquire("t", "w3", 5.0, ticket=t3, priority=PRIORITY_PREEMPT).lease
        assert got is not None and got.run_id == "w3"
        assert saver.lease_renew(got) is None  # a new holder starts without a request
        saver.lease_release(got)
        assert saver.lease_acquire("t", "w2", 5.0, ticket=t2).lease is None
        got = saver.lease_acquire("t", "w1", 5.0, ticket=t1).lease
        assert got is not None
        saver.lease_release(got)
        saver.lease_dequeue("t", t2)  # w2 gives up
        assert saver.lease_acquire("t", "late", 5.0).lease is not None


@pytest.mark.parametrize("kind", KINDS)
def test_a_waiter_that_stops_polling_loses_its_place(kind: str, target_for: Any) -> None:
    with open_sync_saver(kind, target_for(kind)) as saver:
        holder = saver.lease_acquire("t", "holder", 5.0).lease
        assert holder is not None
        saver.lease_enqueue("t", "gone", 0.2, PRIORITY_ENQUEUE)
        saver.lease_release(holder)
        time.sleep(0.4)
        assert saver.lease_acquire("t", "next", 5.0).lease is not None


@pytest.mark.parametrize("kind", KINDS)
def test_rollback_deletes_only_what_a_stopped_run_saved(kind: str, target_for: Any) -> None:
    with open_sync_saver(kind, target_for(kind)) as saver:
        done = saver.lease_acquire("t", "done", 5.0).lease
        assert done is not None
        kept = _put(saver, done.token)
        saver.lease_release(done)  # finished: never rolled back
        stopped = saver.lease_acquire("t", "stopped", 5.0).lease
        assert stopped is not None
        a = _put(saver, stopped.token, kept)
        b = _put(saver, stopped.token, a)
        _writes(saver, stopped.token, b)
        saver.lease_release(stopped, finished=False)
        new = saver.lease_acquire("t", "new", 5.0).lease
        assert new is not None
        assert saver.lease_rollback(new, [done.token, stopped.token]) == 2
        assert _ids(saver) == [kept]
        assert saver.lease_rollback(new, [stopped.token]) == 0
        # only the holder may roll back
        with pytest.raises(LeaseLostError):
            saver.lease_rollback(stopped, [done.token])


class _PlainSaver(BaseCheckpointSaver[str]):
    """A third-party saver written against the base contract only (no leases)."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = InMemorySaver()

    def get_tuple(self, config: dict[str, Any]) -> Any:
        return self.inner.get_tuple(config)

    def list(self, config: Any, **kwargs: Any) -> Any:
        return self.inner.list(config, **kwargs)

    def put(self, config: dict[str, Any], *args: Any) -> dict[str, Any]:
        # a token must not reach it: it never granted one
        assert LEASE_TOKEN_KEY not in config["configurable"]
        return self.inner.put(config, *args)

    def put_writes(self, config: dict[str, Any], *args: Any) -> None:
        assert LEASE_TOKEN_KEY not in config["configurable"]
        self.inner.put_writes(config, *args)

    def get_next_version(self, current: Any, channel: None) -> str:
        return self.inner.get_next_version(current, channel)


def test_a_saver_without_leases_still_serializes_the_runs_of_its_process() -> None:
    saver = _PlainSaver()
    assert not saver.lease_fencing and not saver.lease_rollback_supported
    entered, gate = threading.Event(), threading.Event()

    def slow(state: State) -> dict[str, Any]:
        entered.set()
        gate.wait(10)
        return {"log": [f"a:{state['inbox']}"]}

    builder = StateGraph(State)
    builder.add_node("a", slow)
    builder.add_edge(START, "a")
    builder.add_edge("a", END)
    holder_app = builder.compile(checkpointer=saver)
    app = build(saver)
    cfg: dict[str, Any] = {"configurable": {"thread_id": "t"}}
    result: list[Any] = []
    holder = threading.Thread(target=lambda: result.append(holder_app.invoke(run_input("h"), cfg)))
    holder.start()
    assert entered.wait(10)
    with pytest.raises(ThreadBusyError):
        app.invoke(run_input("x"), cfg)
    gate.set()
    holder.join()
    assert result[0]["log"] == ["h", "a:h"]
    assert app.invoke(run_input("y"), cfg)["log"] == ["h", "a:h", "y", "a:y", "b:y"]
    with pytest.raises(ValueError, match=r"multitask_strategy='rollback'.*_PlainSaver"):
        app.invoke(run_input("z"), cfg, multitask_strategy="rollback")
