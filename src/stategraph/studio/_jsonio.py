"""Turning saved values into JSON for the API and the pages, and server-sent events."""

from __future__ import annotations

import json
from typing import Any

from stategraph.cli._output import to_jsonable
from stategraph.types import Interrupt

__all__ = ["jsonable", "dumps", "sse"]


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (interrupts as ``{value, id}``; tuples as lists)."""
    if isinstance(value, Interrupt):
        out = {"value": jsonable(value.value), "id": value.id}
        if value.response_schema is not None:
            out["response_schema"] = jsonable(value.response_schema)
        return out
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, BaseException):
        return {"error": type(value).__name__, "message": str(value)}
    return to_jsonable(value)


def dumps(value: Any, *, indent: int | None = None) -> str:
    """JSON text of :func:`jsonable` ``(value)``."""
    return json.dumps(jsonable(value), indent=indent, ensure_ascii=False, default=repr)


def sse(event: str, data: Any) -> bytes:
    """One server-sent event (``data`` as JSON on one line)."""
    return f"event: {event}\ndata: {dumps(data)}\n\n".encode()
