"""Printing for people (aligned tables, short values) and for scripts (``--json``)."""

from __future__ import annotations

import base64
import dataclasses
import json
import sys
from collections.abc import Mapping, Sequence
from datetime import date, datetime, time, timedelta
from enum import Enum
from typing import Any, TextIO
from uuid import UUID

__all__ = ["to_jsonable", "print_json", "print_table", "short", "is_internal_channel"]

_INTERNAL_PREFIXES = ("branch:", "join:", "__")


def is_internal_channel(name: str) -> bool:
    """Channels the runtime keeps for itself (routing triggers, barriers, tasks)."""
    return name.startswith(_INTERNAL_PREFIXES)


def to_jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (dataclasses, models and messages as dicts)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [to_jsonable(v) for v in items]
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, (UUID,)):
        return str(value)
    if isinstance(value, Enum):
        return to_jsonable(value.value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return to_jsonable(dump())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if hasattr(value, "_asdict"):
        return to_jsonable(value._asdict())
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return {k: to_jsonable(v) for k, v in vars(value).items() if not k.startswith("_")}
    return repr(value)


def print_json(data: Any, out: TextIO | None = None) -> None:
    """Print ``data`` as indented JSON."""
    stream = out or sys.stdout
    stream.write(json.dumps(to_jsonable(data), indent=2, ensure_ascii=False) + "\n")


def short(value: Any, width: int = 60) -> str:
    """A one-line rendering of ``value``, cut to ``width`` characters."""
    text = json.dumps(to_jsonable(value), ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def print_table(
    headers: Sequence[str], rows: Sequence[Sequence[Any]], out: TextIO | None = None
) -> None:
    """Print ``rows`` under ``headers`` in aligned columns."""
    stream = out or sys.stdout
    cells = [[str(c) for c in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        line = "  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip()
        stream.write(line + "\n")
        if n == 0:
            stream.write("  ".join("-" * w for w in widths) + "\n")
