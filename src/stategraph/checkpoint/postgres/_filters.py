"""Metadata as JSONB, and ``list(filter=...)`` turned into bound-parameter SQL.

The exact metadata is stored serialized (``metadata_blob``); the ``metadata`` JSONB
column holds its JSON view, used for filtering (and for people querying the table).
A filter entry goes to SQL only when PostgreSQL decides it exactly as Python's ``==``
would; every other entry is checked in Python on the deserialized metadata. The SQL
text never contains any part of a filter: each entry becomes
``metadata @> %s::jsonb`` with a one-key JSON document bound as the parameter.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

__all__ = ["metadata_json", "filter_clauses"]

_MAX_DEPTH = 32
_EXACT_NUMBER = 2**53
"""Numbers below this magnitude compare in ``numeric`` exactly as in Python (an int
and a float are equal in both or in neither); larger ones are filtered in Python."""


class _NotJson(Exception):
    """Raised inside :func:`_to_json` for a value with no faithful JSONB form."""


def _json_text(value: str) -> str:
    """``value`` if JSONB can hold it (no NUL, no lone surrogate), else raise."""
    if "\x00" in value:
        raise _NotJson
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _NotJson from None
    return str.__str__(value)


def _to_json(value: Any, depth: int = 0) -> Any:
    """Return ``value`` as plain JSON data, or raise :class:`_NotJson`."""
    if depth > _MAX_DEPTH:
        raise _NotJson
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _json_text(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _NotJson
        return float(value)
    if isinstance(value, Decimal):
        # kept as the int or float equal to it, so a filter pushed to SQL still finds it
        if not value.is_finite():
            raise _NotJson
        number = int(value) if value == value.to_integral_value() else float(value)
        if number != value or abs(number) >= _EXACT_NUMBER:
            raise _NotJson
        return number
    if isinstance(value, (list, tuple)):
        return [_to_json(item, depth + 1) for item in value]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _NotJson
            out[_json_text(key)] = _to_json(item, depth + 1)
        return out
    raise _NotJson


def metadata_json(metadata: Mapping[str, Any]) -> str:
    """Return the JSON text of ``metadata``'s JSON view.

    Top-level keys whose value has a faithful JSON form (``None``, bools, ints, finite
    floats, strings without NUL, and lists / string-keyed dicts of those) are kept;
    the others are left out (the serialized copy still has them).
    """
    view: dict[str, Any] = {}
    for key, value in metadata.items():
        try:
            view[_json_text(key)] = _to_json(value)
        except (_NotJson, TypeError):
            continue
    return json.dumps(view, separators=(",", ":"), allow_nan=False)


def _candidates(value: Any) -> list[Any] | None:
    """JSON values that together match exactly what ``== value`` matches, or ``None``
    when SQL cannot decide this value exactly."""
    if value is None:
        return [None]
    if isinstance(value, bool):
        return [value, int(value)]
    if isinstance(value, str):
        try:
            return [_json_text(value)]
        except _NotJson:
            return None
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if abs(value) >= _EXACT_NUMBER:
            return None
        plain = int(value) if isinstance(value, int) else float(value)
        # Python: 1 == 1.0 == True and 0 == 0.0 == False.
        return [plain, plain == 1] if plain in (0, 1) else [plain]
    return None


def filter_clauses(filter: Mapping[str, Any] | None) -> tuple[list[str], list[Any], bool]:
    """Return ``(sql_conditions, params, exact)`` for a metadata ``filter``.

    ``exact`` is true when every entry went to SQL, so SQL alone decides the match
    (and may apply ``LIMIT``); otherwise the caller checks the rest in Python.
    """
    clauses: list[str] = []
    params: list[Any] = []
    exact = True
    for key, value in (filter or {}).items():
        candidates = _candidates(value)
        try:
            safe_key = _json_text(key) if isinstance(key, str) else None
        except _NotJson:
            safe_key = None
        if candidates is None or safe_key is None:
            exact = False
            continue
        docs = [json.dumps({safe_key: c}, separators=(",", ":")) for c in candidates]
        clauses.append("(" + " OR ".join(["metadata @> %s::jsonb"] * len(docs)) + ")")
        params.extend(docs)
    return clauses, params, exact
