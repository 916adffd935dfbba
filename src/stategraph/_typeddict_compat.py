"""Let pydantic read ``typing.TypedDict`` types on Python 3.10 and 3.11.

pydantic refuses a ``typing.TypedDict`` before Python 3.12 ("use
``typing_extensions.TypedDict``"), and most graphs declare their state with it: a JSON
schema of such a graph's input or output (``get_input_jsonschema``, the server's
``/assistants/{id}/schemas``) failed there, as it does in LangGraph. :func:`pydantic_ready`
returns the same type with every ``typing.TypedDict`` in it rebuilt as a
``typing_extensions.TypedDict`` (same name, keys, required keys and docs). On 3.12+, and
for types without one, the type is returned unchanged.
"""

from __future__ import annotations

import sys
import types
import typing
from typing import Any

import typing_extensions

__all__ = ["pydantic_ready"]

_NEEDED = sys.version_info < (3, 12)
_cache: dict[Any, Any] = {}


def pydantic_ready(tp: Any) -> Any:
    """``tp`` with each ``typing.TypedDict`` in it made one pydantic accepts."""
    if not _NEEDED:
        return tp
    try:
        return _convert(tp, {})
    except Exception:  # an exotic type this cannot take apart: let pydantic judge it
        return tp


def _is_typing_typeddict(tp: Any) -> bool:
    return (
        isinstance(tp, type)
        and issubclass(tp, dict)
        and hasattr(tp, "__required_keys__")
        and type(tp).__module__ == "typing"
    )


def _convert(tp: Any, seen: dict[int, Any]) -> Any:
    if _is_typing_typeddict(tp):
        return _rebuild(tp, seen)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is None or not args:
        return tp
    if origin is typing_extensions.Annotated:
        parts = (_convert(args[0], seen), *tp.__metadata__)
        return typing_extensions.Annotated[parts]
    new_args = tuple(_convert(a, seen) if not isinstance(a, list) else a for a in args)
    if new_args == args:
        return tp
    if origin is typing.Union or origin is types.UnionType:
        return typing.Union[new_args]
    if hasattr(tp, "copy_with"):
        return tp.copy_with(new_args)
    return origin[new_args]


def _rebuild(td: Any, seen: dict[int, Any]) -> Any:
    cached = _cache.get(td)
    if cached is not None:
        return cached
    if id(td) in seen:  # a recursive TypedDict: keep the original reference
        return seen[id(td)]
    seen[id(td)] = td
    hints = typing_extensions.get_type_hints(td, include_extras=True)
    required: frozenset[str] = getattr(td, "__required_keys__", frozenset())
    fields: dict[str, Any] = {}
    for key, hint in hints.items():
        converted = _convert(hint, seen)
        if typing.get_origin(converted) in (
            typing_extensions.Required,
            typing_extensions.NotRequired,
        ):
            fields[key] = converted
        elif key in required:
            fields[key] = typing_extensions.Required[converted]
        else:
            fields[key] = typing_extensions.NotRequired[converted]
    make: Any = typing_extensions.TypedDict  # the functional form, with a computed name
    new = make(td.__name__, fields)
    new.__module__ = td.__module__
    new.__qualname__ = getattr(td, "__qualname__", td.__name__)
    new.__doc__ = td.__doc__
    _cache[td] = new
    return new
