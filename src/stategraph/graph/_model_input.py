"""Node inputs as pydantic models, validating only the fields whose value changed.

Building each node's input with ``model_validate`` runs every field validator on the
whole state at every step, although most values have not changed since the previous
node got them. :class:`ModelInputs` (one per state model, shared by the graph's nodes)
remembers, per field, the last value it validated and the validated result. A value
counts as the one validated when it is the same object and, for a plain list, dict or
set, still holds the same items (compared by identity against a shallow snapshot taken
when it was validated): a reducer that extends its list in place, or a caller appending
to the list it passes again to the next run, hands out the same object with new items,
which must be validated (and seen) again. A new input:

* re-validates the changed fields only (``validate_assignment``, which runs the
  field's validators) on a model built with ``model_construct``;
* gives every unchanged field its validated value again, a list, dict or set as a
  fresh shallow copy, so a node that appends to or assigns into its input does not
  change what the next node receives. (Containers nested inside a field's value are
  shared between the nodes' inputs, as they are for TypedDict and dataclass states;
  ``model_validate`` would copy those too.)

Anything unusual falls back to ``model_validate``: a model with model validators, a
``model_post_init``, defaults that are validated, aliases, a required field without
a value, or any error (so the error raised is exactly ``model_validate``'s).
"""

from __future__ import annotations

import threading
import weakref
from operator import is_
from typing import Any

__all__ = ["ModelInputs", "model_inputs"]

_LOCK = threading.Lock()
_BY_SCHEMA: weakref.WeakKeyDictionary[type, ModelInputs | None] = weakref.WeakKeyDictionary()


def model_inputs(schema: type) -> ModelInputs | None:
    """The shared :class:`ModelInputs` of ``schema`` (None when it cannot take one)."""
    try:
        return _BY_SCHEMA[schema]
    except KeyError:
        pass
    with _LOCK:
        if schema not in _BY_SCHEMA:
            _BY_SCHEMA[schema] = ModelInputs.build(schema)
        return _BY_SCHEMA[schema]


class _Memo:
    """What the validations saw: per field, (raw value, snapshot of its items or None,
    validated copy)."""

    __slots__ = ("entries",)

    def __init__(self, entries: dict[str, tuple[Any, Any, Any]]) -> None:
        self.entries = entries


class ModelInputs:
    """Builds a model from channel values, validating only what changed."""

    __slots__ = ("extra_allowed", "fields", "memo", "required", "schema", "validator")

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self.validator = schema.__pydantic_validator__
        self.fields = tuple(schema.model_fields)
        self.required = frozenset(k for k, f in schema.model_fields.items() if f.is_required())
        # (model_construct gives such a model an empty dict of extra keys, others None)
        self.extra_allowed = schema.model_config.get("extra") == "allow"
        # replaced as a whole (never mutated), so concurrent nodes see a consistent memo
        self.memo: _Memo | None = None

    @classmethod
    def build(cls, schema: Any) -> ModelInputs | None:
        """A ``ModelInputs`` for ``schema``, or None when a full validation is needed."""
        try:
            decorators = schema.__pydantic_decorators__
            if decorators.model_validators or getattr(schema, "__pydantic_post_init__", None):
                return None
            if getattr(schema, "__pydantic_root_model__", False):
                return None
            if schema.model_config.get("validate_default"):
                return None
            for field in schema.model_fields.values():
                # (aliases: model_validate reads other keys than the field names)
                if field.validate_default or field.alias or field.validation_alias:
                    return None
        except Exception:
            return None
        return cls(schema)

    def validate(self, values: dict[str, Any]) -> Any:
        """The model for ``values`` (field name -> raw channel value)."""
        memo = self.memo
        if memo is not None and self.required <= values.keys():
            try:
                return self._incremental(memo, values)
            except Exception:
                pass  # the full validation below raises the exact error
        model = self.schema.model_validate(values)
        data = model.__dict__
        if data.keys() >= values.keys():
            self.memo = _Memo({k: _entry(v, data[k]) for k, v in values.items()})
        else:
            self.memo = None
        return model

    def _incremental(self, memo: _Memo, values: dict[str, Any]) -> Any:
        entries = memo.entries
        data: dict[str, Any] = {}
        changed: list[str] = []
        containers = _CONTAINERS
        for k in self.fields:  # (the model's field order, as model_construct keeps)
            v = values.get(k, _ABSENT)
            if v is _ABSENT:
                continue
            entry = entries.get(k)
            if entry is not None and entry[0] is v and _same_items(v, entry[1]):
                kept = entry[2]
                data[k] = kept.copy() if type(kept) in containers else kept
            else:
                data[k] = v
                changed.append(k)
        schema = self.schema
        if len(data) == len(self.fields):
            # every field has a value: what model_construct makes, without its
            # per-field search for aliases and defaults
            model = schema.__new__(schema)
            _set(model, "__dict__", data)
            _set(model, "__pydantic_fields_set__", set(values))
            _set(model, "__pydantic_extra__", {} if self.extra_allowed else None)
            _set(model, "__pydantic_private__", None)
        else:
            model = schema.model_construct(_fields_set=set(values), **data)
        if changed:
            assign = self.validator.validate_assignment
            for k in changed:
                assign(model, k, values[k])
            new = dict(entries)
            fields = model.__dict__
            for k in changed:
                new[k] = _entry(values[k], fields[k])
            self.memo = _Memo(new)
        return model


_set = object.__setattr__
_ABSENT: Any = object()

_CONTAINERS = (list, dict, set)


def _fresh(value: Any) -> Any:
    """``value``, or a shallow copy of it when it is a plain list, dict or set."""
    return value.copy() if type(value) in _CONTAINERS else value


def _entry(raw: Any, validated: Any) -> tuple[Any, Any, Any]:
    """The memo entry of ``raw`` validated as ``validated``: the raw value, a shallow
    snapshot of its items when it is a plain list, dict or set (else None), and a copy
    of the validated value that no node holds."""
    return raw, _fresh(raw), _fresh(validated)


def _same_items(raw: Any, snapshot: Any) -> bool:
    """Whether ``raw`` (the object validated) still holds the items of ``snapshot``,
    each the very object it held then (a non-container value: always)."""
    kind = type(raw)
    if kind is list:
        return len(raw) == len(snapshot) and all(map(is_, raw, snapshot))
    if kind is dict:
        # (the same keys in another order count as changed: validated again)
        return (
            len(raw) == len(snapshot)
            and all(map(is_, raw, snapshot))
            and all(map(is_, raw.values(), snapshot.values()))
        )
    if kind is set:
        return raw == snapshot
    return True
