"""What the retention operations of the savers share: which checkpoints to keep.

``prune``, ``delete_for_runs`` and TTL sweeps delete checkpoints, but never one that a
kept checkpoint still needs to be read: a ``DeltaChannel`` value is rebuilt from the
pending writes of the checkpoint's ancestors up to the nearest stored value, so those
ancestors stay (see :func:`close_over_deltas`). Values stored as list deltas are
rebased by the savers (rewritten whole) before their bases go.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from typing_extensions import TypedDict

from stategraph.constants import CONF

__all__ = [
    "partition",
    "TTLConfig",
    "PruneStrategy",
    "check_prune_args",
    "check_ttl",
    "close_over_deltas",
    "keep_latest",
    "keep_without_runs",
    "Sweeper",
    "SweeperThread",
    "ttl_needed",
]

PruneStrategy = Literal["keep_latest", "delete"]


class TTLConfig(TypedDict, total=False):
    """Saver-level time to live of threads (as LangGraph's store TTL settings)."""

    default_ttl: float
    """Minutes after its last write (or read, with ``refresh_on_read``) after which a
    thread expires and :meth:`sweep` deletes it."""
    sweep_interval_minutes: float
    """How often the background sweeper (``start_ttl_sweeper()``) runs ``sweep()``."""
    refresh_on_read: bool
    """Whether reading a thread (``get_tuple``, ``list`` by thread) extends its life
    (default ``True``)."""


def check_ttl(ttl: Mapping[str, Any] | None, owner: str) -> TTLConfig | None:
    """Validate a ``ttl=`` setting, raising a clear error for a bad one."""
    if ttl is None:
        return None
    if not isinstance(ttl, Mapping):
        raise TypeError(
            f"{owner}(ttl=...) takes a dict like {{'default_ttl': 60}} (minutes), "
            f"got {type(ttl).__name__}."
        )
    unknown = set(ttl) - {"default_ttl", "sweep_interval_minutes", "refresh_on_read"}
    if unknown:
        raise ValueError(
            f"{owner}(ttl=...): unknown setting(s) {sorted(unknown)}; the settings are "
            "'default_ttl' (minutes), 'sweep_interval_minutes' and 'refresh_on_read'."
        )
    out: TTLConfig = {}
    for key in ("default_ttl", "sweep_interval_minutes"):
        if key in ttl:
            value = ttl[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(
                    f"{owner}(ttl=...): '{key}' must be a positive number of minutes, "
                    f"got {value!r}."
                )
            out[key] = float(value)
    if "default_ttl" not in out:
        raise ValueError(f"{owner}(ttl=...) needs 'default_ttl' (minutes).")
    refresh = ttl.get("refresh_on_read", True)
    if not isinstance(refresh, bool):
        raise ValueError(f"{owner}(ttl=...): 'refresh_on_read' must be True or False.")
    out["refresh_on_read"] = refresh
    return out


def check_prune_args(
    thread_ids: Sequence[str] | str, strategy: str, keep_last: int | None, owner: str
) -> tuple[list[str], int]:
    """Validate ``prune``'s arguments; return the thread ids and how many to keep."""
    if isinstance(thread_ids, str):
        raise TypeError(
            f"{owner}.prune() takes a list of thread ids, got the string {thread_ids!r}: "
            f"pass [{thread_ids!r}]."
        )
    if strategy not in ("keep_latest", "delete"):
        raise ValueError(
            f"{owner}.prune(strategy={strategy!r}): use 'keep_latest' (keep the newest "
            "checkpoints of each namespace) or 'delete' (delete the threads)."
        )
    if keep_last is None:
        keep_last = 1
    if isinstance(keep_last, bool) or not isinstance(keep_last, int) or keep_last < 1:
        raise ValueError(f"{owner}.prune(keep_last={keep_last!r}): must be an int >= 1.")
    if strategy == "delete" and keep_last != 1:
        raise ValueError(f"{owner}.prune(strategy='delete') deletes everything: drop keep_last.")
    return [str(t) for t in thread_ids], keep_last


Node = tuple[str, str]  # (checkpoint_ns, checkpoint_id)


def keep_latest(tuples: Iterable[Any], keep_last: int) -> set[Node]:
    """The ``keep_last`` newest checkpoints of each namespace among ``tuples``."""
    by_ns: dict[str, list[str]] = {}
    for t in tuples:
        conf = t.config["configurable"]
        by_ns.setdefault(conf["checkpoint_ns"], []).append(conf["checkpoint_id"])
    keep: set[Node] = set()
    for ns, ids in by_ns.items():
        for cid in sorted(ids, reverse=True)[:keep_last]:
            keep.add((ns, cid))
    return keep


def partition(
    tuples: Iterable[Any], keep: set[Node], *, as_str: bool = True
) -> tuple[list[Node], set[tuple[str, str, Any]], list[tuple[str, str, Any, Any]]]:
    """Split a thread's checkpoints for a retention that keeps ``keep``: the
    ``(ns, checkpoint_id)`` of those that go, the ``(ns, channel, version)`` the kept
    ones refer to, and the kept values ``(ns, channel, version, value)`` (stored whole
    again when their delta's base goes). Versions are ``str`` unless ``as_str=False``."""
    drop: list[Node] = []
    referenced: set[tuple[str, str, Any]] = set()
    kept: list[tuple[str, str, Any, Any]] = []
    for t in tuples:
        conf = t.config["configurable"]
        ns, cid = conf["checkpoint_ns"], conf["checkpoint_id"]
        if (ns, cid) not in keep:
            drop.append((ns, cid))
            continue
        values = t.checkpoint["channel_values"]
        for channel, version in t.checkpoint["channel_versions"].items():
            v = str(version) if as_str else version
            referenced.add((ns, channel, v))
            if channel in values:
                kept.append((ns, channel, v, values[channel]))
    return drop, referenced, kept


def _internal(channel: str) -> bool:
    return channel.startswith("__") or channel.startswith("branch:")


def keep_without_runs(tuples: Sequence[Any], runs: set[str]) -> set[Node] | None:
    """``delete_for_runs``' choice among a thread's checkpoints ``tuples``: every one
    whose metadata ``run_id`` is not in ``runs``, plus the ancestors the kept ones need
    (:func:`close_over_deltas`); ``None`` when none was made by ``runs``."""
    nodes = {(t.config[CONF]["checkpoint_ns"], t.config[CONF]["checkpoint_id"]): t for t in tuples}
    drop = {n for n, t in nodes.items() if str((t.metadata or {}).get("run_id")) in runs}
    if not drop:
        return None
    return close_over_deltas(tuples, set(nodes) - drop)


def close_over_deltas(tuples: Iterable[Any], keep: set[Node]) -> set[Node]:
    """``keep`` plus the ancestors a kept checkpoint needs to rebuild its
    ``DeltaChannel`` values (their pending writes, up to the nearest stored value).

    A state channel that has a version but no stored value at a kept checkpoint is
    walked up its parents: an ancestor whose step wrote the channel is needed, and so is
    the ancestor holding the value the writes fold onto.
    """
    by_node: dict[Node, Any] = {}
    for t in tuples:
        conf = t.config["configurable"]
        by_node[(conf["checkpoint_ns"], conf["checkpoint_id"])] = t
    result = set(keep)
    for node in keep:
        t = by_node.get(node)
        if t is None:
            continue
        values = t.checkpoint["channel_values"]
        pending = {
            c for c in t.checkpoint["channel_versions"] if c not in values and not _internal(c)
        }
        chain: list[Node] = []
        needed = 0
        changed = {c: False for c in pending}
        cur = t
        while pending and cur.parent_config is not None:
            pconf = cur.parent_config["configurable"]
            pnode = (pconf["checkpoint_ns"], pconf["checkpoint_id"])
            parent = by_node.get(pnode)
            if parent is None:
                break
            chain.append(pnode)
            cv = cur.checkpoint["channel_versions"]
            pv = parent.checkpoint["channel_versions"]
            written = {w[1] for w in parent.pending_writes or ()}
            pvalues = parent.checkpoint["channel_values"]
            for c in list(pending):
                if cv.get(c) != pv.get(c):
                    changed[c] = True
                    if c in written:
                        needed = len(chain)
                if c in pvalues:
                    if changed[c]:
                        needed = max(needed, len(chain))
                    pending.discard(c)
            cur = parent
        result.update(chain[:needed])
    return result


class Sweeper:
    """A daemon thread calling ``sweep()`` every ``interval_minutes`` until stopped."""

    def __init__(self, sweep: Any, interval_minutes: float, name: str) -> None:
        import threading

        self._sweep = sweep
        self._interval = interval_minutes * 60.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.errors: list[BaseException] = []
        """Errors raised by sweeps (the sweeper keeps going)."""
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._sweep()
            except Exception as exc:  # keep sweeping; the error is kept for inspection
                self.errors.append(exc)

    def stop(self) -> None:
        """Stop the thread and wait for it (a sweep in progress finishes first)."""
        self._stop.set()
        self._thread.join()


def ttl_needed(owner: str, args: str) -> ValueError:
    """The error of ``start_ttl_sweeper()`` on a saver made without a ``ttl`` (``owner``:
    its class name, ``args``: its arguments before ``ttl=`` in the example)."""
    return ValueError(
        f"{owner}.start_ttl_sweeper() needs a ttl: {owner}({args}ttl={{'default_ttl': minutes}})."
    )


class SweeperThread:
    """``start_ttl_sweeper``/``stop_ttl_sweeper`` of a sync saver: a :class:`Sweeper`
    thread calling the saver's ``sweep()`` (the saver sets ``ttl`` and ``_sweeper``)."""

    _sweeper_name = "stategraph-ttl"
    """The name of the sweeper thread."""
    _ttl_example_args = "conn, "
    """The saver's arguments before ``ttl=`` in the error of a saver without a ttl."""

    if TYPE_CHECKING:
        ttl: TTLConfig | None
        _sweeper: Sweeper | None

        def sweep(self) -> int: ...

    def start_ttl_sweeper(self) -> None:
        """Run :meth:`sweep` in a background thread every
        ``ttl["sweep_interval_minutes"]`` (default: every ``default_ttl`` / 4)."""
        if self.ttl is None:
            raise ttl_needed(type(self).__name__, self._ttl_example_args)
        if self._sweeper is None:
            interval = self.ttl.get("sweep_interval_minutes") or self.ttl["default_ttl"] / 4
            self._sweeper = Sweeper(self.sweep, interval, self._sweeper_name)

    def stop_ttl_sweeper(self) -> None:
        """Stop the background sweeper (if running)."""
        if self._sweeper is not None:
            self._sweeper.stop()
            self._sweeper = None
