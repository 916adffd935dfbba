"""What the studio reads from a checkpoint database: threads, timelines, checkpoints.

The saver's public API answers everything about one thread. Listing every thread of a
large database through ``saver.list(None)`` would read each checkpoint, so for SQLite and
PostgreSQL a :class:`ThreadIndex` asks the database with one read-only ``GROUP BY``
over the primary key (an index-only scan) and keeps the answer until the database
changes. Nothing here writes.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stategraph.cli._checkpoints import changes, pending_interrupts, pending_nodes, state_values

__all__ = [
    "ThreadRow",
    "ThreadIndex",
    "SqliteThreadIndex",
    "PostgresThreadIndex",
    "SaverThreadIndex",
    "thread_index_for",
    "warm",
    "TimelineEntry",
    "Timeline",
    "timeline",
    "CheckpointView",
    "checkpoint_view",
    "namespaces_of",
]


@dataclass
class ThreadRow:
    """One thread: its id, newest root checkpoint id and how many root checkpoints."""

    thread_id: str
    latest_id: str
    checkpoints: int
    metadata: dict[str, Any] = field(default_factory=dict)


def _matches(meta: Mapping[str, Any], filters: Mapping[str, Any]) -> bool:
    return all(k in meta and meta[k] == v for k, v in filters.items())


class ThreadIndex(ABC):
    """Threads newest first, searched by id substring and filtered on metadata."""

    @abstractmethod
    def rows(self) -> list[ThreadRow]:
        """Every thread, newest first."""

    @abstractmethod
    def metadata_matches(self, filters: Mapping[str, Any]) -> set[str]:
        """Ids of threads whose latest root checkpoint's metadata matches ``filters``."""

    @abstractmethod
    def task_names(self, thread_id: str, ns: str, checkpoint_ids: Sequence[str]) -> dict[str, str]:
        """Node name of each task that saved writes against the given checkpoints."""

    @abstractmethod
    def namespaces(self, thread_id: str) -> list[str]:
        """The checkpoint namespaces a thread has (subgraphs), root first."""

    @abstractmethod
    def close(self) -> None:
        """Release what the index holds."""

    @abstractmethod
    def forget(self, thread_id: str) -> None:
        """Drop a thread the caller found gone from the rows kept between calls."""

    def page(
        self,
        *,
        search: str = "",
        filters: Mapping[str, Any] | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> tuple[list[ThreadRow], int]:
        """One page of threads and the number of threads matching."""
        rows = self.rows()
        if search:
            needle = search.lower()
            rows = [r for r in rows if needle in r.thread_id.lower()]
        if filters:
            keep = self.metadata_matches(filters)
            rows = [r for r in rows if r.thread_id in keep]
        return rows[offset : offset + limit], len(rows)


class SqliteThreadIndex(ThreadIndex):
    """Thread index over a SQLite checkpoint file, on its own read-only connection."""

    def __init__(self, path: str) -> None:
        self._conn = sqlite3.connect(
            f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None
        )
        self._lock = threading.Lock()
        self._version: int | None = None
        self._by_id: dict[str, ThreadRow] = {}
        self._rows: list[ThreadRow] = []
        self._mark: tuple[bool, int] = (False, 0)
        """Where the last refresh stopped: (read from the change feed?, last seq/rowid)."""
        self._meta: dict[str, tuple[str, dict[str, Any]]] = {}
        self.full_scans = 0
        """How many times the whole table was grouped (the rest were incremental)."""

    def _full(self) -> None:
        self.full_scans += 1
        cur = self._conn.execute(
            "SELECT thread_id, MAX(checkpoint_id), COUNT(*) FROM checkpoints "
            "WHERE checkpoint_ns = '' GROUP BY thread_id"
        )
        self._by_id = {t: ThreadRow(t, c, n) for t, c, n in cur}

    def _refresh(self, thread_ids: Sequence[str]) -> None:
        for thread_id in thread_ids:
            latest, count = self._conn.execute(
                "SELECT MAX(checkpoint_id), COUNT(*) FROM checkpoints "
                "WHERE thread_id = ? AND checkpoint_ns = ''",
                (thread_id,),
            ).fetchone()
            if count:
                self._by_id[thread_id] = ThreadRow(thread_id, latest, count)
            else:
                self._by_id.pop(thread_id, None)

    def rows(self) -> list[ThreadRow]:
        """Every thread, newest first.

        Kept between calls: when the database changed, only some threads are recounted.
        In files of this release, those of the change feed ``thread_changes`` from the
        top one seen last: a writer's trigger (or a delete) moves a thread to the top,
        unless it is there already, in the transaction of its change. In a file no
        release with the feed has opened yet, the threads of the checkpoint rows added
        since (by rowid); a change that added nothing there (a deleted thread) groups
        the whole table again.
        """
        with self._lock:
            version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
            if version == self._version:
                return self._rows
            self._conn.execute("BEGIN")  # one snapshot for the statements below
            try:
                feed = self._has_feed()
                if feed:
                    last_sql = "SELECT MAX(seq) FROM thread_changes"
                    since_sql = "SELECT thread_id FROM thread_changes WHERE seq >= ?"
                else:
                    last_sql = "SELECT MAX(rowid) FROM checkpoints"
                    since_sql = "SELECT DISTINCT thread_id FROM checkpoints WHERE rowid > ?"
                last = self._conn.execute(last_sql).fetchone()[0] or 0
                # (the top thread may have written again without moving: in the feed,
                # the one at the mark is recounted too)
                moved = last >= self._mark[1] if feed else last > self._mark[1]
                touched = []
                if self._version is not None and self._mark[0] == feed and moved:
                    touched = [row[0] for row in self._conn.execute(since_sql, (self._mark[1],))]
                if touched:
                    self._refresh(touched)
                else:
                    self._full()
            finally:
                self._conn.execute("COMMIT")
            self._mark, self._version = (feed, last), version
            self._rows = sorted(self._by_id.values(), key=lambda r: r.latest_id, reverse=True)
            return self._rows

    def _has_feed(self) -> bool:
        """Whether the file has the change feed (migration 10 of the SQLite savers)."""
        found = self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'thread_changes'"
        ).fetchone()
        return found is not None

    def forget(self, thread_id: str) -> None:
        """Drop a thread found gone (deleted while other rows were added)."""
        with self._lock:
            if self._by_id.pop(thread_id, None) is not None:
                self._rows = [r for r in self._rows if r.thread_id != thread_id]

    def metadata_matches(self, filters: Mapping[str, Any]) -> set[str]:
        """Threads whose latest root checkpoint's metadata has every key=value.

        The latest metadata of each thread is read once (one primary-key lookup per
        thread) and kept until that thread gets a newer checkpoint.
        """
        rows = self.rows()
        with self._lock:
            stale = [r for r in rows if self._meta.get(r.thread_id, ("",))[0] != r.latest_id]
            for r in stale:
                found = self._conn.execute(
                    "SELECT metadata_json FROM checkpoints WHERE thread_id = ? "
                    "AND checkpoint_ns = '' AND checkpoint_id = ?",
                    (r.thread_id, r.latest_id),
                ).fetchone()
                self._meta[r.thread_id] = (r.latest_id, json.loads(found[0]) if found else {})
            return {
                r.thread_id
                for r in rows
                if _matches(self._meta.get(r.thread_id, ("", {}))[1], filters)
            }

    def task_names(self, thread_id: str, ns: str, checkpoint_ids: Sequence[str]) -> dict[str, str]:
        """Node name of each task that saved writes against the given checkpoints."""
        if not checkpoint_ids:
            return {}
        marks = ",".join("?" for _ in checkpoint_ids)
        sql = (
            "SELECT DISTINCT task_id, task_path FROM writes WHERE thread_id = ? AND "
            f"checkpoint_ns = ? AND checkpoint_id IN ({marks})"
        )
        with self._lock:
            rows = self._conn.execute(sql, [thread_id, ns, *checkpoint_ids]).fetchall()
        return {task: _node_of_path(path) for task, path in rows if path}

    def namespaces(self, thread_id: str) -> list[str]:
        """The checkpoint namespaces a thread has (subgraphs), root first."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ?", (thread_id,)
            ).fetchall()
        return sorted(r[0] for r in rows)

    def close(self) -> None:
        """Close the read-only connection."""
        self._conn.close()


def _node_of_path(path: str) -> str:
    """``__pregel_pull~review`` -> ``review`` (push tasks: the node after the marker)."""
    parts = [p for p in path.split("~") if p and not p.startswith("__pregel_")]
    return parts[0] if parts else path


class PostgresThreadIndex(ThreadIndex):
    """Thread index over a PostgreSQL checkpoint database (read-only transactions)."""

    def __init__(self, dsn: str) -> None:
        import psycopg

        self._conn = psycopg.connect(dsn, autocommit=True)
        self._conn.execute("SET default_transaction_read_only = on")
        self._lock = threading.Lock()
        self._stamp: Any = None
        self._rows: list[ThreadRow] = []

    def rows(self) -> list[ThreadRow]:
        """Every thread, newest first (recomputed when checkpoints were added or removed)."""
        with self._lock:
            # the newest id (an index lookup) sees new checkpoints at once; the table's
            # statistics see deletions (they lag by up to a second)
            stamp = self._conn.execute(
                "SELECT (SELECT MAX(checkpoint_id) FROM sg_checkpoints), "
                "(SELECT n_tup_del FROM pg_stat_user_tables "
                "WHERE relid = to_regclass('sg_checkpoints'))"
            ).fetchone()
            if stamp is None or stamp != self._stamp or not self._rows:
                cur = self._conn.execute(
                    "SELECT thread_id, MAX(checkpoint_id), COUNT(*) FROM sg_checkpoints "
                    "WHERE checkpoint_ns = '' GROUP BY thread_id ORDER BY 2 DESC"
                )
                self._rows = [ThreadRow(t, c, n) for t, c, n in cur]
                self._stamp = stamp
            return self._rows

    def forget(self, thread_id: str) -> None:
        """Drop a thread found gone (its deletion is not yet in the statistics)."""
        with self._lock:
            self._rows = [r for r in self._rows if r.thread_id != thread_id]

    def metadata_matches(self, filters: Mapping[str, Any]) -> set[str]:
        """Threads whose latest root checkpoint's JSON metadata contains ``filters``."""
        rows = self.rows()
        with self._lock:
            cur = self._conn.execute(
                "SELECT thread_id FROM sg_checkpoints WHERE checkpoint_ns = '' AND "
                "(thread_id, checkpoint_id) IN (SELECT * FROM unnest(%s::text[], %s::text[])) "
                "AND metadata @> %s::jsonb",
                (
                    [r.thread_id for r in rows],
                    [r.latest_id for r in rows],
                    json.dumps(dict(filters)),
                ),
            )
            return {row[0] for row in cur}

    def task_names(self, thread_id: str, ns: str, checkpoint_ids: Sequence[str]) -> dict[str, str]:
        """Node name of each task that saved writes against the given checkpoints."""
        if not checkpoint_ids:
            return {}
        with self._lock:
            cur = self._conn.execute(
                "SELECT DISTINCT task_id, task_path FROM sg_checkpoint_writes WHERE "
                "thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)",
                (thread_id, ns, list(checkpoint_ids)),
            )
            return {task: _node_of_path(path) for task, path in cur if path}

    def namespaces(self, thread_id: str) -> list[str]:
        """The checkpoint namespaces a thread has (subgraphs), root first."""
        with self._lock:
            cur = self._conn.execute(
                "SELECT DISTINCT checkpoint_ns FROM sg_checkpoints WHERE thread_id = %s",
                (thread_id,),
            )
            return sorted(r[0] for r in cur)

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()


class SaverThreadIndex(ThreadIndex):
    """Thread index through ``saver.list(None)`` (any saver; reads every checkpoint)."""

    def __init__(self, saver: Any) -> None:
        self._saver = saver

    def rows(self) -> list[ThreadRow]:
        """Every thread, newest first."""
        found: dict[str, ThreadRow] = {}
        for tup in self._saver.list(None):
            conf = tup.config["configurable"]
            if conf.get("checkpoint_ns", ""):
                continue
            cid = conf["checkpoint_id"]
            row = found.get(conf["thread_id"])
            if row is None:
                found[conf["thread_id"]] = ThreadRow(
                    conf["thread_id"], cid, 1, dict(tup.metadata or {})
                )
            else:
                row.checkpoints += 1
                if cid > row.latest_id:
                    row.latest_id, row.metadata = cid, dict(tup.metadata or {})
        return sorted(found.values(), key=lambda r: r.latest_id, reverse=True)

    def forget(self, thread_id: str) -> None:
        """Nothing to drop: this index keeps no rows between calls."""
        return None

    def metadata_matches(self, filters: Mapping[str, Any]) -> set[str]:
        """Threads whose latest root checkpoint's metadata matches ``filters``."""
        return {r.thread_id for r in self.rows() if _matches(r.metadata, filters)}

    def task_names(self, thread_id: str, ns: str, checkpoint_ids: Sequence[str]) -> dict[str, str]:
        """Empty: task paths are not part of the saver API (the timeline shows task ids)."""
        return {}

    def namespaces(self, thread_id: str) -> list[str]:
        """The checkpoint namespaces a thread has (subgraphs), root first."""
        seen = set()
        for tup in self._saver.list(None):
            conf = tup.config["configurable"]
            if conf["thread_id"] == thread_id:
                seen.add(conf.get("checkpoint_ns", ""))
        return sorted(seen)

    def close(self) -> None:
        """Nothing to close: the saver belongs to the caller."""


def warm(index: ThreadIndex) -> int:
    """Read every thread and its latest metadata now (the first page and the first
    metadata filter then answer at once); returns the number of threads."""
    index.metadata_matches({})
    return len(index.rows())


def thread_index_for(saver: Any, *, sqlite: str | None = None, postgres: str | None = None) -> Any:
    """The fastest thread index for this database."""
    if sqlite:
        return SqliteThreadIndex(sqlite)
    if postgres:
        return PostgresThreadIndex(postgres)
    return SaverThreadIndex(saver)


# --------------------------------------------------------------------------- timeline
@dataclass
class TimelineEntry:
    """One checkpoint of a thread's timeline, and the writes of the step that made it."""

    checkpoint_id: str
    parent_id: str | None
    step: Any
    source: Any
    created_at: str | None
    writes: dict[str, list[str]]
    """node (or task id) -> channels it wrote in the step that produced this checkpoint"""
    next: list[str]
    interrupts: int
    errors: int


def _root_config(thread_id: str, ns: str = "") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}


def _writes_by_task(pending: Sequence[Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for task_id, channel, _value in pending or ():
        if channel.startswith("__") and channel not in ("__interrupt__", "__error__"):
            continue
        out.setdefault(task_id, [])
        if channel not in out[task_id]:
            out[task_id].append(channel)
    return out


@dataclass
class Timeline:
    """One page of a thread's timeline, newest first; ``older`` continues it (``before``)."""

    entries: list[TimelineEntry]
    older: str | None


def timeline(
    saver: Any,
    index: Any,
    thread_id: str,
    ns: str = "",
    limit: int = 100,
    before: str | None = None,
) -> Timeline:
    """The thread's checkpoints newest first (``limit`` of them, older than ``before``),
    each with the writes of the step that produced it."""
    before_config = (
        {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": before}}
        if before
        else None
    )
    # one more than shown: the oldest shown checkpoint's parent holds the writes that made it
    tuples = list(saver.list(_root_config(thread_id, ns), limit=limit + 1, before=before_config))
    ids = [t.config["configurable"]["checkpoint_id"] for t in tuples]
    names = index.task_names(thread_id, ns, ids)
    pending_of = {cid: t.pending_writes for cid, t in zip(ids, tuples, strict=True)}
    out = []
    for cid, tup in list(zip(ids, tuples, strict=True))[:limit]:
        parent = (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        meta = tup.metadata or {}
        writes = {}
        # the parent's saved writes made this checkpoint only if a step of the loop did;
        # an update or fork of the parent did not use them (they made its sibling)
        made_by_step = meta.get("source") == "loop"
        for task, chans in _writes_by_task(
            (pending_of.get(parent) or ()) if made_by_step else ()
        ).items():
            shown = [c for c in chans if not c.startswith("branch:")]
            if shown:  # a task that only routed (a fork's branch write) shows nothing
                writes[names.get(task, task[:8])] = shown
        own = tup.pending_writes or ()
        out.append(
            TimelineEntry(
                checkpoint_id=cid,
                parent_id=parent,
                step=meta.get("step"),
                source=meta.get("source"),
                created_at=tup.checkpoint.get("ts"),
                writes=writes,
                next=pending_nodes(tup.checkpoint),
                interrupts=len(pending_interrupts(own)),
                errors=sum(1 for _t, ch, _v in own if ch == "__error__"),
            )
        )
    older = out[-1].checkpoint_id if len(tuples) > limit and out else None
    return Timeline(out, older)


# --------------------------------------------------------------------------- one checkpoint
@dataclass
class CheckpointView:
    """Everything the thread page shows about one checkpoint."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_id: str | None
    step: Any
    source: Any
    created_at: str | None
    metadata: dict[str, Any]
    values: dict[str, Any]
    diff: list[tuple[str, str, Any, Any]]
    next: list[str]
    interrupts: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    pending_writes: list[dict[str, Any]]


def checkpoint_view(
    saver: Any, index: Any, thread_id: str, checkpoint_id: str | None, ns: str = ""
) -> CheckpointView | None:
    """The checkpoint (latest when ``checkpoint_id`` is None) and its diff against its parent."""
    conf: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    tup = saver.get_tuple({"configurable": conf})
    if tup is None:
        return None
    cid = tup.config["configurable"]["checkpoint_id"]
    parent_id = (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    values = state_values(tup.checkpoint)
    parent_values: dict[str, Any] = {}
    if parent_id:
        parent = saver.get_tuple(tup.parent_config)
        if parent is not None:
            parent_values = state_values(parent.checkpoint)
    names = index.task_names(thread_id, ns, [cid])
    pending = []
    errors = []
    for task_id, channel, value in tup.pending_writes or ():
        node = names.get(task_id, task_id[:8])
        if channel == "__error__":
            errors.append({"task_id": task_id, "node": node, "error": value})
        pending.append({"task_id": task_id, "node": node, "channel": channel, "value": value})
    interrupts = pending_interrupts(tup.pending_writes)
    for item in interrupts:
        item["node"] = names.get(item["task_id"], item["task_id"][:8])
    meta = dict(tup.metadata or {})
    return CheckpointView(
        thread_id=thread_id,
        checkpoint_ns=ns,
        checkpoint_id=cid,
        parent_id=parent_id,
        step=meta.get("step"),
        source=meta.get("source"),
        created_at=tup.checkpoint.get("ts"),
        metadata={k: v for k, v in meta.items() if k not in ("step", "source", "parents")},
        values=values,
        diff=changes(values, parent_values),
        next=pending_nodes(tup.checkpoint),
        interrupts=interrupts,
        errors=errors,
        pending_writes=pending,
    )


def namespaces_of(index: Any, thread_id: str) -> list[str]:
    """The subgraph namespaces of a thread (the root namespace left out)."""
    return [ns for ns in index.namespaces(thread_id) if ns]
