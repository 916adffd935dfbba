"""Metadata filtering for the SQLite savers, safe against SQL injection.

Metadata is stored twice: serialized (the source of truth) and as JSON text holding
only its top-level scalar values (``metadata_json``). A ``list(filter=...)`` entry is
pushed down to SQL as ``json_extract(metadata_json, ?) = ?`` only when its key matches
``^[A-Za-z0-9_-]+$`` and its value is a plain scalar; the JSON path and the value are
bound parameters, never spliced into the statement. Every filter entry is also checked
in Python on the deserialized metadata, so SQL only narrows the candidates and a key
such as ``"x') OR 1=1 --"`` simply matches no checkpoint.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["metadata_json", "filter_clauses"]

_SAFE_KEY = re.compile(r"^[A-Za-z0-9_\-]+$")
_INT64 = (-(2**63), 2**63 - 1)


def _sql_scalar(value: Any) -> bool:
    """Whether SQLite's JSON functions compare ``value`` exactly as Python's ``==``."""
    if isinstance(value, bool):
        return True
    if isinstance(value, str):
        try:
            value.encode("utf-8")  # lone surrogates cannot be bound as SQL text
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, int):
        return _INT64[0] <= value <= _INT64[1]
    if isinstance(value, float):
        return math.isfinite(value)
    return False


def metadata_json(metadata: Mapping[str, Any]) -> str:
    """Return the JSON text of ``metadata``'s top-level scalar values (for filters)."""
    return json.dumps(
        {str(k): v for k, v in metadata.items() if _sql_scalar(v)},
        separators=(",", ":"),
    )


def filter_clauses(
    filter: Mapping[str, Any] | None, json_available: bool
) -> tuple[list[str], list[Any], bool]:
    """Return ``(sql_conditions, params, exact)`` for a metadata ``filter``.

    ``exact`` is true when every entry was pushed down, so SQL alone decides the
    match (and may apply ``LIMIT``); otherwise the caller filters the rest in Python.
    """
    clauses: list[str] = []
    params: list[Any] = []
    exact = True
    for key, value in (filter or {}).items():
        if json_available and isinstance(key, str) and _SAFE_KEY.match(key) and _sql_scalar(value):
            clauses.append("json_extract(metadata_json, ?) = ?")
            params.append(f'$."{key}"')
            params.append(value)
        else:
            exact = False
    return clauses, params, exact
