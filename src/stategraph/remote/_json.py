"""JSON to and from the server, strictly.

Answers are decoded as UTF-8 only, without ``NaN``/``Infinity``, without numbers that
overflow to infinity (``1e999999``) or integers too long to convert cheaply, and with
nesting bounded by the decoder's recursion check. Any of those is a
:class:`~stategraph.remote.RemoteError` naming where the text came from, never a raw
``UnicodeDecodeError``, ``ValueError`` or ``RecursionError``.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from typing import Any

from stategraph.remote._errors import RemoteError

__all__ = ["decode_json", "encode_json"]

_MAX_INT_DIGITS = 4300
"""Longer integers are refused (the limit Python 3.11+ applies to ``int(str)``; the
conversion costs quadratic time, so 3.10 needs it checked here)."""


class _Refused(ValueError):
    pass


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:40]} is out of range")
    return value


def _int(text: str) -> int:
    if len(text) > _MAX_INT_DIGITS:
        raise _Refused(f"an integer of {len(text)} digits is too long")
    return int(text)


def _constant(text: str) -> Any:
    raise _Refused(f"{text} is not JSON")


def _python_bounds_int_digits() -> bool:
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    return 0 < limit <= _MAX_INT_DIGITS


# Python 3.11+ bounds the digits of int(str) itself: the hook (a Python call per
# integer) is only needed where it does not (3.10, or the limit switched off)
_DECODER = json.JSONDecoder(
    parse_float=_float,
    parse_int=None if _python_bounds_int_digits() else _int,
    parse_constant=_constant,
)


def decode_json(
    raw: bytes | str, where: str | Callable[[], str], *, field: str | None = None
) -> Any:
    """The JSON value of ``raw``; ``where`` (or what it returns) names it in errors."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else raw
        return _DECODER.decode(text)
    except UnicodeDecodeError as exc:
        problem = f"the answer is not UTF-8 text (byte {exc.start})"
    except _Refused as exc:
        problem = str(exc)
    except json.JSONDecodeError as exc:
        problem = f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    except RecursionError:
        problem = "JSON nested too deeply"
    except ValueError as exc:  # Python's own limit on integer digits
        problem = f"an integer is too long ({str(exc)[:80]})"
    name = where if isinstance(where, str) else where()
    raise RemoteError(f"{name}: {problem}.", endpoint=name, field=field)


def _default(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump()
    fields = getattr(value, "__dataclass_fields__", None)
    if fields is not None:
        return {name: getattr(value, name) for name in fields}
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"{type(value).__name__} cannot be sent to the server as JSON")


def encode_json(body: Any, where: str) -> bytes:
    """``body`` as JSON bytes (pydantic models, dataclasses and sets included)."""
    try:
        return json.dumps(body, default=_default, allow_nan=False).encode()
    except ValueError as exc:
        raise ValueError(f"{where}: the request cannot be sent as JSON: {exc}.") from None
    except TypeError as exc:
        raise TypeError(f"{where}: {exc}.") from None
