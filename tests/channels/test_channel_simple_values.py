"""Tests of EphemeralValue, UntrackedValue and AnyValue."""

from __future__ import annotations

import pytest

from stategraph.channels import AnyValue, EphemeralValue, LastValue, UntrackedValue
from stategraph.channels.base import MISSING
from stategraph.errors import EmptyChannelError, InvalidUpdateError


class TestEphemeralValue:
    def test_value_lives_one_step(self) -> None:
        ch = EphemeralValue(int, key="e")
        assert ch.update([]) is False
        assert ch.update([1]) is True
        assert ch.get() == 1
        assert ch.checkpoint() == 1
        assert ch.update([]) is True  # cleared
        assert ch.is_available() is False
        with pytest.raises(EmptyChannelError):
            ch.get()
        assert ch.checkpoint() is MISSING
        assert ch.update([]) is False

    def test_guard_rejects_several_values(self) -> None:
        ch = EphemeralValue(int, key="start")
        ch.update([3])
        with pytest.raises(InvalidUpdateError) as info:
            ch.update([1, 2])
        assert str(info.value) == (
            "At key 'start': EphemeralValue(guard=True) can receive only one value per "
            "step. Use guard=False if you want to store any one of multiple values."
        )
        assert ch.get() == 3

    def test_without_guard_keeps_last(self) -> None:
        ch = EphemeralValue(int, guard=False)
        assert ch.update([1, 2]) is True
        assert ch.get() == 2

    def test_checkpoint_roundtrip_keeps_guard_and_key(self) -> None:
        ch = EphemeralValue(int, guard=False, key="e")
        restored = ch.from_checkpoint(5)
        assert restored.get() == 5
        assert restored.guard is False and restored.key == "e" and restored.typ is int
        assert restored.update([1, 2]) is True
        assert ch.from_checkpoint(MISSING).is_available() is False

    def test_copy_is_independent(self) -> None:
        ch = EphemeralValue(int)
        ch.update([1])
        clone = ch.copy()
        clone.update([])
        assert ch.get() == 1 and clone.is_available() is False
        assert clone.guard is True

    def test_eq_types_repr(self) -> None:
        assert EphemeralValue(int) == EphemeralValue(str)
        assert EphemeralValue(int) != EphemeralValue(int, guard=False)
        assert EphemeralValue(int) != LastValue(int)
        ch = EphemeralValue(int, key="e")
        assert ch.ValueType is int and ch.UpdateType is int
        assert ch.consume() is False and ch.finish() is False
        ch.update([4])
        assert repr(ch) == "EphemeralValue(key='e', value=4)"


class TestUntrackedValue:
    def test_behaves_like_last_value(self) -> None:
        ch = UntrackedValue(int, key="u")
        assert ch.update([]) is False
        assert ch.is_available() is False
        assert ch.update([1]) is True
        assert ch.get() == 1
        assert ch.update([]) is False  # no write keeps the value
        assert ch.get() == 1
        assert ch.consume() is False and ch.finish() is False

    def test_never_checkpointed(self) -> None:
        ch = UntrackedValue(int, key="u")
        ch.update([1])
        assert ch.checkpoint() is MISSING
        assert ch.from_checkpoint(5).is_available() is False
        restored = ch.from_checkpoint(MISSING)
        assert restored.is_available() is False
        assert restored.key == "u" and restored.guard is True and restored.typ is int

    def test_copy_keeps_value(self) -> None:
        ch = UntrackedValue(int, guard=False, key="u")
        ch.update([1])
        clone = ch.copy()
        assert clone.get() == 1 and clone.guard is False and clone.key == "u"
        clone.update([2])
        assert ch.get() == 1

    def test_guard(self) -> None:
        ch = UntrackedValue(int, key="scratch")
        ch.update([1])
        with pytest.raises(InvalidUpdateError) as info:
            ch.update([2, 3])
        assert str(info.value) == (
            "At key 'scratch': UntrackedValue(guard=True) can receive only one value per "
            "step. Use guard=False if you want to store any one of multiple values."
        )
        assert ch.get() == 1
        unguarded = UntrackedValue(int, guard=False)
        assert unguarded.update([1, 2, 3]) is True
        assert unguarded.get() == 3

    def test_eq_types_repr(self) -> None:
        assert UntrackedValue(int) == UntrackedValue(str)
        assert UntrackedValue(int) != UntrackedValue(int, guard=False)
        ch = UntrackedValue(int, key="u")
        assert ch.ValueType is int and ch.UpdateType is int
        ch.update([7])
        assert repr(ch) == "UntrackedValue(key='u', value=7)"


class TestAnyValue:
    def test_keeps_last_of_many(self) -> None:
        ch = AnyValue(int, key="a")
        assert ch.update([]) is False
        assert ch.update([1]) is True
        assert ch.get() == 1
        assert ch.update([2, 3]) is True
        assert ch.get() == 3
        assert ch.checkpoint() == 3

    def test_empty_step_clears(self) -> None:
        ch = AnyValue(int)
        ch.update([1])
        assert ch.update([]) is True
        assert ch.is_available() is False
        with pytest.raises(EmptyChannelError):
            ch.get()
        assert ch.update([]) is False
        assert ch.checkpoint() is MISSING

    def test_checkpoint_and_copy(self) -> None:
        ch = AnyValue(str, key="a")
        ch.update(["x"])
        restored = ch.from_checkpoint(ch.checkpoint())
        assert restored.get() == "x" and restored.key == "a" and restored.typ is str
        assert ch.from_checkpoint(MISSING).is_available() is False
        clone = ch.copy()
        clone.update([])
        assert ch.get() == "x" and clone.is_available() is False

    def test_eq_types_repr(self) -> None:
        ch = AnyValue(int, key="a")
        assert ch == AnyValue(str)
        assert ch != LastValue(int)
        assert ch.ValueType is int and ch.UpdateType is int
        assert ch.consume() is False and ch.finish() is False
        assert repr(ch) == "AnyValue(key='a', value=MISSING)"
