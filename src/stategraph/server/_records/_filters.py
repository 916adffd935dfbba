"""Searching records: JSON containment (``@>`` of PostgreSQL's jsonb), used to filter by
metadata and values, and the sorted SELECT of a search."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["contains", "sorted_select", "page"]


def contains(haystack: Any, needle: Any) -> bool:
    """Whether ``needle`` is contained in ``haystack``: every key of a needle object
    is in the haystack object with a containing value; every element of a needle array
    is contained in some element of the haystack array; scalars are equal."""
    if isinstance(needle, Mapping):
        if not isinstance(haystack, Mapping):
            return False
        return all(k in haystack and contains(haystack[k], v) for k, v in needle.items())
    if isinstance(needle, list):
        if not isinstance(haystack, list):
            return False
        return all(any(contains(h, n) for h in haystack) for n in needle)
    if isinstance(needle, bool) or isinstance(haystack, bool):
        return type(needle) is type(haystack) and needle == haystack
    return bool(needle == haystack)


def sorted_select(
    columns: str,
    table: str,
    where: Sequence[str],
    sortable: Sequence[str],
    sort_by: str | None,
    sort_order: str | None,
    key: str,
) -> str:
    """``SELECT columns FROM table`` with the ``where`` conditions (all of them), ordered
    by ``sort_by`` when it is one of ``sortable`` (else ``created_at``), newest first
    unless ``sort_order`` is ``"asc"``, ties broken by the ``key`` column."""
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    column = sort_by if sort_by in sortable else "created_at"
    order = "ASC" if (sort_order or "").lower() == "asc" else "DESC"
    return f"SELECT {columns} FROM {table}{clause} ORDER BY {column} {order}, {key}"


def page(
    found: list[dict[str, Any]],
    metadata: Mapping[str, Any] | None,
    allowed: Callable[[dict[str, Any]], bool] | None,
    offset: int,
    limit: int,
) -> tuple[list[dict[str, Any]], int]:
    """The records of ``found`` whose metadata contains ``metadata`` and that pass
    ``allowed`` (the auth filters): the page at ``offset`` and their total count."""
    if metadata:
        found = [r for r in found if contains(r["metadata"], metadata)]
    if allowed is not None:
        found = [r for r in found if allowed(r)]
    return found[offset : offset + limit], len(found)
