"""Refusing a ``Command(resume={id: value})`` that answers no waiting interrupt.

Without this check such a resume returned normally and left the thread waiting, the
answer silently lost (LangGraph behaves so; see docs/differences.md). It runs before
anything is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from stategraph.constants import INTERRUPT
from stategraph.errors import UnknownInterruptError
from stategraph.pregel._task import interrupt_id

__all__ = ["check_resume_ids"]

# a task asks at most this many questions before the first-id lookup gives up
_MAX_QUESTIONS = 16


def check_resume_ids(
    resume: Mapping[str, Any],
    waiting: Mapping[str, Any],
    pending_writes: Iterable[tuple[str, str, Any]],
    node_names: Iterable[str],
) -> None:
    """Raise :class:`UnknownInterruptError` when ``resume`` names no waiting interrupt.

    ``waiting`` maps the ids of the interrupts waiting on this graph to them. A task's
    first interrupt id also answers the task's later questions, so those ids count as
    waiting too; when a waiting interrupt comes from a subgraph (its task cannot be
    told from here), unknown ids are left for the subgraph to match.
    """
    pending = ", ".join(f"{iid} ({intr.value!r})" for iid, intr in waiting.items())
    if not resume:
        raise UnknownInterruptError(
            f"Command(resume={{}}) answers no interrupt. Waiting: {pending}. Resume with "
            "Command(resume={interrupt_id: value}).",
            reason="empty_map",
            pending_ids=list(waiting),
        )
    firsts = _first_ids(waiting, pending_writes, list(node_names))
    if firsts is None:
        return
    unknown = [k for k in resume if k not in waiting and k not in firsts]
    if unknown:
        raise UnknownInterruptError(
            f"Command(resume=...) names interrupt id(s) {', '.join(unknown)} that are not "
            f"waiting on this thread. Waiting: {pending}. Answer those ids (they are on "
            "the state's interrupts, or the run's __interrupt__ output).",
            reason="not_pending",
            interrupt_ids=unknown,
            pending_ids=list(waiting),
        )


def _first_ids(
    waiting: Mapping[str, Any],
    pending_writes: Iterable[tuple[str, str, Any]],
    node_names: list[str],
) -> set[str] | None:
    """The first-interrupt id of each task a waiting interrupt belongs to, found by
    matching the waiting ids against this graph's tasks; ``None`` if one is not found."""
    firsts: set[str] = set()
    for tid, chan, val in pending_writes:
        if chan != INTERRUPT:
            continue
        for iid in (i.id for i in val if i.id in waiting):
            for name in node_names:
                ns = f"{name}:{tid}"
                if any(interrupt_id(ns, k) == iid for k in range(_MAX_QUESTIONS)):
                    firsts.add(interrupt_id(ns, 0))
                    break
            else:
                return None
    return firsts
