"""``DeltaChannel``: the channel on its own (folding, overwrites, snapshots, replay)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from stategraph.channels import DeltaChannel
from stategraph.channels.base import MISSING
from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from stategraph.checkpoint.serde.types import _DeltaSnapshot
from stategraph.errors import EmptyChannelError, InvalidUpdateError
from stategraph.graph.message import _messages_delta_reducer
from stategraph.messages import AIMessage, HumanMessage
from stategraph.types import Overwrite


def concat(value: list[Any], writes: Sequence[list[Any]]) -> list[Any]:
    calls.append((list(value), [list(w) for w in writes]))
    return [*value, *(x for w in writes for x in w)]


calls: list[tuple[list[Any], list[list[Any]]]] = []


@pytest.fixture(autouse=True)
def _clear() -> None:
    calls.clear()


def test_a_step_folds_in_one_reducer_call() -> None:
    ch = DeltaChannel(concat).from_checkpoint(MISSING)
    assert ch.get() == []  # list() is the starting value
    assert ch.update([[1], [2, 3]]) is True
    assert ch.get() == [1, 2, 3]
    assert calls == [([], [[1], [2, 3]])]
    assert ch.update([]) is False
    assert ch.checkpoint() is MISSING  # values are stored as deltas


def test_empty_without_a_constructible_type() -> None:
    ch = DeltaChannel(concat, int | None)  # type: ignore[arg-type]
    fresh = ch.from_checkpoint(MISSING)
    assert not fresh.is_available()
    with pytest.raises(EmptyChannelError):
        fresh.get()


def test_overwrite_replaces_and_forces_a_snapshot() -> None:
    ch = DeltaChannel(concat, snapshot_frequency=50).from_checkpoint([0])
    assert not ch.wants_snapshot()
    ch.update([[5], Overwrite([9]), [6]])
    assert ch.get() == [9]
    assert ch.wants_snapshot()
    assert ch.snapshot() == _DeltaSnapshot([9])
    assert not ch.wants_snapshot()
    ch.update([{"__overwrite__": [1]}])
    assert ch.get() == [1]
    with pytest.raises(InvalidUpdateError, match="At key 'items'"):
        named = DeltaChannel(concat)
        named.key = "items"
        named.from_checkpoint(MISSING).update([Overwrite([1]), Overwrite([2])])


def test_snapshot_frequency_counts_updates() -> None:
    ch = DeltaChannel(concat, snapshot_frequency=2).from_checkpoint(MISSING)
    ch.update([[1]])
    assert not ch.wants_snapshot()
    ch.update([[2]])
    assert ch.wants_snapshot()
    snap = ch.snapshot()
    assert isinstance(snap, _DeltaSnapshot) and snap.value == [1, 2]
    ch.update([[3]])
    assert not ch.wants_snapshot()


def test_from_snapshot_and_replay() -> None:
    ch = DeltaChannel(concat).from_checkpoint(_DeltaSnapshot(["a"]))
    ch.replay_writes(
        [("t1", "x", ["b"]), ("t2", "x", ["c"]), ("t3", "x", Overwrite(["z"])), ("t4", "x", ["d"])]
    )
    assert ch.get() == ["z", "d"]
    assert calls == [(["a"], [["b"], ["c"]]), (["z"], [["d"]])]
    assert ch.updates_since_snapshot == 4


def test_bad_snapshot_frequency() -> None:
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="snapshot_frequency must be a positive int"):
            DeltaChannel(concat, snapshot_frequency=bad)  # type: ignore[arg-type]


def test_equality_copy_and_independence() -> None:
    assert DeltaChannel(concat) == DeltaChannel(concat)
    assert DeltaChannel(concat) != DeltaChannel(concat, snapshot_frequency=3)
    ch = DeltaChannel(concat).from_checkpoint([1])
    other = ch.copy()
    other.update([[2]])
    assert ch.get() == [1] and other.get() == [1, 2]


def test_snapshot_round_trips_through_the_serializer() -> None:
    serde = JsonPlusSerializer()
    snap = _DeltaSnapshot([HumanMessage("hi", id="1"), 2])
    assert serde.loads_typed(serde.dumps_typed(snap)) == snap


def test_messages_reducer_and_stable_ids() -> None:
    ch = DeltaChannel(_messages_delta_reducer).from_checkpoint(MISSING)
    write = ch.prepare_write([HumanMessage("a"), {"role": "assistant", "content": "b"}])
    assert all(m.id for m in write)
    assert isinstance(write[1], AIMessage)
    assert ch.prepare_write(write) is write  # already has ids: unchanged
    ch.update([write])
    again = DeltaChannel(_messages_delta_reducer).from_checkpoint(MISSING)
    again.replay_writes([("t", "messages", write)])
    assert again.get() == ch.get()
    replaced = ch.prepare_write(Overwrite([HumanMessage("c")]))
    assert isinstance(replaced, Overwrite) and replaced.value[0].id
    # other reducers keep their dicts as they are
    plain = DeltaChannel(concat)
    value = [{"role": "user", "content": "x"}]
    assert plain.prepare_write(value) is value
