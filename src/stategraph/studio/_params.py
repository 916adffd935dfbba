"""Checking what a request sends: the JSON body and each field or query parameter.

Every route reads its inputs through these helpers, so a value of the wrong type or
out of range is answered ``422`` with a message naming the field (never a ``500``):
a ``limit`` of ``"x"``, ``1e309`` or ``-1``, ``metadata`` given as a list, a namespace
given as a string... The body must be a JSON object, valid UTF-8, without ``NaN`` or
``Infinity``, and nested at most :data:`MAX_JSON_DEPTH` levels (checked before it is
parsed, in linear time). Ids must be text without NUL characters (no saver can store
one).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from starlette.requests import Request

from stategraph.studio._context import StudioError

__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_LIMIT",
    "MAX_OFFSET",
    "check_json_depth",
    "parse_json",
    "read_json_object",
    "whole",
    "text",
    "identifier",
    "optional_id",
    "mapping",
    "text_list",
    "checkpoint_ref",
    "path_id",
    "flag",
    "query_whole",
    "query_flag",
]

MAX_JSON_DEPTH = 256
"""Arrays and objects nested in a request body (or a JSON query parameter)."""
MAX_LIMIT = 1000
"""The largest ``limit`` a search or history request may ask for."""
MAX_OFFSET = 10**9
"""The largest ``offset``."""

_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_UNSET: Any = object()


def check_json_depth(raw: bytes, what: str = "The request body") -> None:
    """Refuse JSON nested deeper than :data:`MAX_JSON_DEPTH` (before parsing it)."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_JSON_DEPTH:
        return
    depth = 0
    for byte in _STRINGS.sub(b"", raw).translate(None, _BRACKETS):
        depth += 1 if byte in b"[{" else -1
        if depth > MAX_JSON_DEPTH:
            raise StudioError(f"{what} is JSON nested more than {MAX_JSON_DEPTH} levels deep.", 422)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(raw: bytes | str, what: str = "The request body") -> Any:
    """JSON text as data; malformed text, ``NaN``/``Infinity`` or deep nesting: 422."""
    data = raw.encode() if isinstance(raw, str) else raw
    check_json_depth(data, what)
    try:
        return json.loads(data, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, bad UTF-8, NaN
        raise StudioError(f"{what} is not valid JSON: {exc}", 422) from exc


async def read_json_object(request: Request) -> dict[str, Any]:
    """The request body as a JSON object (``{}`` when empty)."""
    raw = await request.body()
    if not raw.strip():
        return {}
    body = parse_json(raw)
    if not isinstance(body, dict):
        raise StudioError(
            f"The request body must be a JSON object, got {type(body).__name__}.", 422
        )
    return body


def _shown(value: Any) -> str:
    text_ = json.dumps(value, default=repr) if not isinstance(value, str) else repr(value)
    return text_ if len(text_) <= 60 else text_[:57] + "..."


def _refuse(name: str, expected: str, value: Any) -> StudioError:
    return StudioError(f"'{name}' must be {expected}, got {_shown(value)}.", 422)


def whole(
    body: Mapping[str, Any],
    name: str,
    default: int | None,
    *,
    minimum: int = 0,
    maximum: int = MAX_OFFSET,
) -> int | None:
    """The whole number ``body[name]`` (absent or null: ``default``) within bounds.

    Accepts an integer or a string of decimal digits (query parameters are text);
    refuses booleans, fractions, ``1e309`` and anything out of range.
    """
    value = body.get(name, _UNSET)
    if value is _UNSET or value is None:
        return default
    expected = f"a whole number from {minimum} to {maximum}"
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and re.fullmatch(r"\s*-?[0-9]{1,20}\s*", value):
        number = int(value)
    if number is None or not minimum <= number <= maximum:
        raise _refuse(name, expected, value)
    return number


def _checked(
    body: Mapping[str, Any], name: str, accepts: Callable[[Any], bool], expected: str
) -> Any:
    """``body[name]`` if ``accepts`` it (``None`` when absent or null); refused (422,
    naming what was ``expected``) otherwise."""
    value = body.get(name)
    if value is not None and not accepts(value):
        raise _refuse(name, expected, value)
    return value


def _no_nul(name: str, value: str) -> None:
    if "\x00" in value:
        raise StudioError(f"'{name}' must not contain NUL characters.", 422)


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _is_text_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def text(body: Mapping[str, Any], name: str, default: str | None = None) -> str | None:
    """The string ``body[name]`` (absent or null: ``default``)."""
    value: str | None = _checked(body, name, _is_text, "a string")
    return default if value is None else value


def identifier(value: Any, name: str) -> str:
    """An id (thread, checkpoint, namespace, interrupt): text without NUL characters."""
    if not isinstance(value, str):
        raise _refuse(name, "a string", value)
    _no_nul(name, value)
    return value


def optional_id(body: Mapping[str, Any], name: str, default: str | None = None) -> str | None:
    """``body[name]`` as an :func:`identifier`, or ``default`` when absent, null or empty."""
    value = body.get(name)
    if value is None or value == "":
        return default
    return identifier(value, name)


def mapping(body: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    """The JSON object ``body[name]`` (absent or null: ``None``)."""
    value: dict[str, Any] | None = _checked(
        body, name, lambda v: isinstance(v, dict), "a JSON object"
    )
    return value


def text_list(body: Mapping[str, Any], name: str) -> tuple[str, ...] | None:
    """The list of strings ``body[name]`` as a tuple (absent or null: ``None``)."""
    value: list[str] | None = _checked(body, name, _is_text_list, "a list of strings")
    if value is None:
        return None
    for part in value:
        _no_nul(name, part)
    return tuple(value)


def checkpoint_ref(body: Mapping[str, Any], name: str = "checkpoint") -> tuple[str | None, str]:
    """``(checkpoint_id, checkpoint_ns)`` of the object ``body[name]`` (LangGraph's
    ``{"checkpoint_id": ..., "checkpoint_ns": ...}``; absent: ``(None, "")``)."""
    ref = mapping(body, name) or {}
    checkpoint_id = optional_id(ref, "checkpoint_id")
    ns = optional_id(ref, "checkpoint_ns", "") or ""
    return checkpoint_id, ns


def path_id(request: Request, name: str) -> str:
    """A path parameter that is an id (``thread_id``, ``checkpoint_id``)."""
    return identifier(request.path_params[name], name)


def flag(body: Mapping[str, Any], name: str) -> bool:
    """The boolean ``body[name]`` (absent or null: ``False``)."""
    value = body.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _refuse(name, "true or false", value)
    return value


def query_whole(
    request: Request, name: str, default: int, *, minimum: int = 0, maximum: int = MAX_OFFSET
) -> int:
    """A whole-number query parameter."""
    found = whole(request.query_params, name, default, minimum=minimum, maximum=maximum)
    assert found is not None
    return found


def query_flag(request: Request, name: str) -> bool:
    """A boolean query parameter: ``true``/``1`` or ``false``/``0`` (default false)."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return False
    lowered = raw.lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    raise _refuse(name, "true or false", raw)
