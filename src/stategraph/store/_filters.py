"""Search filters on item values, evaluated in Python by every store.

A filter is a dict ``{field: condition}``; all conditions must hold. ``field`` is a
key of the item's value, or a dotted path into nested dicts (``"author.name"``; a
numeric segment indexes a list: ``"tags.0"``). A key that itself contains dots is
matched literally first. ``condition`` is either

* a plain value: the field must equal it;
* a dict of operators (``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``), all of
  which must hold;
* a dict without operators: a nested filter applied to the field's value (which must
  be a dict).

Ordering operators compare numbers with numbers and strings with strings; anything
else (a missing field, ``None``, mixed types) simply does not match. Booleans are
never equal to numbers, unlike in plain Python.

Filters never reach SQL: stores fetch candidates by namespace prefix and evaluate
them here, so no filter key or value can change a query.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["OPERATORS", "MISSING", "validate_filter", "compile_filter", "matches", "lookup"]

OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})
"""The comparison operators a filter condition may use."""


class _Missing:
    """Marker for a field that does not exist in a value."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""Returned by :func:`lookup` when the path does not exist."""


def validate_filter(filter: Mapping[str, Any] | None) -> None:
    """Raise ``ValueError`` if ``filter`` is malformed (bad key or unknown operator)."""
    if filter is None:
        return
    if not isinstance(filter, Mapping):
        raise TypeError(
            f"Search filter must be a dict mapping field names to conditions, "
            f"got {type(filter).__name__}: {filter!r}."
        )
    for key, cond in filter.items():
        if not isinstance(key, str) or not key:
            raise ValueError(
                f"Invalid filter key {key!r}: filter keys must be non-empty strings "
                f"(field names, or dotted paths like 'a.b')."
            )
        if isinstance(cond, Mapping):
            _validate_condition(key, cond)


def _validate_condition(key: str, cond: Mapping[Any, Any]) -> None:
    ops = [k for k in cond if isinstance(k, str) and k.startswith("$")]
    if not ops:
        validate_filter(cond)
        return
    if len(ops) != len(cond):
        raise ValueError(
            f"Filter on {key!r} mixes operators and field names: {dict(cond)!r}. "
            f"Use either operators ({', '.join(sorted(OPERATORS))}) or a nested filter."
        )
    for op in ops:
        if op not in OPERATORS:
            raise ValueError(
                f"Unsupported filter operator {op!r} on {key!r}. "
                f"Supported operators: {', '.join(sorted(OPERATORS))}."
            )


def lookup(value: Any, path: str) -> Any:
    """Return the value at ``path`` (a key or dotted path) in ``value``, or ``MISSING``."""
    if isinstance(value, Mapping) and path in value:
        return value[path]
    if "." not in path:
        return MISSING
    current = value
    for part in path.split("."):
        if isinstance(current, Mapping):
            if part not in current:
                return MISSING
            current = current[part]
        elif isinstance(current, list) and _is_index(part):
            idx = int(part)
            if not -len(current) <= idx < len(current):
                return MISSING
            current = current[idx]
        else:
            return MISSING
    return current


def _is_index(part: str) -> bool:
    return part.isdigit() or (part.startswith("-") and part[1:].isdigit())


Predicate = Callable[[Any], bool]


def compile_filter(filter: Mapping[str, Any] | None) -> Predicate | None:
    """Turn a (validated) filter into a predicate on item values; ``None`` if empty.

    Compiling once per search keeps the per-item cost to a few calls.
    """
    if not filter:
        return None
    checks = [_compile_condition(key, cond) for key, cond in filter.items()]
    if len(checks) == 1:
        return checks[0]
    return lambda value: all(check(value) for check in checks)


def matches(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """Whether ``value`` satisfies every condition of ``filter`` (``None`` matches all)."""
    predicate = compile_filter(filter)
    return predicate is None or predicate(value)


def _getter(key: str) -> Callable[[Any], Any]:
    if "." in key:
        return lambda value: lookup(value, key)
    return lambda value: value.get(key, MISSING) if isinstance(value, Mapping) else MISSING


def _compile_condition(key: str, cond: Any) -> Predicate:
    get = _getter(key)
    if not isinstance(cond, Mapping):
        return lambda value: _equal(get(value), cond)
    if cond and all(isinstance(k, str) and k.startswith("$") for k in cond):
        preds = [_compile_operator(op, operand) for op, operand in cond.items()]
        if len(preds) == 1:
            pred = preds[0]
            return lambda value: pred(get(value))

        def check_all(value: Any) -> bool:
            found = get(value)
            return all(p(found) for p in preds)

        return check_all
    sub = compile_filter(cond)

    def nested(value: Any) -> bool:
        found = get(value)
        return isinstance(found, Mapping) and (sub is None or sub(found))

    return nested


def _compile_operator(op: str, operand: Any) -> Predicate:
    if op == "$eq":
        return lambda found: _equal(found, operand)
    if op == "$ne":
        return lambda found: not _equal(found, operand)
    compare = _COMPARE.get(op)
    if compare is None:
        raise ValueError(
            f"Unsupported filter operator {op!r}. Supported operators: "
            f"{', '.join(sorted(OPERATORS))}."
        )
    if isinstance(operand, str):
        return lambda found: isinstance(found, str) and compare(found, operand)
    if isinstance(operand, (int, float)) and not isinstance(operand, bool):
        return lambda found: (
            isinstance(found, (int, float))
            and not isinstance(found, bool)
            and compare(found, operand)
        )
    return lambda found: False  # nothing orders against this operand


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


def _equal(found: Any, expected: Any) -> bool:
    if found is MISSING:
        return expected is None
    if isinstance(found, bool) != isinstance(expected, bool):
        return False
    try:
        return bool(found == expected)
    except Exception:
        return False
