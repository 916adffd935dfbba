"""Metadata storage and filtering for the SQLite savers, safe against SQL injection.

``metadata_json`` holds the JSON text of the metadata's top-level scalar values and of
its string-to-string maps (``parents``). When that text says all of the metadata
exactly (the usual ``source``/``step``/``parents``), it is the only copy: the row's
``metadata_type`` is :data:`JSON_METADATA` and ``metadata`` is empty. Otherwise
``metadata`` holds the serialized metadata (the source of truth) as well.

A ``list(filter=...)`` entry is pushed down to SQL as ``json_extract(metadata_json, ?)
= ?`` only when its key matches ``^[A-Za-z0-9_-]+$`` and its value is a plain scalar
(and the stored value must be a scalar too: a map's JSON text never matches); the
JSON path and the value are bound parameters, never spliced into the statement. Every
filter entry is also checked in Python on the deserialized metadata, so SQL only
narrows the candidates and a key such as ``"x') OR 1=1 --"`` simply matches no
checkpoint.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

__all__ = ["JSON_METADATA", "metadata_json", "load_metadata", "filter_clauses"]

JSON_METADATA = ""
"""``metadata_type`` of a row whose metadata is its ``metadata_json`` text alone: no
serializer's tag (the metadata was not serialized), and the shortest there is."""

_ENCODER = json.JSONEncoder(separators=(",", ":"))
"""One compact encoder for every checkpoint (``json.dumps`` with ``separators`` makes
a new one per call)."""
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


def _str_map(value: Any) -> bool:
    """Whether ``value`` is a dict of strings to strings that JSON gives back exactly
    (and SQL reads as it is: see :func:`_sql_scalar`)."""
    return type(value) is dict and all(
        type(k) is str and type(v) is str and _sql_scalar(k) and _sql_scalar(v)
        for k, v in value.items()
    )


def metadata_json(metadata: Mapping[str, Any]) -> tuple[str, bool]:
    """Return the JSON text of ``metadata``'s top-level scalar values and string maps
    (for filters), and whether that text gives back all of ``metadata`` exactly.

    A ``Decimal`` is kept as the int or float equal to it, when there is one: a
    value left out here could otherwise never match a filter pushed down to SQL.
    Subclasses (an ``IntEnum``, a ``str`` enum) are kept for filters but make the
    text inexact, as do keys that are not strings.
    """
    view: dict[str, Any] = {}
    exact = True
    for key, value in metadata.items():
        if isinstance(value, Decimal):
            value = _exact_number(value)
            exact = False
            if value is not None:
                view[str(key)] = value
        elif _sql_scalar(value):
            view[str(key)] = value
            exact = exact and type(value) in (str, int, float, bool) and type(key) is str
        elif _str_map(value):
            view[str(key)] = value
            exact = exact and type(key) is str
        else:
            exact = False
    return _ENCODER.encode(view), exact


def load_metadata(loads: Callable[[tuple[str, Any]], Any], mtype: str, stored: Any) -> Any:
    """The metadata of a row read with the savers' column list: ``stored`` is the
    ``metadata_json`` text when ``mtype`` is :data:`JSON_METADATA`, else the serialized
    metadata that ``loads`` (the serializer's ``loads_typed``) reads."""
    if mtype == JSON_METADATA:
        return json.loads(stored)
    return loads((mtype, stored))


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
            clauses.append(
                "json_extract(metadata_json, ?) = ? AND json_type(metadata_json, ?) "
                "NOT IN ('object', 'array')"
            )
            path = f'$."{key}"'
            params += (path, value, path)
        else:
            exact = False
    return clauses, params, exact
