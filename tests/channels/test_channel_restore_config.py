"""``from_checkpoint`` of the value channels (made once per channel per run) gives a
new channel of the same class, with the same name, type and configuration, holding the
checkpointed value, and sharing no state with the channel it was made from."""

from __future__ import annotations

from typing import Any

import pytest

from stategraph.channels.base import MISSING
from stategraph.channels.ephemeral_value import EphemeralValue
from stategraph.channels.last_value import LastValue
from stategraph.channels.untracked_value import UntrackedValue
from stategraph.errors import InvalidUpdateError


@pytest.mark.parametrize(
    ("spec", "config"),
    [
        (LastValue(int, key="count"), {}),
        (EphemeralValue(str, guard=False, key="branch:to:a"), {"guard": False}),
        (EphemeralValue(str, key="branch:to:b"), {"guard": True}),
    ],
)
def test_restored_channel_keeps_name_type_and_configuration(spec: Any, config: dict) -> None:
    restored = spec.from_checkpoint(7)
    assert type(restored) is type(spec)
    assert restored is not spec
    assert (restored.key, restored.typ, restored.value) == (spec.key, spec.typ, 7)
    assert {name: getattr(restored, name) for name in config} == config
    assert spec.value is MISSING  # the spec itself stays empty
    empty = spec.from_checkpoint(MISSING)
    assert empty.is_available() is False
    assert empty.update([1]) is True and empty.get() == 1
    assert restored.get() == 7 and spec.value is MISSING


def test_restored_guard_still_rejects_two_writes_in_one_step() -> None:
    guarded = EphemeralValue(int, key="e").from_checkpoint(MISSING)
    with pytest.raises(InvalidUpdateError, match="'e'"):
        guarded.update([1, 2])
    lenient = EphemeralValue(int, guard=False, key="e").from_checkpoint(MISSING)
    assert lenient.update([1, 2]) is True and lenient.get() == 2


def test_untracked_value_restores_empty_with_its_guard() -> None:
    spec = UntrackedValue(dict, guard=False, key="scratch")
    restored = spec.from_checkpoint({"kept": False})
    assert restored.value is MISSING and restored.guard is False and restored.key == "scratch"
