"""Tests of LastValue and LastValueAfterFinish."""

from __future__ import annotations

import pytest

from stategraph.channels import LastValue, LastValueAfterFinish
from stategraph.channels.base import MISSING
from stategraph.errors import EmptyChannelError, ErrorCode, InvalidUpdateError

CONCURRENT_URL = ErrorCode.INVALID_CONCURRENT_GRAPH_UPDATE.docs_url


class TestLastValue:
    def test_empty(self) -> None:
        ch = LastValue(int, key="x")
        assert ch.is_available() is False
        with pytest.raises(EmptyChannelError):
            ch.get()
        assert ch.checkpoint() is MISSING
        assert ch.update([]) is False
        assert ch.is_available() is False

    def test_single_writes_replace(self) -> None:
        ch = LastValue(int, key="x")
        assert ch.update([1]) is True
        assert ch.get() == 1
        assert ch.update([2]) is True
        assert ch.get() == 2
        assert ch.update([]) is False
        assert ch.get() == 2
        assert ch.checkpoint() == 2

    def test_same_value_still_counts_as_update(self) -> None:
        ch = LastValue(int)
        ch.update([5])
        assert ch.update([5]) is True

    def test_none_is_a_value(self) -> None:
        ch = LastValue(type(None))
        assert ch.update([None]) is True
        assert ch.is_available() is True
        assert ch.get() is None
        assert ch.checkpoint() is None

    def test_two_values_in_one_step_raise_naming_the_key(self) -> None:
        ch = LastValue(int, key="answer")
        ch.update([1])
        with pytest.raises(InvalidUpdateError) as info:
            ch.update([2, 3])
        assert str(info.value) == (
            "At key 'answer': Can receive only one value per step. "
            "Use an Annotated key to handle multiple values.\n"
            f"For troubleshooting, visit: {CONCURRENT_URL}"
        )
        assert ch.get() == 1

    def test_consume_and_finish_do_nothing(self) -> None:
        ch = LastValue(int)
        ch.update([1])
        assert ch.consume() is False
        assert ch.finish() is False
        assert ch.get() == 1

    def test_checkpoint_roundtrip_keeps_config(self) -> None:
        ch = LastValue(str, key="name")
        ch.update(["bob"])
        restored = ch.from_checkpoint(ch.checkpoint())
        assert restored is not ch
        assert restored.get() == "bob"
        assert restored.typ is str and restored.key == "name"
        empty = ch.from_checkpoint(MISSING)
        assert empty.is_available() is False
        assert empty.key == "name" and empty.typ is str
        assert ch.get() == "bob"

    def test_copy_is_independent(self) -> None:
        ch = LastValue(int, key="k")
        ch.update([1])
        clone = ch.copy()
        clone.update([2])
        assert ch.get() == 1 and clone.get() == 2
        assert clone.key == "k"

    def test_types_eq_and_repr(self) -> None:
        ch = LastValue(int, key="k")
        assert ch.ValueType is int and ch.UpdateType is int
        assert ch == LastValue(str)
        assert ch != LastValueAfterFinish(int)
        assert repr(ch) == "LastValue(key='k', value=MISSING)"
        ch.update([3])
        assert repr(ch) == "LastValue(key='k', value=3)"
        assert ch == LastValue(int)


class TestLastValueAfterFinish:
    def test_value_hidden_until_finish(self) -> None:
        ch = LastValueAfterFinish(int, key="k")
        assert ch.update([]) is False
        assert ch.finish() is False  # nothing to finish
        assert ch.update([1]) is True
        assert ch.is_available() is False
        with pytest.raises(EmptyChannelError):
            ch.get()
        assert ch.checkpoint() == (1, False)
        assert ch.consume() is False  # not finished: nothing to consume
        assert ch.finish() is True
        assert ch.is_available() is True
        assert ch.get() == 1
        assert ch.checkpoint() == (1, True)
        assert ch.finish() is False  # already finished

    def test_consume_after_finish_clears(self) -> None:
        ch = LastValueAfterFinish(int)
        ch.update([1])
        ch.finish()
        assert ch.consume() is True
        assert ch.is_available() is False
        assert ch.checkpoint() is MISSING
        assert ch.consume() is False
        assert ch.finish() is False

    def test_several_writes_keep_last(self) -> None:
        ch = LastValueAfterFinish(int)
        assert ch.update([3, 4]) is True
        ch.finish()
        assert ch.get() == 4

    def test_write_after_finish_hides_new_value(self) -> None:
        ch = LastValueAfterFinish(int)
        ch.update([1])
        ch.finish()
        assert ch.update([5]) is True
        assert ch.is_available() is False
        assert ch.checkpoint() == (5, False)
        assert ch.finish() is True
        assert ch.get() == 5

    def test_empty_update_keeps_state(self) -> None:
        ch = LastValueAfterFinish(int)
        ch.update([1])
        ch.finish()
        assert ch.update([]) is False
        assert ch.get() == 1

    def test_checkpoint_roundtrip(self) -> None:
        ch = LastValueAfterFinish(int, key="deferred")
        restored = ch.from_checkpoint((7, True))
        assert restored.get() == 7 and restored.key == "deferred" and restored.typ is int
        # a list (as some serializers return tuples) works too
        assert ch.from_checkpoint([7, False]).checkpoint() == (7, False)
        assert ch.from_checkpoint(MISSING).is_available() is False
        assert ch.from_checkpoint(MISSING).checkpoint() is MISSING

    def test_copy_keeps_finished_flag(self) -> None:
        ch = LastValueAfterFinish(int)
        ch.update([1])
        ch.finish()
        clone = ch.copy()
        assert clone.get() == 1
        clone.consume()
        assert ch.get() == 1 and clone.is_available() is False

    def test_types_eq_and_repr(self) -> None:
        ch = LastValueAfterFinish(int, key="k")
        assert ch.ValueType is int and ch.UpdateType is int
        assert ch == LastValueAfterFinish(str)
        assert ch != LastValue(int)
        ch.update([2])
        assert repr(ch) == "LastValueAfterFinish(key='k', value=(2, False))"
