"""Bringing LangGraph's saved threads into a stategraph saver.

:func:`import_langgraph` reads a LangGraph checkpoint database (a SQLite file written
by ``langgraph-checkpoint-sqlite``, or a PostgreSQL database written by
``langgraph-checkpoint-postgres``; msgpack and old JSON values), loads every value with
an allow-list decoder (LangChain messages become stategraph messages; LangGraph's
``Interrupt``/``Send``/``Command`` become stategraph's; the application's classes are
rebuilt when passed in ``allowed_types``; nothing is imported by name, pickle is
refused) and writes the threads into any stategraph saver, keeping thread ids,
checkpoint ids and parents, namespaces (subgraphs), metadata, pending writes and
pending interrupts. A ported application then resumes its old threads.

The source is opened read-only and never modified. The console command
``stategraph import-langgraph SOURCE TARGET`` does the same from a shell.

Example::

    from stategraph.checkpoint.langgraph_import import import_langgraph
    from stategraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string("stategraph.sqlite") as saver:
        report = import_langgraph("langgraph.sqlite", saver)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["import_langgraph", "ImportReport", "LangGraphDatabaseError"]


def __getattr__(name: str) -> Any:
    if name == "LangGraphDatabaseError":
        from stategraph.checkpoint.langgraph_import._guard import LangGraphDatabaseError

        return LangGraphDatabaseError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class ImportReport:
    """What :func:`import_langgraph` copied."""

    threads: list[str] = field(default_factory=list)
    """Thread ids, in the order they were imported."""
    checkpoints: int = 0
    """Checkpoints written (all namespaces)."""
    writes: int = 0
    """Pending writes written."""


def _version(value: Any) -> str:
    """A LangGraph channel version as a stategraph string version (same order)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"Unsupported LangGraph channel version {value!r}.")
    return f"{int(value):032}.{'0' * 16}"


def _checkpoint(record: Any) -> dict[str, Any]:
    body = record.checkpoint
    if body.get("pending_sends"):
        raise ValueError(
            f"Checkpoint {record.checkpoint_id} of thread {record.thread_id!r} uses LangGraph's "
            f"old format (v{body.get('v')}) with pending sends, which cannot be imported; "
            f"resume that thread with LangGraph 0.3+ once to rewrite it."
        )
    return {
        "v": 4,
        "id": record.checkpoint_id,
        "ts": body.get("ts") or "",
        "channel_values": dict(body.get("channel_values") or {}),
        "channel_versions": {
            k: _version(v) for k, v in (body.get("channel_versions") or {}).items()
        },
        "versions_seen": {
            node: {k: _version(v) for k, v in (seen or {}).items()}
            for node, seen in (body.get("versions_seen") or {}).items()
        },
        "updated_channels": body.get("updated_channels"),
    }


_PULL_PREFIX = "~__pregel_pull, "
_NS_SEP = "|"


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

    def learn(self, record: Any) -> None:
        """Compute the new ids of ``record``'s pull tasks and of their interrupts."""
        step = record.metadata.get("step")
        ns = self.namespace(record.checkpoint_ns)
        graph = self._graph_for(ns)
        if graph is None or not isinstance(step, int):
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


def _write_thread(records: list[Any], saver: Any, graph: Any, report: ImportReport) -> None:
    """Write one thread's checkpoints (parents first) and pending writes."""
    from stategraph.checkpoint.base import WRITES_IDX_MAP

    rekey = _Rekey(graph) if graph is not None else None
    if rekey is not None:
        # outer namespaces first: a subgraph's namespace names its parent's task
        for record in sorted(
            records, key=lambda r: r.checkpoint_ns.count(_NS_SEP) + bool(r.checkpoint_ns)
        ):
            rekey.learn(record)
    report.threads.append(records[0].thread_id)
    for record in records:
        ns = rekey.namespace(record.checkpoint_ns) if rekey else record.checkpoint_ns
        conf: dict[str, Any] = {"thread_id": record.thread_id, "checkpoint_ns": ns}
        if record.parent_id:
            conf["checkpoint_id"] = record.parent_id
        checkpoint = _checkpoint(record)
        saved = saver.put(
            {"configurable": conf},
            checkpoint,
            record.metadata,
            dict(checkpoint["channel_versions"]),
        )
        report.checkpoints += 1
        by_task: dict[tuple[str, str], list[Any]] = {}
        for write in record.writes:
            task_id = rekey.tasks.get(write.task_id, write.task_id) if rekey else write.task_id
            if (
                rekey is not None
                and write.channel == "__interrupt__"
                and isinstance(write.value, list)
            ):
                write.value = [rekey.interrupt(item) for item in write.value]
            by_task.setdefault((task_id, write.task_path), []).append(write)
        for (task_id, task_path), items in by_task.items():
            items.sort(key=lambda w: w.idx)
            regular = [(w.channel, w.value) for w in items if w.channel not in WRITES_IDX_MAP]
            special = [(w.channel, w.value) for w in items if w.channel in WRITES_IDX_MAP]
            for group in (regular, special):
                if group:
                    saver.put_writes(saved, group, task_id, task_path)
                    report.writes += len(group)


def _is_postgres(source: str | Path) -> bool:
    text = str(source)
    return text.startswith(("postgresql://", "postgres://")) or (
        "=" in text and not Path(text).exists()
    )


def import_langgraph(
    source: str | Path,
    saver: Any,
    *,
    threads: Sequence[str] | None = None,
    allowed_types: Iterable[type] = (),
    strict: bool = False,
    graph: Any = None,
) -> ImportReport:
    """Copy LangGraph's threads from ``source`` into the stategraph ``saver``.

    Args:
        source: a LangGraph SQLite file path, or a PostgreSQL connection string
            (``postgresql://...``; the schema of its ``search_path``).
        saver: any stategraph checkpoint saver (its sync ``put``/``put_writes``).
        threads: only these thread ids (default: every thread).
        allowed_types: the application's classes stored in the state (dataclasses,
            pydantic models, enums...), to rebuild; others load as plain data.
        strict: raise instead of loading a class that is not allowed as plain data.
        graph: the application's compiled stategraph graph. With it, the pending writes
            of tasks that finished before a pause, the ids of pending interrupts and the
            namespaces of subgraph checkpoints are re-keyed with the task ids stategraph
            computes: resuming does not run finished tasks again, and a thread paused
            inside a subgraph resumes there. Without it, top-level pauses resume with
            the same result (finished tasks run once more), but a thread paused inside
            a subgraph pauses again.

    Checkpoints already in ``saver`` with the same ids are overwritten, so running
    the import again is harmless. Raises ``DeserializationError`` for a value that
    cannot be loaded safely (a pickle, a malformed payload), before writing that
    thread's checkpoint.
    """
    from stategraph.checkpoint.langgraph_import._decode import LangGraphDecoder
    from stategraph.checkpoint.langgraph_import._read import read_postgres, read_sqlite

    decoder = LangGraphDecoder(allowed_types, strict=strict)
    records = (
        read_postgres(str(source), decoder, threads)
        if _is_postgres(source)
        else read_sqlite(source, decoder, threads)
    )
    report = ImportReport()
    batch: list[Any] = []
    for record in records:
        if batch and batch[0].thread_id != record.thread_id:
            _write_thread(batch, saver, graph, report)
            batch = []
        batch.append(record)
    if batch:
        _write_thread(batch, saver, graph, report)
    return report
