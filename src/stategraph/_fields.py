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


_NO_DEFAULT: Any = object()
_DEFAULTS: dict[type, dict[str, Any]] = {}


def _model_defaults(cls: type) -> dict[str, Any]:
    """Each field's default value (computed once per model class)."""
    known = _DEFAULTS.get(cls)
    if known is None:
        from pydantic_core import PydanticUndefined

        known = {}
        for name, field in cls.model_fields.items():  # type: ignore[attr-defined]
            try:
                value = field.get_default(call_default_factory=True, validated_data={})
            except TypeError:
                value = field.get_default(call_default_factory=True)
            except Exception:
                continue
            if value is not PydanticUndefined:
                known[name] = value
        _DEFAULTS[cls] = known
    return known


def object_update_items(obj: Any) -> list[tuple[str, Any]] | None:
    """The fields a dataclass or pydantic instance carries, as ``(name, value)`` pairs.

    For pydantic models, as in LangGraph, every field counts except one left at
    ``None`` whose default is ``None`` too: a model returned as an update writes its
    values, including defaults (so ``UpdateDocs()`` with a ``default_factory`` writes
    the factory's value) and nested models mutated in place. Returns ``None`` for
    anything else.
    """
    if is_pydantic_model(obj):
        fields_set = obj.model_fields_set
        defaults = _model_defaults(type(obj))
        out = []
        for k in type(obj).model_fields:
            value = getattr(obj, k)
            if value is None and k not in fields_set and defaults.get(k, _NO_DEFAULT) is None:
                continue
            out.append((k, value))
        return out
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    return None
