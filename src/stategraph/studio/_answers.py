"""Checking an answer to an interrupt against its ``response_schema`` before resuming."""

from __future__ import annotations

from typing import Any

__all__ = ["schema_errors", "example_answer"]


def schema_errors(value: Any, schema: Any) -> list[str]:
    """Messages for each way ``value`` breaks the JSON schema ``schema`` (empty: valid).

    A schema given as a pydantic model, TypedDict or dataclass is checked by pydantic.
    """
    if schema is None:
        return []
    if isinstance(schema, dict):
        from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

        validator = Draft202012Validator(schema)
        return [
            f"{'/'.join(str(p) for p in err.absolute_path) or '(answer)'}: {err.message}"
            for err in sorted(validator.iter_errors(value), key=lambda e: list(e.path))
        ]
    from pydantic import TypeAdapter, ValidationError

    try:
        TypeAdapter(schema).validate_python(value)
    except ValidationError as exc:
        return [
            f"{'/'.join(str(p) for p in e['loc']) or '(answer)'}: {e['msg']}" for e in exc.errors()
        ]
    return []


_EXAMPLES: dict[str, Any] = {
    "boolean": True,
    "string": "",
    "integer": 0,
    "number": 0,
    "array": [],
    "null": None,
}


def example_answer(schema: Any) -> Any:
    """A starting answer shaped like a JSON ``schema`` (its required keys filled with
    plain values of their types); ``True`` when there is no schema to follow."""
    if not isinstance(schema, dict):
        return True
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {key: example_answer(props.get(key)) for key in schema.get("required") or ()}
    return _EXAMPLES.get(kind, True) if isinstance(kind, str) else True
