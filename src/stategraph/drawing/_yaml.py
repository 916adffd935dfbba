"""A small YAML writer for Mermaid front matter (mappings, lists and plain scalars).

Keys are sorted and block style is used throughout, as PyYAML's ``dump`` does by
default, so the front matter reads the same as LangGraph's without needing PyYAML.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["dump_yaml"]

_PLAIN = re.compile(r"^[A-Za-z_/.$][A-Za-z0-9_ ./$'()-]*$")
_RESERVED = frozenset({"y", "yes", "n", "no", "true", "false", "on", "off", "null", "~", ""})
_NUMBER = re.compile(r"^[-+]?(\d[\d_]*)?(\.\d*)?([eE][-+]?\d+)?$")


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if (
        _PLAIN.match(text)
        and text.lower() not in _RESERVED
        and not _NUMBER.match(text)
        and not text.endswith(" ")
    ):
        return text
    return "'" + text.replace("'", "''") + "'"


def _key(key: Any) -> str:
    return _scalar(key if isinstance(key, str) else str(key))


def _block(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, Mapping):
        for key in sorted(value, key=str):
            item = value[key]
            if isinstance(item, Mapping) and item:
                lines.append(f"{pad}{_key(key)}:")
                lines.extend(_block(item, indent + 2))
            elif isinstance(item, (list, tuple)) and item:
                lines.append(f"{pad}{_key(key)}:")
                lines.extend(_block(item, indent))
            else:
                lines.append(f"{pad}{_key(key)}: {_inline(item)}")
        return lines
    for item in value:
        if isinstance(item, Mapping) and item:
            inner = _block(item, indent + 2)
            lines.append(f"{pad}- {inner[0].lstrip()}")
            lines.extend(inner[1:])
        elif isinstance(item, (list, tuple)) and item:
            inner = _block(item, indent + 2)
            lines.append(f"{pad}- {inner[0].lstrip()}")
            lines.extend(inner[1:])
        else:
            lines.append(f"{pad}- {_inline(item)}")
    return lines


def _inline(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, (list, tuple)):
        return "[]"
    return _scalar(value)


def dump_yaml(data: Mapping[str, Any]) -> list[str]:
    """The lines of ``data`` as a YAML block mapping."""
    return _block(data, 0)
