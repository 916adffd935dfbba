"""``update_state`` / ``bulk_update_state`` take the thread lease like a run does.

A state update made while a run holds the thread follows the run's rule: with the
default strategy ``"reject"`` it raises ``ThreadBusyError`` naming the thread and
saves nothing; with ``"enqueue"`` it waits for the run and lands after it. It never
interleaves with the run's checkpoints. Every bundled saver (in memory, SQLite file,
PostgreSQL).
"""

from __future__ import annotations

import asyncio
import operator
import threading
from typing import Annotated, Any

import pytest
from lease_helpers import check_linear_history, open_sync_saver
from typing_extensions import TypedDict

from stategraph.errors import ThreadBusyError
from stategraph.graph import END, START, StateGraph
from stategraph.types import StateUpdate

KINDS = ["memory", "sqlite", "postgres"]
WAIT = 60.0  # generous: the machine may be loaded


class State(TypedDict):
    log: Annotated[list[str], operator.add]


class Gate:
    """Node ``a`` signals ``entered`` and blocks until ``go`` is set."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.go = threading.Event()


def build(saver: Any, gate: Gate) -> Any:
    def a(state: State) -> dict[str, Any]:
        gate.entered.set()
        assert gate.go.wait(WAIT), "the test never opened the gate"
        return {"log": ["a"]}

    def b(state: State) -> dict[str, Any]:
        return {"log": ["b"]}

    builder = StateGraph(State)
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", END)
    return builder.compile(checkpointer=saver)


def _start_run(app: Any, config: dict[str, Any], gate: Gate) -> tuple[threading.Thread, list[Any]]:
    result: list[Any] = []

    def run() -> None:
        try:
            # durability="sync": what the run saved before node a is in storage
            result.append(app.invoke({"log": ["in"]}, config, durability="sync"))
        except BaseException as exc:  # reported by the test
            result.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    assert gate.entered.wait(WAIT), "the run never reached node a"
    return thread, result


@pytest.mark.parametrize("kind", KINDS)
def test_update_while_a_run_holds_the_thread_is_rejected(kind: str, target_for: Any) -> None:
    with open_sync_saver(kind, target_for(kind)) as saver:
        gate = Gate()
        app = build(saver, gate)
        config = {"configurable": {"thread_id": "held"}}
        thread, result = _start_run(app, config, gate)
        try:
            saved_before = len(list(saver.list(config)))
            with pytest.raises(ThreadBusyError, match="Thread 'held' is busy") as busy:
                app.update_state(config, {"log": ["edit"]}, as_node="b")
            assert busy.value.thread_id == "held"
            assert "state update" in str(busy.value)
            with pytest.raises(ThreadBusyError, match="Thread 'held' is busy"):
                app.bulk_update_state(
                    config,
                    [
                        [StateUpdate({"log": ["bulk1"]}, "b")],
                        [StateUpdate({"log": ["bulk2"]}, "b")],
                    ],
                )
            # nothing of either update was saved
            assert len(list(saver.list(config))) == saved_before
        finally:
            gate.go.set()
            thread.join(WAIT)
        assert result == [{"log": ["in", "a", "b"]}]
        assert app.get_state(config).values["log"] == ["in", "a", "b"]
        # the thread is free again: the update goes through, after the run
        app.update_state(config, {"log": ["edit"]}, as_node="b")
        app.bulk_update_state(
            config, [[StateUpdate({"log": ["bulk1"]}, "b")], [StateUpdate({"log": ["bulk2"]}, "b")]]
        )
        assert app.get_state(config).values["log"] == ["in", "a", "b", "edit", "bulk1", "bulk2"]
        check_linear_history(saver, "held")
        # and a run after the updates takes the thread as usual
        gate.go.set()
        app.invoke({"log": ["again"]}, config)
        assert app.get_state(config).values["log"][-3:] == ["again", "a", "b"]


@pytest.mark.parametrize("kind", KINDS)
def test_enqueued_update_waits_for_the_run(kind: str, target_for: Any) -> None:
    with open_sync_saver(kind, target_for(kind)) as saver:
        gate = Gate()
        app = build(saver, gate)
        config = {"configurable": {"thread_id": "queued"}}
        thread, result = _start_run(app, config, gate)
        done = threading.Event()
        errors: list[BaseException] = []

        def edit() -> None:
            try:
                app.update_state(
                    {**config, "multitask_strategy": "enqueue", "enqueue_timeout": WAIT},
                    {"log": ["edit"]},
                    as_node="b",
                )
            except BaseException as exc:
                errors.append(exc)
            finally:
                done.set()

        editor = threading.Thread(target=edit)
        editor.start()
        try:
            # the update waits while the run holds the thread (the run cannot go on
            # before the gate opens, so the update cannot have landed yet)
            assert not done.wait(0.3)
        finally:
            gate.go.set()
            thread.join(WAIT)
            editor.join(WAIT)
        assert errors == []
        assert result == [{"log": ["in", "a", "b"]}]
        # the update landed after the whole run, never between its steps
        assert app.get_state(config).values["log"] == ["in", "a", "b", "edit"]
        check_linear_history(saver, "queued")


def test_async_update_while_a_run_holds_the_thread_is_rejected() -> None:
    from stategraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    gate = Gate()
    app = build(saver, gate)
    config = {"configurable": {"thread_id": "aheld"}}
    thread, result = _start_run(app, config, gate)

    async def edits() -> None:
        with pytest.raises(ThreadBusyError, match="Thread 'aheld' is busy"):
            await app.aupdate_state(config, {"log": ["edit"]}, as_node="b")
        with pytest.raises(ThreadBusyError, match="Thread 'aheld' is busy"):
            await app.abulk_update_state(config, [[StateUpdate({"log": ["bulk"]}, "b")]])

    try:
        asyncio.run(edits())
    finally:
        gate.go.set()
        thread.join(WAIT)
    assert result == [{"log": ["in", "a", "b"]}]
    asyncio.run(app.aupdate_state(config, {"log": ["edit"]}, as_node="b"))
    assert app.get_state(config).values["log"] == ["in", "a", "b", "edit"]


def test_update_from_inside_the_holding_run_writes_under_its_lease() -> None:
    from stategraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "self"}}
    seen: list[str] = []

    def a(state: State) -> dict[str, Any]:
        # the run holds the thread; its own node may still edit it
        app.update_state(config, {"log": ["side"]}, as_node="a")
        seen.append("edited")
        return {"log": ["a"]}

    builder = StateGraph(State)
    builder.add_node("a", a)
    builder.add_edge(START, "a")
    builder.add_edge("a", END)
    app = builder.compile(checkpointer=saver)
    # durability="sync": the step's checkpoint is saved before its node runs, so the
    # node's update is based on it (with "async" it may not be saved yet)
    app.invoke({"log": ["in"]}, config, durability="sync")
    assert seen == ["edited"]
    # the update was saved (under the run's lease) as a checkpoint of the thread
    updates = [s for s in app.get_state_history(config) if s.metadata["source"] == "update"]
    assert [u.values["log"] for u in updates] == [["in", "side"]]


@pytest.mark.parametrize(
    ("setting", "value"),
    [("multitask_strategy", "sometimes"), ("lease_timeout", 0), ("enqueue_timeout", -1)],
)
def test_bad_lease_setting_of_an_update_is_refused_before_saving(setting: str, value: Any) -> None:
    from stategraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    gate = Gate()
    gate.go.set()
    app = build(saver, gate)
    config = {"configurable": {"thread_id": "bad"}}
    app.invoke({"log": ["in"]}, config)
    before = len(list(saver.list(config)))
    with pytest.raises(ValueError, match=setting):
        app.update_state({**config, setting: value}, {"log": ["edit"]}, as_node="b")
    assert len(list(saver.list(config))) == before
    assert app.get_state(config).values["log"] == ["in", "a", "b"]
