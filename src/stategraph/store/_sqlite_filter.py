"""A conservative SQL pre-filter for :class:`~stategraph.store.sqlite.SqliteStore` searches.

The exact filter semantics live in :mod:`stategraph.store._filters` and are always
applied in Python. This module only narrows the rows fetched, with conditions that
are *implied* by the Python filter: every row the Python filter accepts also passes
the SQL condition, so pushing it down never changes a result, only the speed.

Safety: the SQL text is fixed (``json_extract(value, ?) <op> ?``); filter keys reach
SQLite only as bound JSON-path parameters and filter values only as bound values.
Conditions are generated only where the implication is certain:

* keys made of word characters and ``-`` (which JSON never escapes), with no
  all-digit segment (``tags.0`` may index a list in Python);
* a dotted key also tries the literal key (``$."a.b"``), as Python does;
* equality with a string, a finite number or a boolean, and ordering operators with
  a string or a finite number. ``None``, lists, dicts, ``$ne`` and nested filters are
  left to Python.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["sql_prefilter"]

_SAFE_SEGMENT = re.compile(r"[\w\- ]+")
_SQL_OPS = {"$eq": "=", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
_INT64 = 2**63


def _paths(key: str) -> list[str] | None:
    parts = key.split(".")
    for part in parts:
        if not _SAFE_SEGMENT.fullmatch(part) or part.lstrip("-").isdigit():
            return None
    literal = f'$."{key}"'
    if len(parts) == 1:
        return [literal]
    return [literal, "$" + "".join(f'."{p}"' for p in parts)]


def _bindable(operand: Any, *, ordering: bool) -> bool:
    if isinstance(operand, str):
        return "\x00" not in operand  # SQLite's JSON functions stop at a NUL: Python only
    if isinstance(operand, bool):
        return not ordering
    if isinstance(operand, int):
        return -_INT64 <= operand < _INT64
    if isinstance(operand, float):
        return math.isfinite(operand)
    return False


def sql_prefilter(filter: Mapping[str, Any] | None) -> tuple[str, list[Any]]:
    """An SQL condition implied by ``filter`` and its parameters (``""`` if none)."""
    if not filter:
        return "", []
    clauses: list[str] = []
    params: list[Any] = []
    for key, cond in filter.items():
        paths = _paths(key) if isinstance(key, str) else None
        if paths is None:
            continue
        if isinstance(cond, Mapping):
            if not all(isinstance(op, str) and op.startswith("$") for op in cond):
                continue  # nested filter: Python only
            terms = [(op, operand) for op, operand in cond.items() if op in _SQL_OPS]
        else:
            terms = [("$eq", cond)]
        for op, operand in terms:
            if not _bindable(operand, ordering=op != "$eq"):
                continue
            sql_op = _SQL_OPS[op]
            alternatives = []
            for path in paths:
                alternatives.append(f"json_extract(value, ?) {sql_op} ?")
                params += [path, operand]
            clauses.append("(" + " OR ".join(alternatives) + ")")
    return " AND ".join(clauses), params
