"""JSON for the wire: graph values (messages, interrupts, dataclasses, models) as
LangGraph Server writes them, server-sent events, and times."""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta, timezone
from enum import Enum
from typing import Any
from uuid import UUID

__all__ = ["dumps", "loads", "plain", "sse", "iso", "now_iso", "from_iso"]


def _default(value: Any) -> Any:
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, BaseException):
        return {"error": type(value).__name__, "message": str(value)}
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    as_dict = getattr(value, "_asdict", None)
    if callable(as_dict):
        return as_dict()
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return {k: v for k, v in vars(value).items() if not k.startswith("_")}
    return repr(value)


_ENCODER = json.JSONEncoder(default=_default, ensure_ascii=False, separators=(",", ":"))


def dumps(value: Any) -> str:
    """Compact JSON text of ``value`` (any graph value)."""
    return _ENCODER.encode(value)


def loads(text: str | bytes | None) -> Any:
    """Parse JSON text (``None`` and empty text read as ``None``)."""
    if text is None or text == "" or text == b"":
        return None
    return json.loads(text)


def plain(value: Any) -> Any:
    """``value`` as plain JSON data (a round trip through :func:`dumps`)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.loads(dumps(value))


def sse(event: str, data: Any, event_id: str | None = None) -> bytes:
    """One server-sent event: ``event:``, ``data:`` (JSON on one line), optional ``id:``."""
    head = f"event: {event}\n"
    if event_id is not None:
        head = f"id: {event_id}\n" + head
    body = data if isinstance(data, str) else dumps(data)
    return f"{head}data: {body}\n\n".encode()


def iso(seconds: float) -> str:
    """Epoch seconds as ISO 8601 in UTC (``2024-01-01T00:00:00.123456+00:00``)."""
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat()


def now_iso() -> str:
    """The current time as :func:`iso` text."""
    return datetime.now(timezone.utc).isoformat()


def from_iso(text: str) -> float:
    """ISO 8601 text (``Z`` or an offset; naive means UTC) as epoch seconds."""
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()


def merge(base: Mapping[str, Any] | None, extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """A new dict: ``base`` updated with ``extra`` (shallow)."""
    out = dict(base or {})
    out.update(extra or {})
    return out
