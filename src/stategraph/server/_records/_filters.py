"""JSON containment (``@>`` of PostgreSQL's jsonb), used to filter by metadata and values."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["contains"]


def contains(haystack: Any, needle: Any) -> bool:
    """Whether ``needle`` is contained in ``haystack``: every key of a needle object
    is in the haystack object with a containing value; every element of a needle array
    is contained in some element of the haystack array; scalars are equal."""
    if isinstance(needle, Mapping):
        if not isinstance(haystack, Mapping):
            return False
        return all(k in haystack and contains(haystack[k], v) for k, v in needle.items())
    if isinstance(needle, list):
        if not isinstance(haystack, list):
            return False
        return all(any(contains(h, n) for h in haystack) for n in needle)
    if isinstance(needle, bool) or isinstance(haystack, bool):
        return type(needle) is type(haystack) and needle == haystack
    return bool(needle == haystack)
