"""``apply_writes``: the pure function that commits one super-step.

Unit tests with small fake task objects (``name``, ``path``, ``triggers``, ``writes``)
plus hypothesis properties. The expected values were cross-checked black-box against
LangGraph 1.2's own ``apply_writes``.
"""

from __future__ import annotations

import logging
import operator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stategraph.channels import (
    BinaryOperatorAggregate,
    EphemeralValue,
    LastValue,
    LastValueAfterFinish,
    NamedBarrierValue,
    NamedBarrierValueAfterFinish,
    Topic,
)
from stategraph.channels.base import BaseChannel
from stategraph.constants import NO_WRITES, PULL, PUSH, TASKS
from stategraph.errors import InvalidUpdateError
from stategraph.pregel._algo import apply_writes, increment


@dataclass
class FakeTask:
    """The four attributes ``apply_writes`` reads from a task."""

    name: str
    path: tuple[Any, ...]
    triggers: list[str] = field(default_factory=list)
    writes: list[tuple[str, Any]] = field(default_factory=list)


def pull(name: str, triggers: list[str], writes: list[tuple[str, Any]]) -> FakeTask:
    return FakeTask(name, (PULL, name), triggers, writes)


def push(name: str, idx: int, writes: list[tuple[str, Any]]) -> FakeTask:
    return FakeTask(name, (PUSH, idx), [PUSH], writes)


def checkpoint(
    versions: dict[str, Any] | None = None, seen: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "channel_versions": dict(versions or {}),
        "versions_seen": {k: dict(v) for k, v in (seen or {}).items()},
    }


def restored(channel: BaseChannel, value: Any) -> BaseChannel:
    return channel.from_checkpoint(value)


# --------------------------------------------------------------------------- basics


def test_groups_writes_per_channel_and_returns_updated() -> None:
    cp = checkpoint({"a": 3})
    channels = {
        "a": restored(LastValue(int), 5),
        "t": Topic(int),
        "s": BinaryOperatorAggregate(int, operator.add),
    }
    tasks = [
        pull("n1", ["a"], [("t", 1), ("s", 10)]),
        pull("n2", ["a"], [("t", 2), ("s", 5)]),
    ]
    updated = apply_writes(cp, channels, tasks, increment, {"t": ["m"], "s": ["m"]})
    assert updated == {"t", "s"}
    assert channels["t"].get() == [1, 2]
    assert channels["s"].get() == 15
    # the untouched trigger "a" keeps its version; updated channels share version 4
    assert cp["channel_versions"] == {"a": 3, "t": 4, "s": 4}


def test_records_versions_seen_before_the_update() -> None:
    cp = checkpoint({"a": 3, "b": 7}, seen={"n1": {"a": 1}})
    channels = {"a": restored(LastValue(int), 5), "b": restored(LastValue(int), 6)}
    tasks = [pull("n1", ["a"], [("a", 9)]), pull("n2", ["a", "b"], [])]
    apply_writes(cp, channels, tasks, increment, {"a": ["n1", "n2"], "b": ["n2"]})
    assert cp["versions_seen"] == {"n1": {"a": 3}, "n2": {"a": 3, "b": 7}}
    assert cp["channel_versions"] == {"a": 8, "b": 7}


def test_versions_seen_skips_triggers_without_a_version() -> None:
    cp = checkpoint({"a": 2})
    channels = {"a": restored(LastValue(int), 1), "never": LastValue(int)}
    apply_writes(cp, channels, [pull("n", ["a", "never"], [])], increment, {})
    assert cp["versions_seen"] == {"n": {"a": 2}}


def test_one_new_version_from_the_max_shared_by_all_updated_channels() -> None:
    cp = checkpoint({"a": 1, "b": 41, "c": 7})
    channels = {k: restored(LastValue(int), 0) for k in "abc"}
    channels["d"] = LastValue(int)
    apply_writes(cp, channels, [pull("n", ["a"], [("a", 1), ("d", 2)])], increment, {})
    assert cp["channel_versions"] == {"a": 42, "b": 41, "c": 7, "d": 42}


def test_sorts_writes_by_task_path_not_by_given_order() -> None:
    cp = checkpoint()
    channels = {"t": Topic(str)}
    tasks = [
        push("x", 10, [("t", "push10")]),
        push("x", 2, [("t", "push2")]),
        pull("y", ["q"], [("t", "pull-y")]),
        pull("a", ["q"], [("t", "pull-a")]),
    ]
    apply_writes(cp, channels, tasks, increment, {})
    # pull tasks sort before push tasks, names alphabetically, push indexes numerically
    assert channels["t"].get() == ["pull-a", "pull-y", "push2", "push10"]


def test_last_value_written_twice_in_a_step_is_an_error() -> None:
    cp = checkpoint()
    channels = {"a": LastValue(int, key="a")}
    tasks = [pull("n1", ["x"], [("a", 1)]), pull("n2", ["x"], [("a", 2)])]
    with pytest.raises(InvalidUpdateError, match="'a'"):
        apply_writes(cp, channels, tasks, increment, {})


def test_control_channel_writes_are_not_applied() -> None:
    cp = checkpoint({"a": 1})
    channels = {"a": restored(LastValue(int), 1)}
    apply_writes(cp, channels, [pull("n", ["a"], [(NO_WRITES, None)])], increment, {"a": ["n"]})
    assert cp["channel_versions"] == {"a": 1}
    assert NO_WRITES not in channels


def test_unknown_channel_write_is_ignored_with_warning(caplog: pytest.LogCaptureFixture) -> None:
    cp = checkpoint({"a": 1})
    channels = {"a": restored(LastValue(int), 1), "b": LastValue(int)}
    with caplog.at_level(logging.WARNING):
        updated = apply_writes(
            cp, channels, [pull("n1", ["a"], [("zzz", 9), ("b", 2)])], increment, {"b": ["m"]}
        )
    assert updated == {"b"}
    assert "zzz" not in channels
    assert "zzz" not in cp["channel_versions"]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert "zzz" in message
    assert "n1" in message


def test_without_version_function_values_change_but_versions_do_not() -> None:
    cp = checkpoint()
    channels = {"a": LastValue(int)}
    updated = apply_writes(cp, channels, [pull("n", ["a"], [("a", 3)])], None, {"a": ["n"]})
    assert updated == set()
    assert cp["channel_versions"] == {}
    assert channels["a"].get() == 3


def test_string_versions_with_custom_next_version() -> None:
    cp = checkpoint({"a": "0005", "b": "0009"})
    channels = {"a": restored(LastValue(int), 1), "b": restored(LastValue(int), 1)}

    def next_version(current: Any, _channel: None) -> str:
        return f"{int(current) + 1:04d}"

    updated = apply_writes(cp, channels, [pull("n", ["a"], [("a", 3)])], next_version, {"a": ["n"]})
    assert updated == {"a"}
    assert cp["channel_versions"] == {"a": "0010", "b": "0009"}
    assert cp["versions_seen"] == {"n": {"a": "0005"}}


# --------------------------------------------------------------------------- notify


def test_untouched_ephemeral_value_clears_and_gets_new_version() -> None:
    cp = checkpoint({"a": 3, "e": 2})
    channels = {
        "a": restored(LastValue(int), 5),
        "e": restored(EphemeralValue(int), 7),
        "t": Topic(int),
    }
    apply_writes(cp, channels, [pull("n", ["a"], [("t", 1)])], increment, {"t": ["m"]})
    assert not channels["e"].is_available()
    assert cp["channel_versions"] == {"a": 3, "e": 4, "t": 4}


def test_input_batch_without_triggers_does_not_notify_untouched_channels() -> None:
    cp = checkpoint({"e": 1})
    channels = {"a": LastValue(int), "e": restored(EphemeralValue(int), 7)}
    updated = apply_writes(
        cp, channels, [FakeTask("__input__", (), [], [("a", 1)])], increment, {"a": ["n"]}
    )
    assert updated == {"a"}
    assert channels["e"].get() == 7
    assert cp["channel_versions"] == {"e": 1, "a": 2}


def test_non_accumulating_topic_clears_on_a_step_without_writes() -> None:
    cp = checkpoint({"a": 1, "t": 1})
    channels = {"a": restored(LastValue(int), 1), "t": restored(Topic(int), [1, 2])}
    apply_writes(cp, channels, [pull("n", ["a"], [])], increment, {"t": ["m"]})
    assert not channels["t"].is_available()
    assert cp["channel_versions"]["t"] == 2


# --------------------------------------------------------------------------- consume / finish


def test_barrier_is_consumed_by_the_task_it_triggered() -> None:
    cp = checkpoint()
    channels = {"bar": NamedBarrierValue(str, {"x", "y"}), "out": LastValue(int)}
    tasks = [pull("x", ["i"], [("bar", "x")]), pull("y", ["i"], [("bar", "y")])]
    assert apply_writes(cp, channels, tasks, increment, {"bar": ["join"]}) == {"bar"}
    assert channels["bar"].is_available()
    assert cp["channel_versions"] == {"bar": 1}
    updated = apply_writes(
        cp, channels, [pull("join", ["bar"], [("out", 1)])], increment, {"bar": ["join"]}
    )
    assert not channels["bar"].is_available()
    # consuming changed the barrier, so it got the step's new version too
    assert cp["channel_versions"] == {"bar": 2, "out": 2}
    # x and y ran on a trigger that has no version yet: they saw nothing
    assert cp["versions_seen"] == {"x": {}, "y": {}, "join": {"bar": 1}}
    assert updated == {"out"}


def test_finish_called_when_nothing_more_is_triggered() -> None:
    cp = checkpoint({"a": 1})
    channels = {"a": restored(LastValue(int), 1), "f": LastValueAfterFinish(int)}
    updated = apply_writes(
        cp, channels, [pull("n", ["a"], [("f", 3)])], increment, {"a": ["n"], "f": ["g"]}
    )
    assert updated == {"f"}
    assert channels["f"].get() == 3
    assert cp["channel_versions"] == {"a": 1, "f": 2}


def test_finish_not_called_while_something_is_still_triggered() -> None:
    cp = checkpoint({"a": 1})
    channels = {
        "a": restored(LastValue(int), 1),
        "b": LastValue(int),
        "f": LastValueAfterFinish(int),
    }
    updated = apply_writes(
        cp, channels, [pull("n", ["a"], [("f", 3), ("b", 1)])], increment, {"b": ["m"], "f": ["g"]}
    )
    assert updated == {"b"}
    assert not channels["f"].is_available()


def test_deferred_barrier_becomes_available_after_finish() -> None:
    cp = checkpoint({"a": 1})
    channels = {"a": restored(LastValue(int), 1), "d": NamedBarrierValueAfterFinish(str, {"n"})}
    updated = apply_writes(
        cp, channels, [pull("n", ["a"], [("d", "n")])], increment, {"d": ["late"]}
    )
    assert updated == {"d"}
    assert channels["d"].is_available()


def test_push_tasks_trigger_a_step() -> None:
    cp = checkpoint({TASKS: 1, "e": 1})
    channels = {TASKS: Topic(object), "e": restored(EphemeralValue(int), 1), "t": Topic(int)}
    apply_writes(cp, channels, [push("w", 0, [("t", 5)])], increment, {"t": ["m"]})
    # a push task counts as a step: untouched per-step channels are cleared
    assert not channels["e"].is_available()
    assert channels["t"].get() == [5]


# --------------------------------------------------------------------------- properties

_NAMES = ["n0", "n1", "n2", "n3"]
_CHANS = ["c0", "c1", "c2"]


def _build_tasks(
    specs: list[tuple[str, bool, int, list[str], list[tuple[str, int]]]],
) -> list[FakeTask]:
    tasks: list[FakeTask] = []
    seen_paths: set[tuple[Any, ...]] = set()
    for name, is_push, idx, triggers, writes in specs:
        path: tuple[Any, ...] = (PUSH, idx) if is_push else (PULL, name)
        if path in seen_paths:
            continue
        seen_paths.add(path)
        tasks.append(FakeTask(name, path, [PUSH] if is_push else triggers, writes))
    return tasks


task_lists = st.lists(
    st.tuples(
        st.sampled_from(_NAMES),
        st.booleans(),
        st.integers(min_value=0, max_value=20),
        st.lists(st.sampled_from(_CHANS), max_size=2, unique=True),
        st.lists(st.tuples(st.sampled_from([*_CHANS, "acc"]), st.integers(0, 100)), max_size=4),
    ),
    max_size=6,
).map(_build_tasks)


def _fresh_channels() -> dict[str, BaseChannel]:
    return {
        "c0": Topic(int),
        "c1": Topic(int, accumulate=True),
        "c2": BinaryOperatorAggregate(int, operator.add),
        "acc": Topic(int, accumulate=True),
        "e": EphemeralValue(int),
    }


def _snapshot(channels: dict[str, BaseChannel]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, ch in channels.items():
        out[k] = ch.get() if ch.is_available() else None
    return out


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(task_lists, min_size=1, max_size=4))
def test_versions_never_decrease_and_updated_channels_share_one_version(
    steps: list[list[FakeTask]],
) -> None:
    cp = checkpoint()
    channels = _fresh_channels()
    trigger_to_nodes = {c: ["m"] for c in [*_CHANS, "acc"]}
    for tasks in steps:
        before = dict(cp["channel_versions"])
        apply_writes(cp, channels, tasks, increment, trigger_to_nodes)
        after = cp["channel_versions"]
        for chan, version in before.items():
            assert after[chan] >= version
        changed = {c for c, v in after.items() if before.get(c) != v}
        if changed:
            new_versions = {after[c] for c in changed}
            assert len(new_versions) == 1
            assert new_versions.pop() == max(before.values(), default=0) + 1


@settings(max_examples=60, deadline=None)
@given(tasks=task_lists, data=st.data())
def test_result_does_not_depend_on_task_order(tasks: list[FakeTask], data: st.DataObject) -> None:
    shuffled = data.draw(st.permutations(tasks))
    trigger_to_nodes = {c: ["m"] for c in [*_CHANS, "acc"]}
    results = []
    for order in (tasks, shuffled):
        cp = checkpoint({"c0": 2, "c1": 5})
        channels = _fresh_channels()
        channels["c0"] = channels["c0"].from_checkpoint([1])
        channels["c1"] = channels["c1"].from_checkpoint([9])
        updated = apply_writes(cp, channels, list(order), increment, trigger_to_nodes)
        results.append((updated, cp, _snapshot(channels)))
    assert results[0] == results[1]
