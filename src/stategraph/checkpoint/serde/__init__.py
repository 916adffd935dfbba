"""Serializers for checkpoint savers.

* :mod:`stategraph.checkpoint.serde.base` — :class:`SerializerProtocol`, the contract,
  and the serializer errors (light, no third-party imports).
* :mod:`stategraph.checkpoint.serde.jsonplus` — :class:`JsonPlusSerializer`, the default
  msgpack serializer that keeps value types and loads only allowed classes.

Names are re-exported lazily so importing this package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stategraph._lazy import lazy_attributes

__all__ = [
    "SerializerProtocol",
    "UntypedSerializerProtocol",
    "SerializationError",
    "DeserializationError",
    "UnknownTypeWarning",
    "JsonPlusSerializer",
    "collect_schema_types",
    "dumps_channel",
]

_LAZY = {
    "SerializerProtocol": "stategraph.checkpoint.serde.base",
    "UntypedSerializerProtocol": "stategraph.checkpoint.serde.base",
    "SerializationError": "stategraph.checkpoint.serde.base",
    "DeserializationError": "stategraph.checkpoint.serde.base",
    "UnknownTypeWarning": "stategraph.checkpoint.serde.base",
    "JsonPlusSerializer": "stategraph.checkpoint.serde.jsonplus",
    "collect_schema_types": "stategraph.checkpoint.serde.jsonplus",
    "dumps_channel": "stategraph.checkpoint.serde.jsonplus",
}

if TYPE_CHECKING:
    from stategraph.checkpoint.serde.base import (
        DeserializationError,
        SerializationError,
        SerializerProtocol,
        UnknownTypeWarning,
        UntypedSerializerProtocol,
    )
    from stategraph.checkpoint.serde.jsonplus import (
        JsonPlusSerializer,
        collect_schema_types,
        dumps_channel,
    )


__getattr__ = lazy_attributes(__name__, _LAZY, globals())[0]
"""Import the public names on first use."""


def __dir__() -> list[str]:
    """List the public names alongside the module attributes."""
    return sorted(set(globals()) | set(__all__))
