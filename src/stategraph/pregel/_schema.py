"""Pydantic models and JSON schemas of a graph's input, output and context.

A graph with one input (or output) channel takes (or returns) that channel's value:
its schema is a root model of the channel's type. A graph with several channels takes
a dict: its schema has one optional field per channel. The models are named after the
graph (``LangGraphInput``, ``my_graph_output``) as in LangGraph, so the JSON schemas
are the same.
"""

from __future__ import annotations

import inspect
import keyword
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from stategraph._typeddict_compat import pydantic_ready

__all__ = [
    "coerce_context",
    "context_jsonschema",
    "fields_model",
    "graph_name",
    "io_model",
    "root_model",
]


def graph_name(name: str, suffix: str | None = None) -> str:
    """``name`` with ``suffix`` appended in the name's own style.

    ``LangGraph`` + ``input`` -> ``LangGraphInput``; ``my_graph`` + ``input`` ->
    ``my_graph_input``.
    """
    if not suffix:
        return name
    if name[:1].isupper():
        return name + suffix.title()
    return f"{name}_{suffix.lower()}"


def _is_model_class(tp: Any) -> bool:
    from pydantic import BaseModel

    return (
        inspect.isclass(tp)
        and not isinstance(tp, types.GenericAlias)
        and typing.get_origin(tp) is None
        and issubclass(tp, BaseModel)
    )


def root_model(name: str, tp: Any, *, default: Any = ..., passthrough: bool = True) -> Any:
    """A pydantic root model called ``name`` whose value has type ``tp``.

    A pydantic model type is returned as it is (``passthrough``). ``default`` (when
    given) is the root's default value and appears in the JSON schema.
    """
    from pydantic import RootModel, create_model

    if passthrough and _is_model_class(tp):
        return tp
    tp = Any if tp is None else pydantic_ready(tp)
    if default is ...:
        return create_model(name, __base__=RootModel[tp])
    return create_model(name, __base__=RootModel[tp], root=(tp, default))


def fields_model(name: str, fields: Mapping[str, tuple[Any, Any]]) -> Any:
    """A pydantic model called ``name`` with one field per ``key: (type, default)``.

    Keys that are not valid pydantic field names (a leading underscore, a keyword, a
    name of ``BaseModel`` itself) get a safe field name and keep the key as alias, so
    the JSON schema shows the key.
    """
    from pydantic import BaseModel, Field, create_model

    definitions: dict[str, Any] = {}
    for key, (given, default) in fields.items():
        tp = pydantic_ready(given)
        if key.startswith("_") or keyword.iskeyword(key) or hasattr(BaseModel, key):
            safe = f"field_{key.lstrip('_')}_{len(definitions)}"
            definitions[safe] = (tp, Field(default, alias=key))
        else:
            definitions[key] = (tp, default)
    return create_model(name, **definitions)


def io_model(
    name: str,
    channels: Mapping[str, Any],
    keys: str | Sequence[str],
    *,
    update: bool,
) -> Any:
    """The model of a graph's input (``update=True``) or output over ``keys``."""
    attr = "UpdateType" if update else "ValueType"
    if isinstance(keys, str):
        return root_model(name, _channel_type(channels.get(keys), attr))
    return fields_model(
        name, {k: (_channel_type(channels.get(k), attr), None) for k in keys if k in channels}
    )


def _channel_type(channel: Any, attr: str) -> Any:
    if channel is None:
        return Any
    try:
        tp = getattr(channel, attr)
    except Exception:
        return Any
    return Any if tp is None else tp


def context_jsonschema(schema: Any) -> dict[str, Any] | None:
    """The JSON schema of a ``context_schema`` (``None`` without one)."""
    if schema is None:
        return None
    from pydantic import TypeAdapter

    return TypeAdapter(pydantic_ready(schema)).json_schema()


def coerce_context(schema: Any, context: Mapping[str, Any]) -> Any:
    """A ``context`` given as a dict, made an instance of ``context_schema``.

    Dataclasses and pydantic models are built from the dict (so nodes get
    ``runtime.context.user``, as the annotation promises); a ``TypedDict`` or plain
    mapping schema keeps the dict. Errors name the schema.
    """
    import dataclasses

    if _is_model_class(schema):
        try:
            return schema.model_validate(dict(context))
        except Exception as exc:
            from stategraph._notes import add_note

            add_note(exc, f"While building the run's context as {schema.__name__}.")
            raise
    if dataclasses.is_dataclass(schema) and isinstance(schema, type):
        try:
            return schema(**context)
        except TypeError as exc:
            raise TypeError(
                f"Cannot build the run's context as {schema.__name__} from "
                f"{sorted(context)!r}: {exc}. Pass the fields {schema.__name__} declares."
            ) from exc
    return context
