"""State schemas -> channels, managed values and state mappers.

A schema may be a ``TypedDict`` (``total=False``, ``NotRequired``, inheritance), a
dataclass or a pydantic v2 model. Each key becomes a channel: plain keys a
``LastValue``, ``Annotated[T, reducer]`` a ``BinaryOperatorAggregate``,
``Annotated[T, channel]`` that channel, and managed values are computed per task.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from stategraph._fields import is_pydantic_class
from stategraph._notes import add_note
from stategraph.channels.base import BaseChannel
from stategraph.channels.binop import BinaryOperatorAggregate
from stategraph.channels.last_value import LastValue
from stategraph.managed import ManagedValue, is_managed_value

__all__ = [
    "ROOT",
    "SchemaInfo",
    "is_root_schema",
    "schema_info",
    "make_mapper",
    "check_reducer",
]


ROOT = "__root__"
"""The one channel of a graph whose state is a bare value (``StateGraph(int)``)."""


def is_root_schema(schema: Any) -> bool:
    """Whether ``schema`` is a bare value type rather than a schema with keys.

    ``StateGraph(Annotated[list, operator.add])``, ``StateGraph(int)`` or
    ``StateGraph(dict)``: the whole state is one value, which nodes receive and return.
    """
    return schema is not None and not hasattr(schema, "__annotations__")


class SchemaInfo(Mapping[str, Any]):
    """What the builder learned from one schema: its channels and managed keys.

    It is also the mapping LangGraph's ``builder.schemas[schema]`` is: state key ->
    channel (or managed-value class), so ``"active_agent" in builder.schemas[State]``
    and ``builder.schemas[State]["messages"]`` work as they do there.
    """

    __slots__ = ("channels", "key_list", "kind", "managed", "schema")

    def __init__(
        self,
        schema: Any,
        channels: dict[str, BaseChannel],
        managed: dict[str, type[ManagedValue]],
        kind: str,
    ) -> None:
        self.schema = schema
        self.channels = channels
        self.managed = managed
        self.key_list: list[str] = [*channels, *managed]
        self.kind = kind

    def __getitem__(self, key: str) -> Any:
        if key in self.channels:
            return self.channels[key]
        return self.managed[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.key_list)

    def __len__(self) -> int:
        return len(self.key_list)

    def __contains__(self, key: object) -> bool:
        return key in self.channels or key in self.managed

    def __repr__(self) -> str:
        name = getattr(self.schema, "__name__", repr(self.schema))
        return f"SchemaInfo({name}: {', '.join(self.key_list)})"

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = object.__hash__


def _type_hints(schema: Any) -> dict[str, Any]:
    if schema is dict or schema is None:
        return {}
    try:
        if is_pydantic_class(schema):
            hints = typing.get_type_hints(schema, include_extras=True)
            return {k: hints.get(k, Any) for k in schema.model_fields}
        module = sys.modules.get(getattr(schema, "__module__", ""), None)
        globalns = vars(module) if module is not None else None
        hints = typing.get_type_hints(schema, globalns=globalns, include_extras=True)
    except (TypeError, NameError) as exc:
        hints = dict(getattr(schema, "__annotations__", {}) or {})
        # an unresolved string annotation would silently drop a reducer (the key would
        # become a plain last-value channel): refuse rather than compute wrong states
        lost = [
            k
            for k, v in hints.items()
            if "Annotated" in str(getattr(v, "__forward_arg__", v if isinstance(v, str) else ""))
        ]
        if lost:
            name = getattr(schema, "__qualname__", repr(schema))
            raise TypeError(
                f"Cannot resolve the annotations of state schema {name} ({exc}), so the "
                f"reducers of {lost} would be lost. String annotations (from "
                "`from __future__ import annotations`) are resolved in the schema's "
                "module: define the schema at module level and import there every name "
                "its annotations use."
            ) from exc
    if dataclasses.is_dataclass(schema):
        names = {f.name for f in dataclasses.fields(schema)}
        hints = {k: v for k, v in hints.items() if k in names}
    return {k: v for k, v in hints.items() if not _is_classvar(v)}


def _is_classvar(hint: Any) -> bool:
    return typing.get_origin(hint) is typing.ClassVar or hint is typing.ClassVar


def _strip_required(hint: Any) -> Any:
    """Unwrap ``Required[...]``/``NotRequired[...]``/``ReadOnly[...]`` wrappers."""
    origin = typing.get_origin(hint)
    name = getattr(origin, "_name", None) or getattr(origin, "__name__", "")
    if name in ("Required", "NotRequired", "ReadOnly"):
        return _strip_required(typing.get_args(hint)[0])
    return hint


def check_reducer(func: Callable[..., Any]) -> None:
    """Raise ``ValueError`` unless ``func`` takes exactly two positional arguments."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return
    positional = sum(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in sig.parameters.values()
    )
    if positional != 2:
        raise ValueError(f"Invalid reducer signature. Expected (a, b) -> c. Got {sig}")


def _channel_for(key: str, hint: Any) -> BaseChannel | type[ManagedValue]:
    hint = _strip_required(hint)
    if typing.get_origin(hint) is typing.Annotated:
        base, *meta = typing.get_args(hint)
        for item in reversed(meta):
            if isinstance(item, BaseChannel):
                ch = item.copy()
                ch.key = key
                return ch
            if isinstance(item, type) and issubclass(item, BaseChannel):
                return item(base, key=key)
            if is_managed_value(item):
                return item
        last = meta[-1]
        if callable(last) and not isinstance(last, type):
            check_reducer(last)
            return BinaryOperatorAggregate(base, last, key=key)
        return LastValue(base, key=key)
    return LastValue(hint, key=key)


def _kind(schema: Any) -> str:
    if is_pydantic_class(schema):
        return "pydantic"
    if dataclasses.is_dataclass(schema):
        return "dataclass"
    return "dict"


def schema_info(schema: Any) -> SchemaInfo:
    """Channels and managed values declared by ``schema``."""
    channels: dict[str, BaseChannel] = {}
    managed: dict[str, type[ManagedValue]] = {}
    if is_root_schema(schema):
        root = _channel_for(ROOT, schema)
        if not isinstance(root, BaseChannel):
            raise ValueError(f"A managed value cannot be the whole state: {schema!r}.")
        return SchemaInfo(schema, {ROOT: root}, managed, "root")
    for key, hint in _type_hints(schema).items():
        spec = _channel_for(key, hint)
        if isinstance(spec, BaseChannel):
            channels[key] = spec
        else:
            managed[key] = spec
    return SchemaInfo(schema, channels, managed, _kind(schema))


def make_mapper(schema: Any, node: str) -> Callable[[dict[str, Any]], Any] | None:
    """A function turning a dict of channel values into ``schema`` (None for dicts).

    For pydantic schemas a validation error names the node whose input failed.
    """
    kind = _kind(schema)
    if kind == "dict":
        return None
    if kind == "dataclass":
        names = {f.name for f in dataclasses.fields(schema)}

        def to_dataclass(values: dict[str, Any]) -> Any:
            if not names.issuperset(values):
                values = {k: v for k, v in values.items() if k in names}
            try:
                return schema(**values)
            except TypeError as exc:
                raise TypeError(
                    f"Cannot build the input of node '{node}' as {schema.__name__}: {exc}. "
                    "Give the missing fields defaults or provide them in the input."
                ) from exc

        return to_dataclass

    from stategraph.graph._model_input import model_inputs

    fields = set(schema.model_fields)
    inputs = model_inputs(schema)
    validate = schema.model_validate if inputs is None else inputs.validate

    def to_model(values: dict[str, Any]) -> Any:
        if not fields.issuperset(values):
            values = {k: v for k, v in values.items() if k in fields}
        try:
            return validate(values)
        except Exception as exc:
            add_note(exc, f"While validating the input of node '{node}' as {schema.__name__}.")
            raise

    return to_model
