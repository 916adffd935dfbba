"""The serializer contract used by checkpoint savers, and the serializer errors.

A saver turns every value it stores into a ``(type_tag, payload)`` pair with
:meth:`SerializerProtocol.dumps_typed` and back with :meth:`SerializerProtocol.loads_typed`.
The tag says how ``payload`` is encoded (``"msgpack"``, ``"null"``, ``"bytes"``, ...), so
a saver can store it in two columns and never needs to look inside.

This module is light on purpose: it imports nothing heavy, so savers and the checkpoint
base classes can depend on it for free.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = [
    "SerializerProtocol",
    "UntypedSerializerProtocol",
    "SerializationError",
    "DeserializationError",
    "UnknownTypeWarning",
    "maybe_add_typed_methods",
]


@runtime_checkable
class SerializerProtocol(Protocol):
    """Turns values into tagged bytes and back; what every checkpoint saver uses."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize ``obj`` into ``(type_tag, payload)``."""
        ...

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Rebuild the value from a ``(type_tag, payload)`` pair made by :meth:`dumps_typed`."""
        ...


@runtime_checkable
class UntypedSerializerProtocol(Protocol):
    """A serializer with plain ``dumps``/``loads`` (no type tag), e.g. a JSON module."""

    def dumps(self, obj: Any) -> bytes:
        """Serialize ``obj`` to bytes."""
        ...

    def loads(self, data: bytes) -> Any:
        """Rebuild a value from bytes made by :meth:`dumps`."""
        ...


class SerializationError(TypeError):
    """A value cannot be serialized (a lambda, an open file, a socket, ...).

    The message names the value's type and, when known, the channel that held it.
    ``detail`` is the message without its leading "Cannot serialize ..." context, so a
    caller can re-raise it with more context (see ``jsonplus.dumps_channel``).
    """

    def __init__(self, message: str, *, detail: str | None = None) -> None:
        """Create the error; ``detail`` defaults to ``message``."""
        super().__init__(message)
        self.detail = message if detail is None else detail


class DeserializationError(ValueError):
    """A payload cannot be loaded: malformed, refused (pickle is off) or not allowed.

    In strict mode, a payload naming a type that is not on the serializer's allowlist
    raises this error instead of loading as plain data.
    """


def typed_pair(data: Any) -> tuple[Any, Any]:
    """``(type_tag, payload)`` of what ``loads_typed`` was given; a
    :class:`DeserializationError` for anything that is not such a pair."""
    try:
        type_, payload = data
    except (TypeError, ValueError):
        raise DeserializationError(
            f"Expected a (type_tag, payload) pair to load, got {type(data).__name__}."
        ) from None
    return type_, payload


class UnknownTypeWarning(UserWarning):
    """A saved value named a type that is not allowed, so it was loaded as plain data."""


class _UntypedAdapter:
    """Gives an untyped serializer the typed methods, tagging payloads ``"untyped"``."""

    __slots__ = ("inner",)

    def __init__(self, inner: UntypedSerializerProtocol) -> None:
        self.inner = inner

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize with the wrapped ``dumps``; ``None`` stays ``("null", b"")``."""
        if obj is None:
            return ("null", b"")
        return ("untyped", self.inner.dumps(obj))

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Load with the wrapped ``loads``."""
        type_, payload = data
        if type_ == "null":
            return None
        if type_ != "untyped":
            raise DeserializationError(
                f"This serializer wraps an untyped serializer and cannot load payloads "
                f"tagged {type_!r}; use the serializer that wrote them."
            )
        return self.inner.loads(payload)


def maybe_add_typed_methods(
    serde: SerializerProtocol | UntypedSerializerProtocol,
) -> SerializerProtocol:
    """Return ``serde`` itself if it has ``dumps_typed``, else a typed wrapper around it."""
    if hasattr(serde, "dumps_typed") and hasattr(serde, "loads_typed"):
        return serde  # type: ignore[return-value]
    if hasattr(serde, "dumps") and hasattr(serde, "loads"):
        return _UntypedAdapter(serde)
    raise TypeError(
        f"{type(serde).__name__} is not a serializer: it needs dumps_typed/loads_typed "
        f"or dumps/loads methods."
    )
