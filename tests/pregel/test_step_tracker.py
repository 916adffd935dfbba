"""``StepTracker``: ``apply_writes`` with run-long bookkeeping does the same as without.

The tracker only narrows which step-scoped channels get an empty update and remembers
the highest version; every observable result (values, versions, versions seen, the
set returned) must match a run of the same steps without it.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from stategraph.channels import (
    AnyValue,
    BinaryOperatorAggregate,
    EphemeralValue,
    LastValue,
    LastValueAfterFinish,
    Topic,
    UntrackedValue,
)
from stategraph.channels.base import MISSING, BaseChannel
from stategraph.constants import PULL
from stategraph.pregel._algo import (
    StepTracker,
    apply_writes,
    increment,
    step_scoped_channels,
    tracker_layout,
)


@dataclass
class Step:
    name: str
    path: tuple[Any, ...]
    triggers: list[str] = field(default_factory=list)
    writes: list[tuple[str, Any]] = field(default_factory=list)


class Countdown(BaseChannel[int, int, int]):
    """A custom channel (unknown to the tracker) that counts down on empty updates."""

    def __init__(self, typ: Any = int, key: str = "") -> None:
        super().__init__(typ, key)
        self.value = 0

    @property
    def ValueType(self) -> Any:
        return int

    @property
    def UpdateType(self) -> Any:
        return int

    def from_checkpoint(self, checkpoint: Any) -> Countdown:
        new = Countdown(self.typ, self.key)
        new.value = 0 if checkpoint is MISSING else checkpoint
        return new

    def update(self, values: Any) -> bool:
        if values:
            self.value = max(values)
            return True
        if self.value > 0:
            self.value -= 1
            return True
        return False

    def get(self) -> int:
        from stategraph.errors import EmptyChannelError

        if self.value <= 0:
            raise EmptyChannelError()
        return self.value

    def checkpoint(self) -> Any:
        return self.value


def _channels() -> dict[str, BaseChannel]:
    chans: dict[str, BaseChannel] = {
        "last": LastValue(int, "last"),
        "sum": BinaryOperatorAggregate(int, operator.add, key="sum"),
        "eph": EphemeralValue(int, guard=False, key="eph"),
        "topic": Topic(int, key="topic"),
        "acc": Topic(int, accumulate=True, key="acc"),
        "any": AnyValue(int, "any"),
        "untracked": UntrackedValue(int, key="untracked"),
        "custom": Countdown(int, "custom"),
    }
    for i in range(20):
        chans[f"branch:{i}"] = EphemeralValue(Any, key=f"branch:{i}")
    return {k: ch.from_checkpoint(MISSING) for k, ch in chans.items()}


names = st.sampled_from(
    ["last", "sum", "eph", "topic", "acc", "any", "untracked", "custom", "branch:1", "branch:7"]
)
steps = st.lists(
    st.lists(
        st.tuples(
            st.lists(names, max_size=2),
            st.lists(st.tuples(names, st.integers(1, 3)), max_size=4),
        ),
        min_size=0,
        max_size=3,
    ),
    min_size=1,
    max_size=8,
)


def _values(chans: dict[str, BaseChannel]) -> dict[str, Any]:
    return {k: ch.checkpoint() for k, ch in chans.items()}


@settings(max_examples=150, deadline=None)
@given(steps)
def test_tracker_matches_untracked_apply_writes(plan: list[list[Any]]) -> None:
    plain, tracked = _channels(), _channels()
    cp_plain: dict[str, Any] = {"channel_versions": {}, "versions_seen": {}}
    cp_tracked: dict[str, Any] = {"channel_versions": {}, "versions_seen": {}}
    scoped = step_scoped_channels(plain)
    tracker = StepTracker(tracked, scoped)
    triggers = {"last": ["n0"], "branch:1": ["n1"]}
    for n, step in enumerate(plan):
        written: set[str] = set()  # one write per channel and step (guarded kinds)
        tasks = []
        for i, (trig, writes) in enumerate(step):
            mine = []
            for c, v in writes:
                if c not in written:
                    written.add(c)
                    mine.append((c, v))
            tasks.append(Step(f"n{i}", (PULL, f"n{i}"), trig or ["last"], mine))
        if not tasks:
            tasks = [Step("idle", (PULL, "idle"), ["branch:7"], [])]
        got_plain = apply_writes(cp_plain, plain, tasks, increment, triggers, scoped)
        got_tracked = apply_writes(
            cp_tracked, tracked, tasks, increment, triggers, scoped, tracker=tracker
        )
        assert got_tracked == got_plain, n
        assert cp_tracked == cp_plain, n
        assert _values(tracked) == _values(plain), n


def test_untouched_channels_are_not_visited() -> None:
    """A step on a graph with many idle branch channels looks only at its own."""

    class Counting(dict[str, BaseChannel]):
        reads = 0

        def __getitem__(self, key: str) -> BaseChannel:
            Counting.reads += 1
            return super().__getitem__(key)

    chans = Counting({f"branch:{i}": EphemeralValue(Any, key=f"branch:{i}") for i in range(1000)})
    triggers = {k: [k] for k in chans}
    cp: dict[str, Any] = {"channel_versions": {}, "versions_seen": {}}
    tracker = StepTracker(chans, list(chans))
    Counting.reads = 0
    for i in range(10):
        task = Step(f"n{i}", (PULL, f"n{i}"), [f"branch:{i}"], [(f"branch:{i + 1}", True)])
        apply_writes(cp, chans, [task], increment, triggers, list(chans), tracker=tracker)
    assert Counting.reads < 100
    # each step clears the branch it read and writes the next one, at the same version
    expected = {f"branch:{i}": i + 1 for i in range(1, 10)} | {"branch:10": 10}
    assert cp["channel_versions"] == expected
    assert tracker.live == {"branch:10"}


class _Closing(LastValue[int]):
    """A custom channel with a ``finish`` of its own: it records being asked."""

    __slots__ = ()
    asked: list[str] = []

    def finish(self) -> bool:
        _Closing.asked.append(self.key)
        return False


def test_finish_asks_only_the_channels_with_a_finish_of_their_own() -> None:
    """When nothing is left to trigger, the tracked step finishes the channels whose
    class overrides ``finish`` (built-in or custom), in order, and skips the rest."""
    specs: dict[str, BaseChannel] = {f"k{i}": LastValue(int, f"k{i}") for i in range(500)}
    specs["late"] = LastValueAfterFinish(int, "late")
    specs["closing"] = _Closing(int, "closing")
    chans = {k: ch.from_checkpoint(MISSING) for k, ch in specs.items()}
    layout = tracker_layout(chans, step_scoped_channels(chans))
    assert layout[2] == ("late", "closing")
    tracker = StepTracker(chans, step_scoped_channels(chans), layout)
    cp: dict[str, Any] = {"channel_versions": {}, "versions_seen": {}}
    _Closing.asked.clear()
    task = Step("n0", (PULL, "n0"), ["k0"], [("late", 7), ("k1", 1)])
    updated = apply_writes(cp, chans, [task], increment, {"k0": ["n0"]}, tracker=tracker)
    assert _Closing.asked == ["closing"]
    assert chans["late"].get() == 7  # made available by its finish
    assert updated == {"k1", "late"}
    assert cp["channel_versions"] == {"late": 1, "k1": 1}
