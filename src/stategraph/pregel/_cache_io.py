"""Node-cache decisions: which tasks to look up, how hits apply, what to store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stategraph.constants import TASK_BOOKKEEPING
from stategraph.types import CacheKey

if TYPE_CHECKING:
    from stategraph.pregel._task import Task

__all__ = ["CACHE_NS", "cache_lookup_keys", "apply_cache_hits", "cache_entries"]

CACHE_NS = "__stategraph_node_cache__"

FullKey = tuple[tuple[str, ...], str]


def cache_lookup_keys(tasks: Sequence[Task]) -> dict[FullKey, Task]:
    """Compute the cache key of every task whose node has a ``CachePolicy``."""
    keys: dict[FullKey, Task] = {}
    for task in tasks:
        policy = task.node.cache_policy
        if policy is None:
            continue
        raw = policy.key_func(task.input)
        key = raw.hex() if isinstance(raw, bytes) else str(raw)
        ns = (CACHE_NS, task.name)
        task.cache_key = CacheKey(ns=ns, key=key, ttl=policy.ttl)
        keys[(ns, key)] = task
    return keys


def apply_cache_hits(
    tasks: Sequence[Task], keys: Mapping[FullKey, Task], hits: Mapping[FullKey, Any]
) -> list[Task]:
    """Give each task with a cached result its stored writes; returns those tasks."""
    found: list[Task] = []
    for full_key, writes in hits.items():
        task = keys.get(full_key)
        if task is None:
            continue
        task.writes = [(w[0], w[1]) for w in writes]
        task.cached = True
        found.append(task)
    return found


def cache_entries(tasks: Sequence[Task]) -> dict[FullKey, tuple[Any, int | None]]:
    """The writes to store for tasks that ran (not from cache) and succeeded."""
    entries: dict[FullKey, tuple[Any, int | None]] = {}
    for task in tasks:
        ck = task.cache_key
        if ck is None or task.cached or not task.done or task.error or task.interrupts:
            continue
        writes = [list(w) for w in task.writes if w[0] not in TASK_BOOKKEEPING]
        entries[(ck.ns, ck.key)] = (writes, ck.ttl)
    return entries
