"""Tests of the BaseChannel defaults, the MISSING sentinel, exports and import cost."""

from __future__ import annotations

import copy
import operator
import pickle
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import pytest
from typing_extensions import Self

import stategraph.channels as channels
from stategraph.channels import BaseChannel
from stategraph.channels.base import MISSING
from stategraph.errors import EmptyChannelError


class _Box(BaseChannel[int, int, int]):
    """Minimal channel relying on every BaseChannel default."""

    __slots__ = ("value",)

    def __init__(self, typ: Any, key: str = "") -> None:
        super().__init__(typ, key)
        self.value: Any = MISSING

    @property
    def ValueType(self) -> Any:
        return self.typ

    @property
    def UpdateType(self) -> Any:
        return self.typ

    def from_checkpoint(self, checkpoint: Any) -> Self:
        new = self.__class__(self.typ, self.key)
        new.value = checkpoint
        return new

    def get(self) -> int:
        if self.value is MISSING:
            raise EmptyChannelError()
        return int(self.value)

    def update(self, values: Sequence[int]) -> bool:
        if not values:
            return False
        self.value = values[-1]
        return True


def test_missing_is_a_readable_falsy_singleton() -> None:
    assert repr(MISSING) == "MISSING"
    assert str(MISSING) == "MISSING"
    assert not MISSING
    assert type(MISSING)() is MISSING
    assert copy.copy(MISSING) is MISSING
    assert copy.deepcopy(MISSING) is MISSING
    assert pickle.loads(pickle.dumps(MISSING)) is MISSING
    assert MISSING is not None


def test_base_defaults() -> None:
    box = _Box(int, key="box")
    assert box.key == "box"
    assert box.typ is int
    assert box.is_available() is False
    assert box.checkpoint() is MISSING
    assert box.consume() is False
    assert box.finish() is False
    assert repr(box) == "_Box(key='box', value=MISSING)"

    assert box.update([3, 4]) is True
    assert box.is_available() is True
    assert box.checkpoint() == 4
    assert repr(box) == "_Box(key='box', value=4)"

    clone = box.copy()
    assert type(clone) is _Box
    assert clone.key == "box" and clone.get() == 4
    clone.update([9])
    assert box.get() == 4 and clone.get() == 9


def test_key_defaults_to_empty_and_is_assignable() -> None:
    box = _Box(str)
    assert box.key == ""
    box.key = "named"
    assert box.copy().key == "named"


def test_slots_everywhere() -> None:
    for name in channels.__all__:
        cls = getattr(channels, name)
        for klass in cls.__mro__:
            # object and typing.Generic (a C type from Python 3.12 on) add no instance dict
            if klass is object or klass.__module__ == "typing":
                continue
            assert "__slots__" in klass.__dict__, f"{klass.__name__} lacks __slots__"
    assert not hasattr(channels.LastValue(int), "__dict__")
    assert not hasattr(channels.BinaryOperatorAggregate(int, operator.add), "__dict__")
    with pytest.raises(AttributeError):
        channels.LastValue(int).other = 1  # type: ignore[attr-defined]


def test_abstract_base_cannot_be_instantiated() -> None:
    with pytest.raises(TypeError):
        BaseChannel(int)  # type: ignore[abstract]


def test_public_exports() -> None:
    assert set(channels.__all__) == {
        "BaseChannel",
        "LastValue",
        "LastValueAfterFinish",
        "BinaryOperatorAggregate",
        "DeltaChannel",
        "Topic",
        "EphemeralValue",
        "NamedBarrierValue",
        "NamedBarrierValueAfterFinish",
        "UntrackedValue",
        "AnyValue",
    }
    for name in channels.__all__:
        cls = getattr(channels, name)
        assert cls.__doc__, name
        assert issubclass(cls, BaseChannel)


def test_import_is_light() -> None:
    code = (
        "import sys, stategraph.channels\n"
        "heavy = ['pydantic', 'asyncio', 'ormsgpack', 'sqlite3', 'concurrent.futures',\n"
        "         'stategraph.pregel', 'stategraph.graph']\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""
