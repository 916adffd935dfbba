"""Checkpoint bodies of big graphs stored as their change from a *keyframe*.

A checkpoint body (everything but the channel values) holds every channel's version
and every node's ``versions_seen``: on a graph of 1,000 nodes that is ~75 kB per
checkpoint although a step changes a handful of entries. For bodies with more than
:data:`~stategraph.checkpoint._compact.PACK_LIMIT` entries, the saver writes a full
body (a keyframe) now and then and, in between, each checkpoint of the same chain
(each one's parent is the one written before it) as the entries that differ from the
keyframe::

    [MARK, FORMAT, keyframe_id, v, ts, cv_set, cv_removed, vs_set, vs_removed, updated,
     keyframe_hash]

``cv_set``/``vs_set`` map channels/nodes to their new version/``versions_seen``;
``*_removed`` list the keys the keyframe has and this body has not. Reading takes two
rows at most: the body and its keyframe (a full body of the same thread and
namespace). ``keyframe_hash`` (:func:`stored_hash` of the keyframe's serialized bytes)
lets a reader refuse a keyframe replaced behind the writer's back (another process
saving that checkpoint again) instead of misreading the body. A new keyframe is written when the change grows past
``max(MIN_BUDGET, entries // BUDGET_DIVISOR)`` entries, when the parent is not the
checkpoint written last, or when the keyframe is gone.

Building a change costs what the step changed, not the graph's size, when ``put``
gets the runtime's :class:`~stategraph.checkpoint._step.StepVersions` and the parent
is the body written last: the change is that body's change plus the versions and
``versions_seen`` entries the step names (checked as far as it is cheap: the named
entries are the body's and the maps' sizes add up). Otherwise every entry is compared
with the keyframe's.

The saver must keep keyframes while a body refers to them: it rewrites those bodies
whole before a keyframe is deleted (retention) or replaced (a checkpoint saved again
under its id). :class:`Keyframes` remembers, per ``(thread_id, checkpoint_ns)``, the
last keyframe written by this saver (private copies, so callers may mutate what they
passed to ``put``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from stategraph.checkpoint._compact import PACK_LIMIT
from stategraph.checkpoint._step import StepVersions
from stategraph.checkpoint.serde.base import DeserializationError

__all__ = [
    "FORMAT",
    "MARK",
    "Keyframes",
    "apply_delta",
    "check_keyframe",
    "delta_base",
    "stored_hash",
]

MARK = "sg-cpd"
"""First item of a body stored as a change (a full body is a dict or a packed list
starting with another mark)."""
FORMAT = 1
"""Version of the change form written by this release."""
MIN_BUDGET = 32
"""Fewest changed entries a body may carry before a new keyframe is written."""
BUDGET_DIVISOR = 16
"""A body carries at most 1/BUDGET_DIVISOR of the keyframe's entries as changes."""
MAX_FRAMES = 64
"""Keyframes remembered per saver (the threads written most recently); a thread
whose keyframe was forgotten writes a new one."""

_KEYS = ("v", "id", "ts", "channel_versions", "versions_seen", "updated_channels")
_MISSING = object()


def _added(changed: dict[str, Any], before: dict[str, Any]) -> int:
    """How many keys of ``changed`` ``before`` does not have."""
    return sum(1 for k in changed if k not in before)


def stored_hash(stored: bytes) -> int:
    """A 64-bit hash of a keyframe's serialized bytes (before any sealing, so that a
    copy re-sealed for another thread keeps it)."""
    import xxhash

    return int(xxhash.xxh3_64_intdigest(stored))


def check_keyframe(stored: Any, keyframe_bytes: bytes, checkpoint_id: str) -> None:
    """Raise unless ``keyframe_bytes`` are the keyframe the change ``stored`` was
    made against."""
    if stored_hash(keyframe_bytes) != stored[10]:
        raise DeserializationError(
            f"Checkpoint {checkpoint_id}: its keyframe {stored[2]} was replaced after the "
            "checkpoint was saved against it (checkpoint data is inconsistent)."
        )


def delta_base(stored: Any) -> str | None:
    """The keyframe id of a body stored as a change, else ``None``."""
    if type(stored) is list and len(stored) == 11 and stored[0] == MARK:
        return str(stored[2])
    return None


def apply_delta(stored: Any, keyframe: dict[str, Any], checkpoint_id: str) -> dict[str, Any]:
    """The body stored as change ``stored`` (its keyframe's body is ``keyframe``)."""
    if stored[1] != FORMAT:
        raise DeserializationError(
            f"Checkpoint {checkpoint_id} is stored as a change in format {stored[1]}, "
            f"which this release cannot read (it reads format {FORMAT}): upgrade stategraph."
        )
    _, _, _, v, ts, cv_set, cv_removed, vs_set, vs_removed, updated, _ = stored
    cv = dict(keyframe["channel_versions"])
    cv.update(cv_set)
    for k in cv_removed:
        cv.pop(k, None)
    vs = dict(keyframe["versions_seen"])
    vs.update(vs_set)
    for k in vs_removed:
        vs.pop(k, None)
    return {
        "v": v,
        "id": checkpoint_id,
        "ts": ts,
        "channel_versions": cv,
        "versions_seen": vs,
        "updated_channels": updated,
    }


class _Tip(NamedTuple):
    """The body written last on a keyframe's chain (replaced whole, never changed, so
    a reader sees one consistent tip while another thread commits)."""

    id: str  # its checkpoint id
    cv_set: dict[str, Any]  # the change it was stored as (private; empty: the keyframe)
    vs_set: dict[str, dict[str, Any]]
    clean: bool  # that change removed nothing
    sizes: tuple[int, int]  # the sizes of its channel_versions and versions_seen


@dataclass
class _Frame:
    id: str  # the keyframe's checkpoint id
    cv: dict[str, Any]  # private copies of its maps
    vs: dict[str, dict[str, Any]]
    tip: _Tip  # the body written last on this chain
    hash: int  # stored_hash of the keyframe's serialized bytes


class Keyframes:
    """The last keyframe a saver wrote per ``(thread_id, checkpoint_ns)``, and the
    encoding of new bodies against it."""

    def __init__(self) -> None:
        self._frames: dict[tuple[str, str], _Frame] = {}

    def encode(
        self,
        key: tuple[str, str],
        parent_id: str | None,
        body: dict[str, Any],
        new_versions: Mapping[str, Any] | None = None,
    ) -> list[Any] | None:
        """The change form of ``body`` against the keyframe of ``key``, or ``None``
        when ``body`` is to be stored whole (small, unusual shape, no usable keyframe
        or too many changes).

        When ``new_versions`` is a :class:`~stategraph.checkpoint._step.StepVersions`
        and the parent is the body written last, the change is that body's change
        plus what the step names: work in proportion to the change, not to the
        graph. Otherwise every entry is compared with the keyframe's."""
        frame = self._frames.get(key)
        if frame is None or parent_id is None:
            return None
        tip = frame.tip
        if tip.id != parent_id or tuple(body) != _KEYS:
            return None
        cv, vs = body["channel_versions"], body["versions_seen"]
        if type(cv) is not dict or type(vs) is not dict:
            return None
        entries = len(cv) + len(vs)
        if entries <= PACK_LIMIT:
            return None
        budget = max(MIN_BUDGET, entries // BUDGET_DIVISOR)
        sets = None
        if type(new_versions) is StepVersions and tip.clean:
            sets = _step_change(frame, tip, cv, vs, new_versions)
        if sets is None:
            sets = _full_change(frame, cv, vs, budget)
            if sets is None:
                return None
        cv_set, cv_removed, vs_set, vs_removed = sets
        if len(cv_set) + len(cv_removed) + len(vs_set) + len(vs_removed) > budget:
            return None
        return [
            MARK,
            FORMAT,
            frame.id,
            body["v"],
            body["ts"],
            cv_set,
            cv_removed,
            vs_set,
            vs_removed,
            body["updated_channels"],
            frame.hash,
        ]

    def commit(
        self,
        key: tuple[str, str],
        checkpoint_id: str,
        body: dict[str, Any],
        change: list[Any] | None,
        stored: bytes,
    ) -> None:
        """Record that ``body`` was stored as ``checkpoint_id``: as ``change`` (what
        :meth:`encode` returned), or whole as the bytes ``stored`` when ``change`` is
        ``None`` (a big body becomes the new keyframe)."""
        if change is not None:
            frame = self._frames.get(key)
            if frame is not None:
                frame.tip = _Tip(
                    checkpoint_id,
                    change[5],
                    change[7],
                    not change[6] and not change[8],
                    (len(body["channel_versions"]), len(body["versions_seen"])),
                )
            return
        cv, vs = body.get("channel_versions"), body.get("versions_seen")
        if (
            type(cv) is not dict
            or type(vs) is not dict
            or len(cv) + len(vs) <= PACK_LIMIT
            or tuple(body) != _KEYS
            or any(type(s) is not dict for s in vs.values())
        ):
            self._frames.pop(key, None)
            return
        self._frames.pop(key, None)  # (re)inserted last: the most recent
        self._frames[key] = _Frame(
            checkpoint_id,
            dict(cv),
            {n: dict(s) for n, s in vs.items()},
            _Tip(checkpoint_id, {}, {}, True, (len(cv), len(vs))),
            stored_hash(stored),
        )
        while len(self._frames) > MAX_FRAMES:
            del self._frames[next(iter(self._frames))]

    def drop(self, key: tuple[str, str], checkpoint_id: str) -> None:
        """Forget ``key``'s keyframe if it is ``checkpoint_id`` (being replaced)."""
        frame = self._frames.get(key)
        if frame is not None and checkpoint_id in (frame.id, frame.tip.id):
            del self._frames[key]

    def forget(self, thread_id: str | None = None) -> None:
        """Forget the keyframes of ``thread_id`` (every thread when ``None``)."""
        if thread_id is None:
            self._frames.clear()
            return
        for key in [k for k in self._frames if k[0] == thread_id]:
            del self._frames[key]


def _step_change(
    frame: _Frame, tip: _Tip, cv: dict[str, Any], vs: dict[str, Any], step: StepVersions
) -> tuple[dict[str, Any], list[str], dict[str, Any], list[str]] | None:
    """The change of a body from ``frame``'s keyframe, as the change of ``tip`` (its
    parent, the body written last) plus what ``step`` names (its promise is checked as far as it is
    cheap: the named entries are the body's, and the maps' sizes add up); ``None``
    when that does not hold."""
    fcv, last_cv = frame.cv, tip.cv_set
    added = 0
    for k, v in step.items():
        if cv.get(k, _MISSING) != v:
            return None
        if k not in last_cv and k not in fcv:
            added += 1
    cv_len, vs_len = tip.sizes
    if len(cv) != cv_len + added:
        return None
    fvs, last_vs = frame.vs, tip.vs_set
    seen_set: dict[str, dict[str, Any]] = {}
    added = 0
    for node in step.seen:
        seen = vs.get(node)
        if type(seen) is not dict:
            return None
        seen_set[node] = dict(seen)
        if node not in last_vs and node not in fvs:
            added += 1
    if len(vs) != vs_len + added:
        return None
    cv_set = {**last_cv, **step} if step else last_cv
    vs_set = {**last_vs, **seen_set} if seen_set else last_vs
    return cv_set, [], vs_set, []


def _full_change(
    frame: _Frame, cv: dict[str, Any], vs: dict[str, Any], budget: int
) -> tuple[dict[str, Any], list[str], dict[str, Any], list[str]] | None:
    """The change of a body from ``frame``'s keyframe, every entry compared; ``None``
    when it is over ``budget`` or an entry has an unusual shape."""
    fcv = frame.cv
    cv_set = {k: v for k, v in cv.items() if fcv.get(k, _MISSING) != v}
    # a key went when the keyframe's keys plus the new ones outnumber the body's
    gone = len(fcv) + _added(cv_set, fcv) != len(cv)
    cv_removed = [k for k in fcv if k not in cv] if gone else []
    if len(cv_set) + len(cv_removed) > budget:
        return None
    fvs = frame.vs
    vs_set: dict[str, Any] = {}
    for node, seen in vs.items():
        if fvs.get(node) != seen:
            if type(seen) is not dict:
                return None
            vs_set[node] = dict(seen)
            if len(vs_set) > budget:
                return None
    gone = len(fvs) + _added(vs_set, fvs) != len(vs)
    vs_removed = [k for k in fvs if k not in vs] if gone else []
    return cv_set, cv_removed, vs_set, vs_removed
