"""The machinery of causes.py: a :class:`Cause`, and neutralizing recorded lines.

Recorded parts are lists of JSON lines (see ``compare.parts``); a cause's rewrite works
on the decoded items, then the lines are re-encoded, ids relabelled in order of first
appearance, and (for coarse causes) flattened.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Cause", "Item", "Line", "Rewrite", "neutralize"]

Item = Any
Line = str
Rewrite = Callable[[str, Item, str, dict[str, Any]], Item | None]


@dataclass(frozen=True)
class Cause:
    """One known difference: its key, its description and how to neutralize it."""

    key: str
    title: str
    rewrite: Rewrite | None = None
    """``rewrite(part, item, side, ctx)`` -> the item with the difference removed, or
    ``None`` to drop it; ``side`` is "langgraph" or "stategraph"; ``ctx`` is a dict
    kept for one part of one side (to remember dropped runs)."""
    flat: tuple[str, ...] = ()
    """Parts whose tree structure, run order within a step and id links this cause
    makes meaningless: they are compared flattened, sorted per step, ids masked."""
    per_step_ids: bool = False
    """Ids are labelled per step: reusing an id across runs is not a difference."""
    scan: Callable[[str, list[Any], str, dict[str, Any]], None] | None = None
    """Optional first pass over all items of a part (fills ``ctx`` for ``rewrite``)."""
    swallows: str | None = None
    """A text in stategraph's observations meaning the whole run diverged for this
    cause (e.g. it failed): the scenario is then explained by it alone."""
    runtime: bool = True
    """Whether the cause lives in the runtime/observers (diagnosed in RUNTIME_DIFFS.md)
    rather than being a documented, deliberate difference."""


# ---------------------------------------------------------------- line plumbing

_LABEL = re.compile(r"#\d+")


def _lines_to_items(lines: list[Line]) -> Iterator[tuple[str, Any]]:
    for line in lines:
        if line.startswith("-- "):
            yield "", line
            continue
        stripped = line.lstrip(" ")
        indent = line[: len(line) - len(stripped)]
        try:
            item = json.loads(stripped)
        except ValueError:
            yield "", line
            continue
        if not indent and isinstance(item, dict) and "run_type" in item:
            item = {**item, "~root": True}
        yield indent, item


def _items_to_lines(items: list[tuple[str, Any]]) -> list[Line]:
    out = []
    for indent, item in items:
        if isinstance(item, str) and item.startswith("-- "):
            out.append(item)
            continue
        if isinstance(item, dict):
            item = {k: v for k, v in item.items() if k != "~root"}
        out.append(indent + json.dumps(item, sort_keys=True, ensure_ascii=False))
    return out


def _relabel(lines: list[Line], per_step: bool) -> list[Line]:
    """Labels renumbered in order of first appearance (after items were dropped)."""
    table: dict[str, str] = {}

    def new(match: re.Match[str]) -> str:
        return table.setdefault(match.group(0), f"#{len(table) + 1}")

    out = []
    for line in lines:
        if line.startswith("-- "):
            if per_step:
                table = {}
            out.append(line)
        else:
            out.append(_LABEL.sub(new, line))
    return out


def _flatten(lines: list[Line]) -> list[Line]:
    out: list[Line] = []
    segment: list[Line] = []
    for line in [*lines, "-- end"]:
        if line.startswith("-- "):
            out.extend(sorted(segment))
            segment = []
            out.append(line)
        else:
            segment.append(_LABEL.sub("#", line.lstrip(" ")))
    return out[:-1]


def neutralize(part: str, lines: list[Line], side: str, causes: list[Cause]) -> list[Line]:
    """``lines`` of one part with each of ``causes`` neutralized."""
    if not causes:
        return lines
    items = list(_lines_to_items(lines))
    for cause in causes:
        if cause.rewrite is None:
            continue
        ctx: dict[str, Any] = {}
        if cause.scan is not None:
            cause.scan(part, [item for _, item in items], side, ctx)
        kept: list[tuple[str, Any]] = []
        for indent, item in items:
            if isinstance(item, str):
                kept.append((indent, item))
                continue
            new = cause.rewrite(part, item, side, ctx)
            if new is not None:
                kept.append((indent, new))
        items = kept
    out = _relabel(_items_to_lines(items), any(c.per_step_ids for c in causes))
    if any(part in c.flat for c in causes):
        out = _flatten(out)
    return out


# ---------------------------------------------------------------- helpers


def _walk(value: Any, fn: Callable[[Any], Any]) -> Any:
    value = fn(value)
    if isinstance(value, dict):
        return {k: _walk(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, fn) for v in value]
    return value


def _sub_text(value: Any, pattern: re.Pattern[str], repl: str) -> Any:
    return _walk(value, lambda v: pattern.sub(repl, v) if isinstance(v, str) else v)


def _metadata(item: Any) -> dict[str, Any]:
    meta = item.get("metadata") if isinstance(item, dict) else None
    return meta if isinstance(meta, dict) else {}


def _drop_parents(item: dict[str, Any], dropped: set[str]) -> dict[str, Any]:
    parents = item.get("parent_ids")
    if isinstance(parents, list) and dropped:
        item = {**item, "parent_ids": [p for p in parents if p not in dropped]}
    return item


def _is_run(item: Any, part: str) -> bool:
    return isinstance(item, dict) and (
        (part == "events" and "event" in item) or (part == "tracer" and "run_type" in item)
    )
