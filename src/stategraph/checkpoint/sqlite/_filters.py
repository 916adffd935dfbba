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
from decimal import Decimal
from typing import Any

__all__ = ["metadata_json", "filter_clauses"]

_SAFE_KEY = re.compile(r"^[A-Za-z0-9_\-]+$")
_INT64 = (-(2**63), 2**63 - 1)


def _sql_scalar(value: Any) -> bool:
    """Whether SQLite's JSON functions compare ``value`` exactly as Python's ``==``.

    Strings holding NUL are not: ``json_extract`` stops at ``\\u0000``, so
    ``"alice\\x00mallory"`` would compare equal to ``"alice"``.
    """
    if isinstance(value, bool):
        return True
    if isinstance(value, str):
        if "\x00" in value:
            return False
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


def _exact_number(value: Decimal) -> int | float | None:
    """The int or float equal to a ``Decimal`` (so SQL compares it as Python does)."""
    if not value.is_finite():
        return None
    if value == value.to_integral_value():
        number: int | float = int(value)
    else:
        number = float(value)
    return number if number == value and _sql_scalar(number) else None


def metadata_json(metadata: Mapping[str, Any]) -> str:
    """Return the JSON text of ``metadata``'s top-level scalar values (for filters).

    A ``Decimal`` is kept as the int or float equal to it, when there is one: a
    value left out here could otherwise never match a filter pushed down to SQL.
    """
    view: dict[str, Any] = {}
    for key, value in metadata.items():
        if isinstance(value, Decimal):
            value = _exact_number(value)
            if value is not None:
                view[str(key)] = value
        elif _sql_scalar(value):
            view[str(key)] = value
    return json.dumps(view, separators=(",", ":"))


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
