"""The scheduling core: pure functions over channels and checkpoints.

Nothing here performs I/O or calls node functions. ``prepare_next_tasks`` decides what
runs in a step, ``apply_writes`` commits a step's writes, ``should_interrupt`` decides
breakpoints. Both execution shells (sync and async) use exactly these functions.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from stategraph.channels.base import BaseChannel
from stategraph.constants import (
    CALL_RESULT,
    ERROR,
    INTERRUPT,
    NO_WRITES,
    PUSH,
    RESERVED,
    RESUME,
    RESUME_ASKED,
    RETURN,
)
from stategraph.errors import EmptyChannelError

__all__ = [
    "increment",
    "null_version_of",
    "make_task_id",
    "triggered",
    "read_channels",
    "local_read",
    "apply_writes",
    "step_scoped_channels",
    "should_interrupt",
    "writes_sort_key",
    "CONTROL_CHANNELS",
]

logger = logging.getLogger("stategraph")

CONTROL_CHANNELS = frozenset(
    {NO_WRITES, PUSH, RESUME, RESUME_ASKED, CALL_RESULT, INTERRUPT, RETURN, ERROR}
)
"""Pseudo-channels whose writes are signals, never applied to state."""

_EMPTY: tuple[Any, ...] = ()


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


def make_task_id(*parts: str | int) -> str:
    """Deterministic task id: xxh3-128 of the parts, formatted like a UUID."""
    from xxhash import xxh3_128_hexdigest

    h = xxh3_128_hexdigest("\x00".join(str(p) for p in parts).encode())
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


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
    for k in select:
        ch = channels.get(k)
        if ch is None:
            continue
        try:
            values[k] = ch.get()
        except EmptyChannelError:
            pass
    return values


def local_read(
    channels: Mapping[str, BaseChannel],
    select: str | Sequence[str],
    writes: Sequence[tuple[str, Any]],
) -> Any:
    """Read ``select`` as it would be after applying one task's own ``writes``.

    Used by conditional edges, which see the state including the update of the node
    they leave from, while the real channels stay untouched until the step ends.
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
            ch = ch.copy()
            ch.update(written[k])
        local[k] = ch
    return read_channels(local, select)


def writes_sort_key(path: tuple[Any, ...]) -> tuple[Any, ...]:
    """Order of write application: by task path, numbers compared as numbers."""
    return tuple((0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in path[:3])


def apply_writes(
    checkpoint: dict[str, Any],
    channels: Mapping[str, BaseChannel],
    tasks: Iterable[Any],
    get_next_version: Callable[[Any, None], Any] | None,
    trigger_to_nodes: Mapping[str, Sequence[str]],
    step_scoped: Iterable[str] | None = None,
    *,
    allow_finish: bool = True,
) -> set[str]:
    """Commit one step: apply every task's writes to the channels and bump versions.

    ``step_scoped`` optionally names the only channels that can change on an empty
    update (see :func:`step_scoped_channels`); the others are skipped when untouched
    channels are notified of the new step. Without it every channel is notified.
    ``allow_finish=False`` never calls ``finish()`` (used when discarding tasks).

    Tasks are ``(name, path, triggers, writes)``-like objects. Returns the set of
    channels that changed and can trigger something. Steps, in order: record the
    versions each task saw, consume the triggers that were read, group writes per
    channel, update each channel once, give every untouched channel an empty update
    (so per-step channels clear), and call ``finish()`` on all channels when nothing is
    left to trigger. All changed channels share one new version.
    """
    tasks = sorted(tasks, key=lambda t: writes_sort_key(t.path))
    bump_step = False
    versions = checkpoint["channel_versions"]
    seen_all = checkpoint["versions_seen"]
    for task in tasks:
        trig = task.triggers
        if trig:
            bump_step = True
            # copy-on-write, so a shallow copy of versions_seen is a safe snapshot
            seen = dict(seen_all.get(task.name) or ())
            for chan in trig:
                if chan in versions:
                    seen[chan] = versions[chan]
            seen_all[task.name] = seen

    next_version = (
        None
        if get_next_version is None
        else get_next_version(max(versions.values()) if versions else None, None)
    )

    consumed: set[str] = set()
    for task in tasks:
        for chan in task.triggers:
            if chan not in RESERVED and chan not in consumed and chan in channels:
                consumed.add(chan)
                if channels[chan].consume() and next_version is not None:
                    versions[chan] = next_version

    by_channel: defaultdict[str, list[Any]] = defaultdict(list)
    for task in tasks:
        for chan, val in task.writes:
            if chan in CONTROL_CHANNELS:
                continue
            if chan in channels:
                by_channel[chan].append(val)
            else:
                logger.warning(
                    "Task %s with path %s wrote to unknown channel %s, ignoring it.",
                    task.name,
                    task.path,
                    chan,
                )

    updated: set[str] = set()
    for chan, vals in by_channel.items():
        ch = channels[chan]
        if ch.update(vals) and next_version is not None:
            versions[chan] = next_version
            if ch.is_available():
                updated.add(chan)

    if bump_step:
        notify = channels if step_scoped is None else step_scoped
        for chan in notify:
            ch = channels[chan]
            if chan not in updated and chan not in by_channel and ch.is_available():
                if ch.update(_EMPTY) and next_version is not None:
                    versions[chan] = next_version
                    if ch.is_available():
                        updated.add(chan)

    if allow_finish and bump_step and updated.isdisjoint(trigger_to_nodes):
        for chan, ch in channels.items():
            if ch.finish() and next_version is not None:
                versions[chan] = next_version
                if ch.is_available():
                    updated.add(chan)
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
