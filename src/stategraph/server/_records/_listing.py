"""The search of a records table, written once: a ``WHERE`` of the caller's conditions,
the asked sort (a sortable column, ``created_at`` by default, newest first unless
``"asc"``, ties broken by the key), JSON containment filters and an auth predicate
applied to the rows, then one page and the total count."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from typing_extensions import TypedDict

from stategraph.server._db import Op
from stategraph.server._records._filters import contains

__all__ = ["Listing", "Page", "Found"]

Found = tuple[list[dict[str, Any]], int]
"""A search's result: the page of records (JSON objects) and the total count."""


class Page(TypedDict, total=False):
    """The keyword arguments every search takes besides its filters."""

    limit: int
    """The page's size (10 unless told)."""
    offset: int
    """Where the page starts (0 unless told)."""
    sort_by: str | None
    """A sortable column (``created_at`` unless told)."""
    sort_order: str | None
    """``"asc"``, or newest first."""
    allowed: Callable[[dict[str, Any]], bool] | None
    """An extra predicate on the records (the caller's auth filters)."""


class Listing(NamedTuple):
    """A table as its search reads it."""

    table: str
    columns: str
    key: str
    sortable: tuple[str, ...]
    to_json: Callable[[Any], dict[str, Any]]

    def page(
        self,
        where: list[str],
        params: list[Any],
        contained: Mapping[str, Mapping[str, Any] | None],
        *,
        limit: int = 10,
        offset: int = 0,
        sort_by: str | None = None,
        sort_order: str | None = None,
        allowed: Callable[[dict[str, Any]], bool] | None = None,
    ) -> Op[Found]:
        """The rows matching ``where`` (``params`` for its ``?``), sorted, whose fields
        contain ``contained`` (a field: what it must contain) and that ``allowed``
        accepts: one page and the total count (see :class:`Page`)."""
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        column = sort_by if sort_by in self.sortable else "created_at"
        direction = "ASC" if (sort_order or "").lower() == "asc" else "DESC"
        rows = yield (
            f"SELECT {self.columns} FROM {self.table}{clause}"
            f" ORDER BY {column} {direction}, {self.key}",
            tuple(params),
        )
        found = [self.to_json(r) for r in rows]
        for field, wanted in contained.items():
            if wanted:
                found = [x for x in found if contains(x[field], wanted)]
        if allowed is not None:
            found = [x for x in found if allowed(x)]
        return found[offset : offset + limit], len(found)
