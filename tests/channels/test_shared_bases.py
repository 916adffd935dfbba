"""The bases the channels share (``_ValueChannel``, the barriers' base, ``_empty``):
every channel copies and restores its configuration and its value alike."""

from __future__ import annotations

import operator
from typing import Any

import pytest

from stategraph.channels import (
    AnyValue,
    BinaryOperatorAggregate,
    DeltaChannel,
    EphemeralValue,
    LastValue,
    LastValueAfterFinish,
    NamedBarrierValue,
    NamedBarrierValueAfterFinish,
    Topic,
    UntrackedValue,
)
from stategraph.channels.base import MISSING, BaseChannel
from stategraph.errors import EmptyChannelError, InvalidUpdateError


def _fold(value: list[Any], writes: list[Any]) -> list[Any]:
    return [*value, *writes]


def _written() -> list[tuple[BaseChannel[Any, Any, Any], list[Any]]]:
    """One channel of each kind, keyed "k", with one step written."""
    return [
        (LastValue(int, key="k"), [1]),
        (AnyValue(int, key="k"), [2, 2]),
        (EphemeralValue(int, guard=False, key="k"), [3, 4]),
        (UntrackedValue(int, guard=False, key="k"), [5, 6]),
        (BinaryOperatorAggregate(list, operator.add, key="k"), [[1], [2]]),
        (LastValueAfterFinish(int, key="k"), [7]),
        (NamedBarrierValue(str, {"a", "b"}, key="k"), ["a"]),
        (NamedBarrierValueAfterFinish(str, {"a"}, key="k"), ["a"]),
        (Topic(int, accumulate=True, key="k"), [1, [2, 3]]),
        (DeltaChannel(_fold, list, snapshot_frequency=7), [["x"]]),
    ]


@pytest.mark.parametrize("channel,writes", _written(), ids=lambda v: type(v).__name__)
def test_copy_keeps_class_configuration_and_state(
    channel: BaseChannel[Any, Any, Any], writes: list[Any]
) -> None:
    channel.update(writes)
    channel.finish()
    clone = channel.copy()
    assert type(clone) is type(channel)
    assert clone == channel
    assert (clone.key, clone.typ) == (channel.key, channel.typ)
    for slot in type(channel)._config:
        assert getattr(clone, slot) is getattr(channel, slot)
    assert clone.checkpoint() == channel.checkpoint()
    assert clone.is_available() == channel.is_available()
    if channel.is_available():
        assert clone.get() == channel.get()


@pytest.mark.parametrize("channel,writes", _written(), ids=lambda v: type(v).__name__)
def test_from_checkpoint_restores_what_checkpoint_saved(
    channel: BaseChannel[Any, Any, Any], writes: list[Any]
) -> None:
    channel.update(writes)
    saved = channel.checkpoint()
    restored = channel.from_checkpoint(saved)
    assert type(restored) is type(channel)
    assert restored == channel
    assert restored.checkpoint() == saved
    empty = channel.from_checkpoint(MISSING)
    assert empty == channel
    assert empty.checkpoint() in (MISSING, [], (set(), False), set())


def test_untracked_value_never_restores_a_value() -> None:
    channel = UntrackedValue(int, key="k")
    channel.update([1])
    assert channel.copy().get() == 1
    assert channel.checkpoint() is MISSING
    restored = channel.from_checkpoint(1)
    assert restored.guard is True
    with pytest.raises(EmptyChannelError):
        restored.get()


@pytest.mark.parametrize("cls", [EphemeralValue, UntrackedValue])
def test_guarded_channels_name_themselves_and_the_key(cls: Any) -> None:
    channel = cls(int, key="answer")
    with pytest.raises(InvalidUpdateError, match=rf"At key 'answer': {cls.__name__}\(guard=True\)"):
        channel.update([1, 2])


def test_barriers_share_their_names_and_reset_seen() -> None:
    barrier = NamedBarrierValueAfterFinish(str, {"a", "b"}, key="join")
    barrier.update(["a", "b"])
    barrier.finish()
    fresh = barrier.from_checkpoint(MISSING)
    assert fresh.names is barrier.names
    assert fresh.seen == set() and fresh.finished is False
    with pytest.raises(InvalidUpdateError, match="At key 'join': Value c not in"):
        fresh.update(["c"])
