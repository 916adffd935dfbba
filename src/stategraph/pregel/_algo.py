"""The scheduling core: pure functions over channels and checkpoints.

Nothing here performs I/O or calls node functions. ``prepare_next_tasks`` decides what
runs in a step, ``apply_writes`` commits a step's writes, ``should_interrupt`` decides
breakpoints. Both execution shells (sync and async) use exactly these functions.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from stategraph._task_ids import make_task_id
from stategraph.channels.base import MISSING, BaseChannel, _ValueChannel
from stategraph.constants import (
    CALL_RESULT,
    CALL_RESUME,
    ERROR,
    ERROR_SOURCE,
    INTERRUPT,
    NO_WRITES,
    PUSH,
    RESERVED,
    RESUME,
    RESUME_ASKED,
    RETURN,
)
from stategraph.errors import EmptyChannelError
from stategraph.pregel._run_channels import own_channel

__all__ = [
    "increment",
    "null_version_of",
    "make_task_id",
    "triggered",
    "read_channels",
    "plain_value_channel",
    "local_read",
    "apply_writes",
    "step_scoped_channels",
    "should_interrupt",
    "writes_sort_key",
    "CONTROL_CHANNELS",
    "StepTracker",
]

logger = logging.getLogger("stategraph")

CONTROL_CHANNELS = frozenset(
    {
        NO_WRITES,
        PUSH,
        RESUME,
        RESUME_ASKED,
        CALL_RESUME,
        CALL_RESULT,
        INTERRUPT,
        RETURN,
        ERROR,
        ERROR_SOURCE,
    }
)
"""Pseudo-channels whose writes are signals, never applied to state."""

_EMPTY: tuple[Any, ...] = ()

TrackerLayout = tuple[frozenset[str], tuple[str, ...], tuple[str, ...]]
"""What a :class:`StepTracker` follows: ``(tracked, always, finishing)`` channel names."""


def increment(current: int | None, channel: None = None) -> int:
    """Default version function: the next integer version."""
    return current + 1 if current is not None else 1


def null_version_of(versions: Mapping[str, Any]) -> Any:
    """The "never written" version, of the same type as the versions in use.

    ``0`` for int versions, ``""`` for string versions, ``None`` when no version exists.
    """
    for v in versions.values():
        return type(v)()
    return None


def triggered(
    triggers: Sequence[str],
    channels: Mapping[str, BaseChannel],
    versions: Mapping[str, Any],
    seen: Mapping[str, Any] | None,
    null_version: Any,
) -> bool:
    """Whether a node with ``triggers`` must run.

    A trigger fires when its channel holds a value and its version is newer than the
    version the node saw last time; a node that never ran fires on any available trigger.
    """
    if seen is None:
        for chan in triggers:
            ch = channels.get(chan)
            if ch is not None and ch.is_available():
                return True
        return False
    for chan in triggers:
        ch = channels.get(chan)
        if (
            ch is not None
            and ch.is_available()
            and versions.get(chan, null_version) > seen.get(chan, null_version)
        ):
            return True
    return False


def read_channels(channels: Mapping[str, BaseChannel], select: str | Sequence[str]) -> Any:
    """Read one channel's value, or a dict of the available values of several."""
    if isinstance(select, str):
        return channels[select].get()
    values: dict[str, Any] = {}
    plain = _PLAIN_GET
    for k in select:
        ch = channels.get(k)
        if ch is None:
            continue
        kind = type(ch)
        simple = plain.get(kind)
        if simple is None:
            simple = plain_value_channel(kind)
        if simple:
            # a value-holding channel: read the value without raising for an empty one
            value = ch.value  # type: ignore[attr-defined]
            if value is not MISSING:
                values[k] = value
            continue
        try:
            values[k] = ch.get()
        except EmptyChannelError:
            pass
    return values


_PLAIN_GET: dict[type, bool] = {}
"""Per channel class: whether :func:`plain_value_channel` holds."""


def plain_value_channel(kind: type) -> bool:
    """Whether channels of class ``kind`` hold one ``value`` that ``get`` returns as it
    is (empty when ``MISSING``): reading it needs no call, and gives no copy."""
    simple = _PLAIN_GET.get(kind)
    if simple is None:
        simple = _PLAIN_GET[kind] = (
            getattr(kind, "get", None) is _ValueChannel.get
            and getattr(kind, "is_available", None) is _ValueChannel.is_available
        )
    return simple


def local_read(
    channels: Mapping[str, BaseChannel],
    select: str | Sequence[str],
    writes: Sequence[tuple[str, Any]],
    owner: Any = None,
) -> Any:
    """Read ``select`` as it would be after applying one task's own ``writes``.

    Used by conditional edges, which see the state including the update of the node
    they leave from, while the real channels stay untouched until the step ends.

    With ``owner`` (the task whose writes these are), the reducer results computed
    here are remembered in ``owner.previews`` (see :func:`_take_preview`): when the
    task's writes are committed unchanged onto the unchanged channel, the reducer is
    not run a second time over the same writes.
    """
    names = [select] if isinstance(select, str) else select
    written: dict[str, list[Any]] = {}
    for chan, val in writes:
        if chan in CONTROL_CHANNELS:
            continue
        written.setdefault(chan, []).append(val)
    if not written.keys() & set(names):
        return read_channels(channels, select)
    local: dict[str, BaseChannel] = {}
    for k in names:
        ch = channels.get(k)
        if ch is None:
            continue
        if k in written:
            base = ch
            vals = written[k]
            ch = ch.copy()
            ch.update(vals)
            if owner is not None and type(ch) is _reducer_channel():
                previews = owner.previews
                if previews is None:
                    previews = owner.previews = {}
                previews[k] = (base, base.value, vals, ch.value)  # type: ignore[attr-defined]
        local[k] = ch
    return read_channels(local, select)


_REDUCER: type | None = None


def _reducer_channel() -> type:
    global _REDUCER
    if _REDUCER is None:
        from stategraph.channels.binop import BinaryOperatorAggregate

        _REDUCER = BinaryOperatorAggregate
    return _REDUCER


def _take_preview(previews: dict[str, Any], chan: str, ch: Any, vals: list[Any]) -> bool:
    """Give ``ch`` the value :func:`local_read` computed for the same writes, if still
    valid: same channel object, holding the same value object as then, and the very
    same written objects in the same order. Returns whether it did."""
    preview = previews.get(chan)
    if preview is None:
        return False
    base, before, seen, after = preview
    if base is not ch or ch.value is not before or len(seen) != len(vals):
        return False
    for a, b in zip(seen, vals, strict=True):
        if a is not b:
            return False
    ch.value = after
    return True


class StepTracker:
    """Run-long bookkeeping that keeps :func:`apply_writes` proportional to the writes.

    Without it, committing a step notifies every step-scoped channel and scans every
    channel version for the highest one, so a step costs time in the number of channels
    of the graph. With it, only the built-in step-scoped channels that may hold a value
    (``live``) are notified, channels of other kinds (custom ones) are notified as
    before (``always``), and the highest version is remembered (``top``). A tracker is
    valid only while its run's channels change through :func:`apply_writes` calls that
    receive it. When ``moved`` is a set, the channels whose version moved are added to
    it. When ``views`` is set, its ``changed`` method is given the channels each step
    changed. When the graph finishes, only the channels whose class has a ``finish`` of
    its own (``finishing``) are asked to finish: the others' ``finish`` does nothing.
    """

    __slots__ = ("always", "finishing", "live", "moved", "seen_moved", "top", "tracked", "views")

    def __init__(
        self,
        channels: Mapping[str, BaseChannel],
        step_scoped: Iterable[str],
        layout: TrackerLayout | None = None,
    ) -> None:
        # (``layout``: what tracker_layout(channels, step_scoped) returns, kept by the caller)
        self.tracked, self.always, self.finishing = layout or tracker_layout(channels, step_scoped)
        self.live = {k for k in self.tracked if channels[k].is_available()}
        self.top: Any = _UNSET
        # names of the channels whose version moved since the owner last reset it to a
        # set (None: not recorded), so a checkpoint looks only at what changed
        self.moved: set[str] | None = None
        # likewise the nodes whose versions_seen entry was replaced (None: not recorded)
        self.seen_moved: set[str] | None = None
        # the run's StateViews (pregel._views), told which channels each step changed
        self.views: Any = None

    def touched(self, channels: Mapping[str, BaseChannel], names: Iterable[str]) -> None:
        """Follow the availability of the tracked channels among ``names``."""
        tracked = self.tracked
        live = self.live
        for k in names:
            if k in tracked:
                if channels[k].is_available():
                    live.add(k)
                else:
                    live.discard(k)


_UNSET: Any = object()
_KNOWN_SCOPED: tuple[type, ...] | None = None


def tracker_layout(
    channels: Mapping[str, BaseChannel], step_scoped: Iterable[str]
) -> TrackerLayout:
    """What :class:`StepTracker` follows (it depends only on the channels' classes):
    ``step_scoped`` split into built-in kinds (tracked) and other kinds (always), and
    the channels whose class overrides ``finish`` (finishing), in the channels' order."""
    global _KNOWN_SCOPED
    known = _KNOWN_SCOPED
    if known is None:
        from stategraph.channels.any_value import AnyValue
        from stategraph.channels.ephemeral_value import EphemeralValue
        from stategraph.channels.topic import Topic
        from stategraph.channels.untracked_value import UntrackedValue

        known = _KNOWN_SCOPED = (EphemeralValue, Topic, AnyValue, UntrackedValue)
    tracked: list[str] = []
    always: list[str] = []
    for k in step_scoped:
        ch = channels.get(k)
        if ch is not None:
            (tracked if type(ch) in known else always).append(k)
    base_finish = BaseChannel.finish
    finishing = tuple(k for k, ch in channels.items() if type(ch).finish is not base_finish)
    return frozenset(tracked), tuple(always), finishing


def writes_sort_key(path: tuple[Any, ...]) -> tuple[Any, ...]:
    """Order of write application: by task path, numbers compared as numbers."""
    # (a loop, not a generator: this runs for every task of every step with several)
    key = []
    for p in path[:3]:
        key.append((0, p, "") if isinstance(p, int) else (1, 0, str(p)))
    return tuple(key)


def _task_sort_key(task: Any) -> tuple[Any, ...]:
    return writes_sort_key(task.path)


def apply_writes(
    checkpoint: dict[str, Any],
    channels: Mapping[str, BaseChannel],
    tasks: Iterable[Any],
    get_next_version: Callable[[Any, None], Any] | None,
    trigger_to_nodes: Mapping[str, Sequence[str]],
    step_scoped: Iterable[str] | None = None,
    *,
    allow_finish: bool = True,
    tracker: StepTracker | None = None,
    shared: Mapping[str, BaseChannel] | None = None,
) -> set[str]:
    """Commit one step: apply every task's writes to the channels and bump versions.

    ``step_scoped`` optionally names the only channels that can change on an empty
    update (see :func:`step_scoped_channels`); the others are skipped when untouched
    channels are notified of the new step. Without it every channel is notified.
    ``allow_finish=False`` never calls ``finish()`` (used when discarding tasks).
    ``tracker`` (see :class:`StepTracker`) replaces ``step_scoped`` and makes the cost
    independent of the channels the step does not touch. ``shared`` is the graph's
    specs when some of ``channels`` are still those (``restore_channels`` of
    :mod:`stategraph.pregel._run_channels`): each gets a channel of its own before its
    first write.

    Tasks are ``(name, path, triggers, writes)``-like objects. Returns the set of
    channels that changed and can trigger something. Steps, in order: record the
    versions each task saw, consume the triggers that were read, group writes per
    channel, update each channel once, give every untouched channel an empty update
    (so per-step channels clear), and call ``finish()`` on all channels when nothing is
    left to trigger. All changed channels share one new version.
    """
    if not isinstance(tasks, list):
        tasks = list(tasks)
    if len(tasks) > 1:
        tasks = sorted(tasks, key=_task_sort_key)
    bump_step = False
    versions = checkpoint["channel_versions"]
    seen_all = checkpoint["versions_seen"]
    seen_moved = None if tracker is None else tracker.seen_moved
    top = _UNSET if tracker is None else tracker.top
    if get_next_version is None:
        next_version = None
    else:
        if top is _UNSET:
            top = max(versions.values()) if versions else None
        next_version = get_next_version(top, None)

    # every channel that changed, in order (each gets next_version): first the triggers
    # consumed, then the channels written, notified, finished
    changed: list[str] = []
    consumed: set[str] = set()
    by_channel: dict[str, list[Any]] = {}
    # one pass over the tasks (versions move only at the end): record the versions each
    # saw, consume the triggers it read, group its writes per channel
    for task in tasks:
        trig = task.triggers
        if trig:
            bump_step = True
            # copy-on-write, so a shallow copy of versions_seen is a safe snapshot
            seen = dict(seen_all.get(task.name) or ())
            for chan in trig:
                if chan in versions:
                    seen[chan] = versions[chan]
                if chan not in RESERVED and chan not in consumed and chan in channels:
                    consumed.add(chan)
                    if channels[chan].consume():
                        changed.append(chan)
            seen_all[task.name] = seen
            if seen_moved is not None:
                seen_moved.add(task.name)
        for chan, val in task.writes:
            if chan in CONTROL_CHANNELS:
                continue
            if chan in channels:
                vals = by_channel.get(chan)
                if vals is None:
                    by_channel[chan] = [val]
                else:
                    vals.append(val)
            else:
                logger.warning(
                    "Task %s with path %s wrote to unknown channel %s, ignoring it.",
                    task.name,
                    task.path,
                    chan,
                )

    # a task alone in its step whose conditional edge already folded its writes into
    # a reducer channel (local_read) hands that result over
    previews = getattr(tasks[0], "previews", None) if len(tasks) == 1 else None
    updated: set[str] = set()
    for chan, vals in by_channel.items():
        ch = channels[chan]
        if shared is not None and ch is shared.get(chan):
            ch = own_channel(channels, shared, chan)  # type: ignore[arg-type]
        try:
            if previews and _take_preview(previews, chan, ch, vals):
                pass
            elif not ch.update(vals):
                continue
        except Exception as exc:
            _name_writers(exc, chan, tasks)
            raise
        changed.append(chan)
        if next_version is not None and ch.is_available():
            updated.add(chan)

    if bump_step:
        if tracker is not None:
            # (the loop below changes no channel's availability: live stays as it is)
            notify: Iterable[str] = (
                tracker.live if not tracker.always else (*tracker.always, *tracker.live)
            )
        else:
            notify = channels if step_scoped is None else step_scoped
        for chan in notify:
            ch = channels[chan]
            if chan not in updated and chan not in by_channel and ch.is_available():
                if ch.update(_EMPTY):
                    changed.append(chan)
                    if next_version is not None and ch.is_available():
                        updated.add(chan)

    finished = allow_finish and bump_step
    if finished:
        # (not set.isdisjoint, which walks the whole mapping)
        for chan in updated:
            if chan in trigger_to_nodes:
                finished = False
                break
    if finished:
        finishing = channels if tracker is None else tracker.finishing
        for chan in finishing:
            ch = channels[chan]
            if ch.finish():
                changed.append(chan)
                if next_version is not None and ch.is_available():
                    updated.add(chan)
    if next_version is not None:
        for chan in changed:
            versions[chan] = next_version
    if tracker is not None:
        if changed:
            # only a channel that changed can have become (un)available
            tracker.touched(channels, changed)
            if tracker.views is not None:
                tracker.views.changed(changed)
            if next_version is not None:
                if top is None or next_version > top:
                    tracker.top = next_version
                if tracker.moved is not None:
                    tracker.moved.update(changed)
        if tracker.top is _UNSET:
            tracker.top = top
    return updated


def step_scoped_channels(channels: Mapping[str, BaseChannel]) -> tuple[str, ...]:
    """Names of the channels whose value may change on an empty update.

    Channels of the built-in kinds that ignore empty updates (last-value, reducer and
    barrier channels) are left out; every other channel, custom ones included, is kept.
    """
    from stategraph.channels.binop import BinaryOperatorAggregate
    from stategraph.channels.last_value import LastValue, LastValueAfterFinish
    from stategraph.channels.named_barrier_value import (
        NamedBarrierValue,
        NamedBarrierValueAfterFinish,
    )

    inert = (
        LastValue,
        LastValueAfterFinish,
        BinaryOperatorAggregate,
        NamedBarrierValue,
        NamedBarrierValueAfterFinish,
    )
    return tuple(k for k, ch in channels.items() if type(ch) not in inert)


def should_interrupt(
    checkpoint: dict[str, Any],
    interrupt_nodes: Sequence[str] | str,
    tasks: Iterable[Any],
) -> bool:
    """Whether a breakpoint (``interrupt_before``/``after``) fires for these tasks.

    It fires when some channel changed since the last breakpoint and one of the tasks
    is a breakpoint node (``"*"`` = every node).
    """
    versions = checkpoint["channel_versions"]
    seen = checkpoint["versions_seen"].get(INTERRUPT, {})
    null = null_version_of(versions)
    changed = any(v > seen.get(chan, null) for chan, v in versions.items())
    if not changed:
        return False
    return any(
        (interrupt_nodes == "*" and not t.node.metadata.get("__hidden__"))
        or t.name in interrupt_nodes
        for t in tasks
    )


def _name_writers(exc: Exception, chan: str, tasks: Iterable[Any]) -> None:
    """Note on ``exc`` which nodes wrote the value ``chan`` could not take."""
    from stategraph._notes import add_note

    writers = sorted({t.name for t in tasks for c, _ in t.writes if c == chan})
    add_note(exc, f"While applying the update of node(s) {', '.join(writers)} to key '{chan}'.")
