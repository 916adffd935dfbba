"""Property tests: checkpoint round-trips and copies behave exactly like the original.

For random sequences of operations (update batches, consume, finish) on every channel
kind, a channel restored with ``from_checkpoint(ch.checkpoint())`` and a ``copy()``
must answer every later operation exactly as the original does, and a copy must never
affect the original.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stategraph.channels import (
    AnyValue,
    BaseChannel,
    BinaryOperatorAggregate,
    EphemeralValue,
    LastValue,
    LastValueAfterFinish,
    NamedBarrierValue,
    NamedBarrierValueAfterFinish,
    Topic,
    UntrackedValue,
)
from stategraph.channels.base import MISSING
from stategraph.errors import EmptyChannelError
from stategraph.types import Overwrite

Op = tuple[str, list[Any]]

ints = st.integers(min_value=-5, max_value=5)
names = st.sampled_from(["a", "b", "c", "zz"])  # "zz" is never expected: error path
topic_items = st.one_of(ints, st.lists(ints, max_size=3))
int_writes = st.one_of(
    ints,
    ints.map(Overwrite),
    ints.map(lambda v: {"__overwrite__": v}),
)
list_writes = st.one_of(
    st.lists(ints, max_size=2),
    st.lists(ints, max_size=2).map(Overwrite),
)

# name -> (factory, strategy of one written value)
CHANNELS: dict[str, tuple[Callable[[], BaseChannel[Any, Any, Any]], st.SearchStrategy[Any]]] = {
    "LastValue": (lambda: LastValue(int, key="k"), ints),
    "LastValueAfterFinish": (lambda: LastValueAfterFinish(int, key="k"), ints),
    "Topic": (lambda: Topic(int, key="k"), topic_items),
    "Topic(accumulate)": (lambda: Topic(int, accumulate=True, key="k"), topic_items),
    "EphemeralValue": (lambda: EphemeralValue(int, key="k"), ints),
    "EphemeralValue(no guard)": (lambda: EphemeralValue(int, guard=False, key="k"), ints),
    "NamedBarrierValue": (lambda: NamedBarrierValue(str, {"a", "b", "c"}, key="k"), names),
    "NamedBarrierValueAfterFinish": (
        lambda: NamedBarrierValueAfterFinish(str, {"a", "b", "c"}, key="k"),
        names,
    ),
    "UntrackedValue": (lambda: UntrackedValue(int, key="k"), ints),
    "UntrackedValue(no guard)": (lambda: UntrackedValue(int, guard=False, key="k"), ints),
    "AnyValue": (lambda: AnyValue(int, key="k"), ints),
    "BinaryOperatorAggregate(int)": (
        lambda: BinaryOperatorAggregate(int, operator.add, key="k"),
        int_writes,
    ),
    "BinaryOperatorAggregate(list)": (
        lambda: BinaryOperatorAggregate(list, operator.add, key="k"),
        list_writes,
    ),
}


def ops_for(values: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Op]]:
    """Sequences of ``update`` batches (weighted up), ``consume`` and ``finish``."""
    op = st.one_of(
        st.tuples(st.just("update"), st.lists(values, max_size=3)),
        st.tuples(st.just("update"), st.lists(values, max_size=1)),
        st.tuples(st.sampled_from(["consume", "finish"]), st.just([])),
    )
    return st.lists(op, max_size=12)


def apply(ch: BaseChannel[Any, Any, Any], op: Op) -> tuple[str, Any]:
    """Run one operation; return its result or the error it raised."""
    name, values = op
    try:
        if name == "update":
            return ("ok", ch.update(values))
        return ("ok", ch.consume() if name == "consume" else ch.finish())
    except Exception as exc:  # the error is part of the observed behaviour
        return ("error", (type(exc).__name__, str(exc)))


def observe(ch: BaseChannel[Any, Any, Any]) -> tuple[Any, ...]:
    """Everything a reader can see of a channel."""
    try:
        value: Any = ("value", ch.get())
    except EmptyChannelError:
        value = ("empty",)
    return (ch.is_available(), value, ch.checkpoint())


def run_both(a: BaseChannel[Any, Any, Any], b: BaseChannel[Any, Any, Any], ops: list[Op]) -> None:
    assert observe(a) == observe(b)
    for op in ops:
        assert apply(a, op) == apply(b, op), op
        assert observe(a) == observe(b), op


def _copy_ops(ops: list[Op]) -> list[Op]:
    # Update batches are lists the channel could keep; give each channel its own.
    return [(name, list(values)) for name, values in ops]


PARAMS = pytest.mark.parametrize("kind", list(CHANNELS))
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@PARAMS
@SETTINGS
@given(data=st.data())
def test_checkpoint_roundtrip_behaves_identically(kind: str, data: st.DataObject) -> None:
    factory, values = CHANNELS[kind]
    before = data.draw(ops_for(values), label="before")
    after = data.draw(ops_for(values), label="after")
    original = factory()
    for op in before:
        apply(original, op)
    saved = original.checkpoint()
    restored = original.from_checkpoint(saved)
    assert type(restored) is type(original)
    assert restored is not original
    assert (restored.key, restored.typ) == (original.key, original.typ)
    assert restored == original
    if isinstance(original, UntrackedValue):
        # never saved: restoring always gives a fresh channel
        assert saved is MISSING
        run_both(factory(), restored, _copy_ops(after))
    else:
        run_both(original, restored, _copy_ops(after))


@PARAMS
@SETTINGS
@given(data=st.data())
def test_missing_checkpoint_gives_fresh_channel(kind: str, data: st.DataObject) -> None:
    factory, values = CHANNELS[kind]
    before = data.draw(ops_for(values), label="before")
    after = data.draw(ops_for(values), label="after")
    used = factory()
    for op in before:
        apply(used, op)
    run_both(factory(), used.from_checkpoint(MISSING), _copy_ops(after))


@PARAMS
@SETTINGS
@given(data=st.data())
def test_copy_behaves_identically_and_is_independent(kind: str, data: st.DataObject) -> None:
    factory, values = CHANNELS[kind]
    before = data.draw(ops_for(values), label="before")
    after = data.draw(ops_for(values), label="after")
    original = factory()
    for op in before:
        apply(original, op)
    clone = original.copy()
    assert type(clone) is type(original) and clone is not original
    assert (clone.key, clone.typ) == (original.key, original.typ)
    snapshot = observe(original)
    # Mutating the copy leaves the original untouched ...
    for op in _copy_ops(after):
        apply(clone, op)
    assert observe(original) == snapshot
    # ... and a second copy answers every operation like the original.
    twin = original.copy()
    run_both(original, twin, _copy_ops(after))
