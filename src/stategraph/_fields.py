"""Helpers that read the fields of state objects (dataclasses and pydantic models)."""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["object_update_items", "is_pydantic_model", "is_pydantic_class"]


def is_pydantic_class(tp: Any) -> bool:
    """True if ``tp`` is a pydantic v2 model class (without importing pydantic)."""
    return isinstance(tp, type) and hasattr(tp, "model_fields") and hasattr(tp, "model_validate")


def is_pydantic_model(obj: Any) -> bool:
    """True if ``obj`` is an instance of a pydantic v2 model."""
    return is_pydantic_class(type(obj))


def object_update_items(obj: Any) -> list[tuple[str, Any]] | None:
    """The fields a dataclass or pydantic instance carries, as ``(name, value)`` pairs.

    For pydantic models only the fields that were explicitly set count, so a node
    returning ``State(x=1)`` updates ``x`` and not every defaulted field. Returns
    ``None`` for anything else.
    """
    if is_pydantic_model(obj):
        fields_set = obj.model_fields_set
        return [(k, getattr(obj, k)) for k in type(obj).model_fields if k in fields_set]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    return None
