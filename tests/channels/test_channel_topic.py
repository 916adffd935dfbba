"""Tests of Topic."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

import pytest

from stategraph.channels import LastValue, Topic
from stategraph.channels.base import MISSING
from stategraph.errors import EmptyChannelError


def test_empty_topic() -> None:
    ch = Topic(int, key="t")
    assert ch.is_available() is False
    with pytest.raises(EmptyChannelError):
        ch.get()
    assert ch.checkpoint() == []
    assert ch.update([]) is False


def test_lists_are_flattened_one_level() -> None:
    ch = Topic(int)
    assert ch.update([1]) is True
    assert ch.get() == [1]
    assert ch.update([[2, 3], 4]) is True
    assert ch.get() == [2, 3, 4]
    assert ch.update([[[5]], (6, 7)]) is True
    assert ch.get() == [[5], (6, 7)]


def test_non_accumulating_topic_keeps_only_last_step() -> None:
    ch = Topic(int)
    ch.update([1, 2])
    assert ch.update([]) is True  # cleared
    assert ch.is_available() is False
    assert ch.update([]) is False
    ch.update([3])
    assert ch.update([[]]) is True  # cleared, nothing added
    assert ch.is_available() is False
    assert ch.update([[]]) is False


def test_accumulating_topic_keeps_everything() -> None:
    ch = Topic(int, accumulate=True)
    assert ch.update([1]) is True
    assert ch.update([[2, 3], 4]) is True
    assert ch.get() == [1, 2, 3, 4]
    assert ch.update([]) is False
    assert ch.update([[]]) is False
    assert ch.get() == [1, 2, 3, 4]
    assert ch.checkpoint() == [1, 2, 3, 4]


def test_get_and_checkpoint_return_fresh_lists() -> None:
    ch = Topic(int, accumulate=True)
    ch.update([1])
    got = ch.get()
    got.append(99)  # type: ignore[attr-defined]
    assert ch.get() == [1]
    saved = ch.checkpoint()
    ch.update([2])
    assert saved == [1]
    assert ch.get() == [1, 2]


def test_checkpoint_roundtrip_does_not_alias() -> None:
    ch = Topic(str, accumulate=True, key="log")
    saved = ["a", "b"]
    restored = ch.from_checkpoint(saved)
    restored.update(["c"])
    assert saved == ["a", "b"]
    assert restored.get() == ["a", "b", "c"]
    assert restored.accumulate is True and restored.key == "log" and restored.typ is str
    empty = ch.from_checkpoint(MISSING)
    assert empty.is_available() is False and empty.accumulate is True
    assert ch.from_checkpoint([]).is_available() is False


def test_copy_is_independent() -> None:
    ch = Topic(int, accumulate=True)
    ch.update([1])
    clone = ch.copy()
    ch.update([2])
    assert clone.get() == [1]
    assert ch.get() == [1, 2]


def test_consume_finish_eq_types_repr() -> None:
    ch = Topic(int, key="t")
    ch.update([1])
    assert ch.consume() is False and ch.finish() is False
    assert ch.get() == [1]
    assert ch == Topic(str)
    assert ch != Topic(int, accumulate=True)
    assert ch != LastValue(int)
    assert ch.ValueType == Sequence[int]
    assert ch.UpdateType == Union[int, list[int]]
    assert repr(ch) == "Topic(key='t', value=[1])"
