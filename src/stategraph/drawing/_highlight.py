"""What a drawing marks for a saved state: the nodes that run next, pending interrupts."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Highlight", "highlight_from_state"]


@dataclass
class Highlight:
    """Node ids that run next, and per node id the interrupts it waits on."""

    next: set[str] = field(default_factory=set)
    interrupts: dict[str, list[str]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.next or self.interrupts)


def _summary(value: Any, limit: int = 60) -> str:
    try:
        text = value if isinstance(value, str) else json.dumps(value, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _collect(state: Any, prefix: str, out: Highlight) -> None:
    names_next = set(getattr(state, "next", ()) or ())
    for name in names_next:
        out.next.add(prefix + name)
    for task in getattr(state, "tasks", ()) or ():
        node_id = prefix + task.name
        # a task of the step that already finished (its writes saved while a sibling
        # failed or was interrupted) is listed in ``tasks`` but does not run next
        if task.name in names_next or task.interrupts:
            out.next.add(node_id)
        waiting = [_summary(getattr(i, "value", i)) for i in task.interrupts or ()]
        if waiting:
            out.interrupts[node_id] = waiting
        child = getattr(task, "state", None)
        if child is not None and hasattr(child, "tasks"):
            _collect(child, node_id + ":", out)


def highlight_from_state(state: Any) -> Highlight | None:
    """The :class:`Highlight` of a ``StateSnapshot`` (None when there is nothing to mark).

    Subgraph snapshots (``get_state(config, subgraphs=True)``) mark the nodes inside
    subgraphs drawn with ``xray``.
    """
    if state is None:
        return None
    if not hasattr(state, "next") or not hasattr(state, "tasks"):
        raise TypeError(
            f"state= expects a StateSnapshot (from graph.get_state(config)), got "
            f"{type(state).__name__}."
        )
    out = Highlight()
    _collect(state, "", out)
    return out
