"""Tests of NamedBarrierValue and NamedBarrierValueAfterFinish."""

from __future__ import annotations

import pytest

from stategraph.channels import NamedBarrierValue, NamedBarrierValueAfterFinish
from stategraph.channels.base import MISSING
from stategraph.errors import EmptyChannelError, InvalidUpdateError


class TestNamedBarrierValue:
    def test_available_when_all_names_seen(self) -> None:
        ch = NamedBarrierValue(str, {"a", "b"}, key="join")
        assert ch.update([]) is False
        assert ch.checkpoint() == set()
        assert ch.update(["a"]) is True
        assert ch.is_available() is False
        with pytest.raises(EmptyChannelError):
            ch.get()
        assert ch.consume() is False  # incomplete barrier is not consumed
        assert ch.update(["a"]) is False  # already seen
        assert ch.update(["b"]) is True
        assert ch.is_available() is True
        assert ch.get() is None
        assert ch.checkpoint() == {"a", "b"}

    def test_duplicates_in_one_step(self) -> None:
        ch = NamedBarrierValue(str, {"a", "b"})
        assert ch.update(["a", "b", "a"]) is True
        assert ch.get() is None

    def test_consume_resets(self) -> None:
        ch = NamedBarrierValue(str, {"a"})
        ch.update(["a"])
        assert ch.consume() is True
        assert ch.is_available() is False
        assert ch.checkpoint() == set()
        assert ch.consume() is False
        assert ch.finish() is False

    def test_unknown_name_raises_naming_key_value_and_names(self) -> None:
        ch = NamedBarrierValue(str, {"b", "a"}, key="join:c")
        with pytest.raises(InvalidUpdateError) as info:
            ch.update(["a", "c"])
        assert str(info.value) == (
            "At key 'join:c': Value c not in {'a', 'b'}. "
            "Only the names this barrier waits for may be written to it."
        )

    def test_empty_names_is_always_available(self) -> None:
        ch = NamedBarrierValue(str, set())
        assert ch.is_available() is True
        assert ch.consume() is True

    def test_checkpoint_roundtrip(self) -> None:
        ch = NamedBarrierValue(str, {"a", "b"}, key="join")
        ch.update(["a"])
        saved = ch.checkpoint()
        ch.update(["b"])
        assert saved == {"a"}  # the checkpoint is not aliased
        restored = ch.from_checkpoint(saved)
        assert restored.names == {"a", "b"} and restored.key == "join" and restored.typ is str
        assert restored.is_available() is False
        restored.update(["b"])
        assert restored.is_available() is True
        assert saved == {"a"}
        # serializers may hand back a list instead of a set
        assert ch.from_checkpoint(["a", "b"]).is_available() is True
        assert ch.from_checkpoint(MISSING).checkpoint() == set()

    def test_copy_is_independent(self) -> None:
        ch = NamedBarrierValue(str, {"a", "b"})
        ch.update(["a"])
        clone = ch.copy()
        ch.update(["b"])
        assert clone.checkpoint() == {"a"}
        assert clone.is_available() is False

    def test_eq_types_repr(self) -> None:
        ch = NamedBarrierValue(str, {"b", "a"}, key="j")
        assert ch == NamedBarrierValue(int, {"a", "b"})
        assert ch != NamedBarrierValue(str, {"a"})
        assert ch != NamedBarrierValueAfterFinish(str, {"a", "b"})
        assert ch.ValueType is str and ch.UpdateType is str
        ch.update(["b"])
        assert repr(ch) == "NamedBarrierValue(key='j', names={'a', 'b'}, seen={'b'})"


class TestNamedBarrierValueAfterFinish:
    def test_available_only_after_finish(self) -> None:
        ch = NamedBarrierValueAfterFinish(str, {"a", "b"}, key="defer")
        assert ch.checkpoint() == (set(), False)
        assert ch.update(["a"]) is True
        assert ch.finish() is False  # incomplete
        assert ch.update(["b"]) is True
        assert ch.is_available() is False
        with pytest.raises(EmptyChannelError):
            ch.get()
        assert ch.checkpoint() == ({"a", "b"}, False)
        assert ch.consume() is False  # not finished yet
        assert ch.finish() is True
        assert ch.is_available() is True
        assert ch.get() is None
        assert ch.finish() is False
        assert ch.checkpoint() == ({"a", "b"}, True)
        assert ch.update(["a"]) is False
        assert ch.consume() is True
        assert ch.is_available() is False
        assert ch.checkpoint() == (set(), False)
        assert ch.consume() is False

    def test_unknown_name_raises(self) -> None:
        ch = NamedBarrierValueAfterFinish(str, {"x"}, key="defer")
        with pytest.raises(InvalidUpdateError) as info:
            ch.update([3])  # type: ignore[list-item]
        assert str(info.value) == (
            "At key 'defer': Value 3 not in {'x'}. "
            "Only the names this barrier waits for may be written to it."
        )

    def test_checkpoint_roundtrip_and_copy(self) -> None:
        ch = NamedBarrierValueAfterFinish(str, {"a"}, key="defer")
        restored = ch.from_checkpoint(({"a"}, True))
        assert restored.get() is None
        assert restored.key == "defer" and restored.names == {"a"}
        assert ch.from_checkpoint([["a"], False]).finish() is True
        assert ch.from_checkpoint(MISSING).checkpoint() == (set(), False)
        clone = restored.copy()
        clone.consume()
        assert restored.is_available() is True and clone.is_available() is False

    def test_eq_types_repr(self) -> None:
        ch = NamedBarrierValueAfterFinish(str, {"a"}, key="d")
        assert ch == NamedBarrierValueAfterFinish(str, {"a"})
        assert ch != NamedBarrierValueAfterFinish(str, {"b"})
        assert ch != NamedBarrierValue(str, {"a"})
        assert ch.ValueType is str and ch.UpdateType is str
        assert repr(ch) == (
            "NamedBarrierValueAfterFinish(key='d', names={'a'}, seen=set(), finished=False)"
        )
