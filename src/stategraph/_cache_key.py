"""The default cache key of a node input: a stable hash of its content."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

__all__ = ["default_cache_key"]


def _normalize(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {"__map__": sorted((repr(k), _normalize(v)) for k, v in value.items())}
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [_normalize(v) for v in value]]
    if isinstance(value, (set, frozenset)):
        return ["set", sorted(repr(_normalize(v)) for v in value)]
    if hasattr(value, "model_dump") and callable(value.model_dump):
        return [type(value).__qualname__, _normalize(value.model_dump())]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [
            type(value).__qualname__,
            _normalize({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}),
        ]
    return value


def default_cache_key(*args: Any, **kwargs: Any) -> str:
    """Hash the arguments (normally the node's input) into a stable hex key.

    Dicts are hashed independently of key order; dataclasses and pydantic models by
    their field values. Two equal inputs always give the same key across processes.
    """
    from xxhash import xxh3_128_hexdigest

    payload = repr(_normalize([list(args), kwargs]))
    return xxh3_128_hexdigest(payload.encode())
