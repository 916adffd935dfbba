"""Turning decoded LangGraph checkpoints into what a stategraph saver is given.

:func:`plans` converts the records of each thread (checkpoint body, channel versions,
pending writes, re-keyed ids when the application's graph is given) into a
:class:`ThreadPlan`, checking each value on the way. :func:`survey` runs it over the
whole source first, keeping only what checking the target needs, so that every error
is found, and named, before the first write; the plans are then made again, one batch
of threads at a time, as they are written.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from stategraph.checkpoint.langgraph_import._errors import (
    LangGraphImportError,
    LangGraphValueError,
    Where,
)
from stategraph.checkpoint.langgraph_import._read import LangGraphSource
from stategraph.checkpoint.langgraph_import._rows import LgCheckpoint

__all__ = ["Put", "ThreadPlan", "Survey", "KEEP_BYTES", "plan_threads", "plans", "survey"]

_PULL_PREFIX = "~__pregel_pull, "
_NS_SEP = "|"
_MAX_INT_VERSION = 10**32 - 1  # what fits the 32 digits of a string version


@dataclass
class Put:
    """One checkpoint to ``put``, and its pending writes (``put_writes`` calls, in order)."""

    where: Where
    """The source checkpoint."""
    thread_id: str
    checkpoint_ns: str
    parent_id: str | None
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]
    writes: list[tuple[str, str, list[tuple[str, Any]]]] = field(default_factory=list)
    """``(task_id, task_path, [(channel, value), ...])`` for each ``put_writes`` call."""

    @property
    def checkpoint_id(self) -> str:
        """The id of the checkpoint (kept from LangGraph)."""
        return str(self.checkpoint["id"])


@dataclass
class ThreadPlan:
    """Everything one thread's import writes; the last :class:`Put` is written last."""

    thread_id: str
    puts: list[Put]

    @property
    def writes(self) -> int:
        """How many pending writes the thread has."""
        return sum(len(items) for put in self.puts for _t, _p, items in put.writes)


def _version(value: Any, where: Where) -> str:
    """A LangGraph channel version as a stategraph string version (same order)."""
    if isinstance(value, str):
        if "\x00" in value:
            raise LangGraphValueError(f"The version of {where} holds a NUL character.", where)
        return value
    number = value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        number = int(value)
    if (
        isinstance(number, bool)
        or not isinstance(number, int)
        or not 0 <= number <= _MAX_INT_VERSION
    ):
        raise LangGraphValueError(
            f"Unsupported LangGraph channel version {value!r:.60} ({where}): expected a "
            "string or a whole number from 0 to 10**32 - 1.",
            where,
        )
    return f"{number:032}.{'0' * 16}"


def _mapping(value: Any, what: str, where: Where) -> dict[Any, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise LangGraphValueError(
            f"The {what} of {where} is {type(value).__name__}, not a mapping.", where
        )
    return value


def _channel_name(name: Any, where: Where) -> str:
    if not isinstance(name, str) or "\x00" in name:
        raise LangGraphValueError(
            f"{where} names a channel {name!r:.60}, which is not text.", where
        )
    return name


def _checkpoint(record: LgCheckpoint) -> dict[str, Any]:
    """The stategraph checkpoint of a LangGraph checkpoint body (checked)."""
    where = record.where
    body = record.checkpoint
    if body.get("pending_sends"):
        raise LangGraphValueError(
            f"Checkpoint {record.checkpoint_id} of thread {record.thread_id!r} uses LangGraph's "
            f"old format (v{body.get('v')}) with pending sends, which cannot be imported; "
            f"resume that thread with LangGraph 0.3+ once to rewrite it.",
            where,
        )
    values = {
        _channel_name(k, where): v
        for k, v in _mapping(body.get("channel_values"), "channel values", where).items()
    }
    versions = {}
    for name, version in _mapping(body.get("channel_versions"), "channel versions", where).items():
        channel = _channel_name(name, where)
        versions[channel] = _version(version, where.at(channel=channel))
    seen: dict[str, dict[str, str]] = {}
    for node, by_channel in _mapping(body.get("versions_seen"), "versions seen", where).items():
        node_where = where.at(part=f"versions seen by node {node!r:.60}")
        node_name = _channel_name(node, node_where)
        seen[node_name] = {
            _channel_name(k, node_where): _version(v, node_where.at(channel=str(k)))
            for k, v in _mapping(by_channel, "versions seen", node_where).items()
        }
    updated = body.get("updated_channels")
    if updated is not None and (
        not isinstance(updated, (list, tuple)) or not all(isinstance(c, str) for c in updated)
    ):
        raise LangGraphValueError(
            f"The updated channels of {where} are {updated!r:.60}, not a list of names.", where
        )
    ts = body.get("ts") or ""
    if not isinstance(ts, str):
        raise LangGraphValueError(f"The time stamp of {where} is {ts!r:.40}, not text.", where)
    return {
        "v": 4,
        "id": record.checkpoint_id,
        "ts": ts,
        "channel_values": values,
        "channel_versions": versions,
        "versions_seen": seen,
        "updated_channels": None if updated is None else list(updated),
    }


class _Rekey:
    """Old LangGraph ids -> the ids stategraph computes, for one thread.

    Task ids of pull tasks are recomputed with the compiled graph (the subgraph for a
    nested namespace), namespaces ``node:task`` are renamed with them, and interrupt
    ids follow (an interrupt raised in a subgraph keeps its id in the parent's writes).
    """

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self.tasks: dict[str, str] = {}
        self.interrupts: dict[str, tuple[int, str]] = {}  # old id -> (depth, new id)

    def namespace(self, ns: str) -> str:
        """``ns`` with every ``node:task`` segment renamed."""
        if not ns:
            return ns
        parts = []
        for segment in ns.split(_NS_SEP):
            name, sep, task = segment.partition(":")
            parts.append(f"{name}{sep}{self.tasks.get(task, task)}" if sep else segment)
        return _NS_SEP.join(parts)

    def _graph_for(self, ns: str) -> Any:
        graph = self.graph
        for segment in ns.split(_NS_SEP) if ns else ():
            name = segment.partition(":")[0]
            found = (
                dict(graph.get_subgraphs()).get(name) if hasattr(graph, "get_subgraphs") else None
            )
            if found is None:
                return None
            graph = found
        return graph

    def learn(self, record: LgCheckpoint) -> None:
        """Compute the new ids of ``record``'s pull tasks and of their interrupts."""
        step = record.metadata.get("step")
        ns = self.namespace(record.checkpoint_ns)
        graph = self._graph_for(ns)
        if graph is None or isinstance(step, bool) or not isinstance(step, int):
            return
        by_task: dict[str, list[Any]] = {}
        for write in record.writes:
            if write.task_path.startswith(_PULL_PREFIX):
                by_task.setdefault(write.task_id, []).append(write)
        for task_id, items in by_task.items():
            node = items[0].task_path[len(_PULL_PREFIX) :]
            raised = [
                item
                for w in items
                if w.channel == "__interrupt__" and isinstance(w.value, list)
                for item in w.value
            ]
            ids = graph.pull_task_ids(record.checkpoint_id, ns, step + 1, node, len(raised))
            if ids is None:
                continue
            new_id, interrupt_ids = ids
            self.tasks[task_id] = new_id
            depth = ns.count(_NS_SEP) + bool(ns)
            for item, new_iid in zip(raised, interrupt_ids, strict=False):
                old = getattr(item, "id", None)
                # an interrupt raised in a subgraph shows in its parents' writes too:
                # the innermost task that raised it decides its id
                if isinstance(old, str) and self.interrupts.get(old, (-1, ""))[0] < depth:
                    self.interrupts[old] = (depth, new_iid)

    def interrupt(self, item: Any) -> Any:
        """``item`` (an ``Interrupt``) with its new id, if it has one."""
        old = getattr(item, "id", None)
        new = self.interrupts.get(old) if isinstance(old, str) else None
        return item if new is None else type(item)(item.value, new[1])


def _writes(record: LgCheckpoint, rekey: _Rekey | None) -> list[tuple[str, str, list[Any]]]:
    """The ``put_writes`` calls of a record: per task, regular writes then special ones."""
    from stategraph.checkpoint.base import WRITES_IDX_MAP

    by_task: dict[tuple[str, str], list[Any]] = {}
    for write in record.writes:
        task_id = rekey.tasks.get(write.task_id, write.task_id) if rekey else write.task_id
        value = write.value
        if rekey is not None and write.channel == "__interrupt__" and isinstance(value, list):
            value = [rekey.interrupt(item) for item in value]
        by_task.setdefault((task_id, write.task_path), []).append((write.idx, write.channel, value))
    calls: list[tuple[str, str, list[Any]]] = []
    for (task_id, task_path), items in by_task.items():
        items.sort(key=lambda w: w[0])
        regular = [(c, v) for _i, c, v in items if c not in WRITES_IDX_MAP]
        special = [(c, v) for _i, c, v in items if c in WRITES_IDX_MAP]
        calls.extend((task_id, task_path, group) for group in (regular, special) if group)
    return calls


def _plan_thread(records: list[LgCheckpoint], graph: Any) -> ThreadPlan:
    rekey = _Rekey(graph) if graph is not None else None
    if rekey is not None:
        # outer namespaces first: a subgraph's namespace names its parent's task
        for record in sorted(
            records, key=lambda r: r.checkpoint_ns.count(_NS_SEP) + bool(r.checkpoint_ns)
        ):
            try:
                rekey.learn(record)
            except LangGraphImportError:
                raise
            except Exception as exc:  # the application's graph failed
                raise LangGraphImportError(
                    f"Re-keying {record.where} with the graph failed: {type(exc).__name__}: {exc}",
                    record.where,
                ) from exc
    puts = []
    for record in records:
        puts.append(
            Put(
                where=record.where,
                thread_id=record.thread_id,
                checkpoint_ns=rekey.namespace(record.checkpoint_ns)
                if rekey
                else record.checkpoint_ns,
                parent_id=record.parent_id,
                checkpoint=_checkpoint(record),
                metadata=record.metadata,
                writes=_writes(record, rekey),
            )
        )
    return ThreadPlan(records[0].thread_id, puts)


def plan_threads(records: list[LgCheckpoint], graph: Any = None) -> list[ThreadPlan]:
    """One :class:`ThreadPlan` per thread of ``records`` (which come grouped by thread)."""
    plans: list[ThreadPlan] = []
    batch: list[LgCheckpoint] = []
    for record in records:
        if batch and batch[0].thread_id != record.thread_id:
            plans.append(_plan_thread(batch, graph))
            batch = []
        batch.append(record)
    if batch:
        plans.append(_plan_thread(batch, graph))
    return plans


KEEP_BYTES = 32 * 1024 * 1024
"""A source whose stored payload is at most this big is checked and written from one
reading (its plans kept in memory); a bigger one is read twice (from the same snapshot)
so that memory holds one batch of threads at a time."""


@dataclass
class Survey:
    """What a checked source holds: each thread's last checkpoint, the counts, and the
    plans themselves when the source is small enough to keep them."""

    heads: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Thread id -> (namespace, checkpoint id) of its last checkpoint (the one written
    last; it is in the target once the whole thread is)."""
    checkpoints: int = 0
    writes: int = 0
    kept: list[ThreadPlan] | None = field(default_factory=list)
    """Every plan, or ``None`` when the source was too big to keep them."""


def survey(source: LangGraphSource, graph: Any = None) -> Survey:
    """Read, load and check every thread of ``source`` (raising the first error)."""
    found = Survey()
    kept_bytes = 0
    for batch, size in source.batches():
        batch_plans = [_plan_thread(records, graph) for records in batch]
        for plan in batch_plans:
            head = plan.puts[-1]
            found.heads[plan.thread_id] = (head.checkpoint_ns, head.checkpoint_id)
            found.checkpoints += len(plan.puts)
            found.writes += plan.writes
        kept_bytes += size
        if found.kept is not None:
            if kept_bytes <= KEEP_BYTES:
                found.kept.extend(batch_plans)
            else:
                found.kept = None  # read again when writing: one batch at a time
    return found


def plans(source: LangGraphSource, found: Survey, graph: Any = None) -> Iterator[ThreadPlan]:
    """The plan of each thread of the surveyed ``source``: the kept ones, or read again
    a batch of threads at a time."""
    if found.kept is not None:
        yield from found.kept
        return
    for batch, _size in source.batches():
        for records in batch:
            yield _plan_thread(records, graph)
