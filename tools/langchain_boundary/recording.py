"""Reading and writing recordings (JSON, gzipped when the name ends with ``.gz``)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["load", "save"]


def save(data: dict[str, Any], path: str) -> None:
    """Write a recording (gzipped when ``path`` ends with ``.gz``)."""
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if path.endswith(".gz"):
        import gzip

        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def load(path: str) -> dict[str, Any]:
    """Read a recording written by :func:`save`."""
    if path.endswith(".gz"):
        import gzip

        with gzip.open(path, "rt", encoding="utf-8") as f:
            return dict(json.load(f))
    with open(path, encoding="utf-8") as f:
        return dict(json.load(f))
