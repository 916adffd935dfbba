"""Writing planned threads into a stategraph saver: all of them, or none.

Before the first write, each thread is looked up in the target:

* not there: it is written;
* there with the source's last checkpoint (an earlier import of the same thread): it
  is skipped and reported in :attr:`ImportReport.skipped`, never touched;
* there without it (an earlier import that stopped part-way, a LangGraph thread that
  went on since, or another thread with the same id): nothing is written and
  :class:`~._errors.LangGraphTargetError` names the threads.

A thread's last checkpoint is written last (its pending writes just before it), so its
presence in the target means the thread was written whole. When a write fails (the
target refuses a value, the disk is full, the connection drops, Ctrl-C), the threads
written so far, which were not in the target before, are deleted again
(``undo=True``), or the caller rolls its transaction back (``undo=False``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from stategraph.checkpoint.langgraph_import._errors import LangGraphTargetError, Where
from stategraph.checkpoint.langgraph_import._plan import Put, Survey, ThreadPlan
from stategraph.checkpoint.langgraph_import._report import ImportReport

__all__ = ["ImportReport", "write_threads"]


def _config(put: Put, checkpoint_id: str | None) -> dict[str, Any]:
    conf: dict[str, Any] = {"thread_id": put.thread_id, "checkpoint_ns": put.checkpoint_ns}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def _state_in_target(saver: Any, thread_id: str, head: tuple[str, str]) -> str:
    """``"new"``, ``"imported"`` (its last checkpoint is there) or ``"other"``."""
    try:
        any_checkpoint = next(
            iter(saver.list({"configurable": {"thread_id": thread_id}}, limit=1)), None
        )
        if any_checkpoint is None:
            return "new"
        ns, checkpoint_id = head
        found = saver.get_tuple(
            {
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": ns,
                    "checkpoint_id": checkpoint_id,
                }
            }
        )
    except Exception as exc:
        raise LangGraphTargetError(
            f"Cannot read thread {thread_id!r} in the target to check it is not there "
            f"yet: {type(exc).__name__}: {exc}. Nothing was imported.",
            Where(thread_id),
        ) from exc
    return "other" if found is None else "imported"


def _check_target(saver: Any, found: Survey, report: ImportReport) -> set[str]:
    """The threads to write; refuse (before any write) threads the target holds otherwise."""
    todo: set[str] = set()
    clashes = []
    for thread_id, head in found.heads.items():
        state = _state_in_target(saver, thread_id, head)
        if state == "new":
            todo.add(thread_id)
        elif state == "imported":
            report.skipped.append(thread_id)
        else:
            clashes.append(thread_id)
    if clashes:
        names = ", ".join(repr(t) for t in clashes[:10]) + (" ..." if len(clashes) > 10 else "")
        raise LangGraphTargetError(
            f"{len(clashes)} thread(s) are already in the target without the source's last "
            f"checkpoint: {names} (an earlier import stopped part-way, the LangGraph thread "
            "went on since, or another thread has that id). Nothing was imported: delete "
            "them from the target (saver.delete_thread) to import them again, or leave them "
            "out (threads= / --thread).",
            Where(clashes[0]),
        )
    return todo


def _write_put(saver: Any, put: Put, *, head: bool) -> int:
    """Write one checkpoint and its pending writes; returns the number of writes.

    The head (a thread's last checkpoint) gets its writes first: once it is in the
    target, the whole thread is.
    """
    count = 0
    config = _config(put, put.parent_id)
    versions = dict(put.checkpoint["channel_versions"])
    if head:
        saved = _config(put, put.checkpoint_id)
        for task_id, task_path, items in put.writes:
            saver.put_writes(saved, items, task_id, task_path)
            count += len(items)
        saver.put(config, put.checkpoint, put.metadata, versions)
        return count
    saved = saver.put(config, put.checkpoint, put.metadata, versions)
    for task_id, task_path, items in put.writes:
        saver.put_writes(saved, items, task_id, task_path)
        count += len(items)
    return count


def _undo(saver: Any, written: list[str]) -> str:
    """Delete the threads written; what to tell the user."""
    failed = []
    for thread_id in written:
        try:
            saver.delete_thread(thread_id)
        except Exception as exc:
            failed.append(f"{thread_id!r} ({type(exc).__name__}: {exc})")
    if failed:
        return (
            f"Removing the {len(written)} thread(s) written failed for {', '.join(failed)}: "
            "delete them from the target by hand."
        )
    return f"Nothing was imported: the {len(written)} thread(s) written were removed again."


def write_threads(
    saver: Any, found: Survey, plans: Iterable[ThreadPlan], *, undo: bool = True
) -> ImportReport:
    """Write ``plans`` (of the checked source ``found``) into ``saver``: every thread not
    there yet, or (on failure) none.

    With ``undo=False`` a failure leaves what was written to the caller's transaction,
    which it must roll back.
    """
    report = ImportReport()
    todo = _check_target(saver, found, report)
    written: list[str] = []
    where = Where()
    try:
        for plan in plans:
            if plan.thread_id not in todo:
                continue
            written.append(plan.thread_id)
            for n, put in enumerate(plan.puts):
                where = put.where
                report.writes += _write_put(saver, put, head=n == len(plan.puts) - 1)
                report.checkpoints += 1
            report.threads.append(plan.thread_id)
    except BaseException as exc:
        after = (
            _undo(saver, written)
            if undo
            else "Nothing was imported: the import's transaction is rolled back."
        )
        if not isinstance(exc, Exception):  # Ctrl-C, exit: undone, then let it go on
            raise
        raise LangGraphTargetError(
            f"Writing {where} to the target failed: {type(exc).__name__}: {exc}. {after}",
            where,
        ) from exc
    return report
