"""The default checkpoint serializer: msgpack with type-preserving extensions.

It is named ``JsonPlusSerializer`` for LangGraph compatibility, but it writes msgpack
(via ormsgpack). Values come back with their types: dataclasses, pydantic models,
NamedTuples, enums, datetimes (with their time zones), UUIDs, decimals, sets, tuples,
paths, regexes, ``defaultdict``/``OrderedDict``/``Counter``/``deque``, exceptions and
stategraph's own ``Send``/``Interrupt``/``Command``/``Overwrite`` and messages.

Loading is safe: a class is constructed only if it is allowed — stategraph's own
classes, classes registered with :meth:`JsonPlusSerializer.allow` or ``allowed_types=``
(a compiled graph registers the classes of its schemas). Anything else loads as plain
data with an :class:`UnknownTypeWarning`, or raises :class:`DeserializationError` when
``strict=True``. Pickle is used only with ``pickle_fallback=True``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import ormsgpack

from stategraph.checkpoint.serde._allowlist import TypeRegistry, collect_schema_types
from stategraph.checkpoint.serde._decode import Decoder
from stategraph.checkpoint.serde._ext import FAST_OPTIONS, EncodeFn, Encoder, Unencodable
from stategraph.checkpoint.serde.base import (
    DeserializationError,
    SerializationError,
    SerializerProtocol,
    UnknownTypeWarning,
)

__all__ = [
    "JsonPlusSerializer",
    "SerializationError",
    "DeserializationError",
    "UnknownTypeWarning",
    "collect_schema_types",
    "dumps_channel",
]

_HINT = (
    "Store JSON-like data, dataclasses, pydantic models, NamedTuples, enums or standard "
    "values; register a plain class with serde.allow(TheClass); or create the serializer "
    "with JsonPlusSerializer(pickle_fallback=True)."
)


def _type_name(tp: type) -> str:
    module = tp.__module__
    return tp.__qualname__ if module == "builtins" else f"{module}.{tp.__qualname__}"


def _is_type_hint(obj: Any) -> bool:
    """Whether ``obj`` is a typing construct (``list[X]``, ``Optional[X]``, a TypeVar...)."""
    from typing import get_origin

    return get_origin(obj) is not None or type(obj).__module__ in (
        "typing",
        "typing_extensions",
        "types",
    )


def _describe_failure(obj: Any, recorded: BaseException | None, exc: BaseException) -> str:
    """What could not be serialized and why, without the leading 'Cannot serialize'."""
    top = _type_name(type(obj))
    if isinstance(recorded, Unencodable):
        culprit = _type_name(recorded.tp)
        where = "" if recorded.tp is type(obj) else f" It contains a value of type '{culprit}'."
        return (
            f"value of type '{top}' is not serializable.{where} '{culprit}' is not supported: "
            f"{recorded.reason}. {_HINT}"
        )
    cause = recorded if recorded is not None else exc
    return f"value of type '{top}' is not serializable: {cause}. {_HINT}"


class JsonPlusSerializer:
    """Msgpack serializer that keeps value types and loads only allowed classes.

    ``allowed_types`` are classes (with the classes their fields mention) that may be
    constructed at load time, in addition to stategraph's own. With ``strict=True`` a
    value of a class that is not allowed raises :class:`DeserializationError` instead of
    loading as plain data with a warning. ``pickle_fallback=True`` pickles values msgpack
    cannot encode and accepts ``"pickle"`` payloads: only for data you trust.
    """

    __slots__ = ("_cache", "_decoder", "_fast", "_registry", "_strict", "pickle_fallback")

    def __init__(
        self,
        *,
        allowed_types: Iterable[type] = (),
        strict: bool = False,
        pickle_fallback: bool = False,
    ) -> None:
        """Create a serializer; see the class docstring for the options."""
        self._registry = TypeRegistry()
        self._cache: dict[type, EncodeFn] = {}
        self._fast = Encoder(self._registry, self._cache, slow=False)
        self._strict = strict
        self._decoder = Decoder(self._registry, strict, record=False)
        self.pickle_fallback = pickle_fallback
        types = tuple(allowed_types)
        if types:
            self.allow(*types)

    def __repr__(self) -> str:
        """Show the options and how many classes were registered."""
        return (
            f"JsonPlusSerializer(strict={self.strict}, pickle_fallback={self.pickle_fallback}, "
            f"allowed_types=<{len(self._registry)} classes>)"
        )

    @property
    def strict(self) -> bool:
        """Whether a class that is not allowed raises instead of loading as plain data."""
        return self._strict

    @strict.setter
    def strict(self, value: bool) -> None:
        self._strict = value
        self._decoder = Decoder(self._registry, value, record=False)

    # ------------------------------------------------------------------ allowlist

    def allow(self, *types: type) -> None:
        """Allow ``types`` to be constructed at load time, and the classes they mention.

        Each class's fields are walked with :func:`collect_schema_types`, so allowing a
        pydantic model also allows its sub-models, enums and dataclasses; type hints
        (``list[Item]``, ``Optional[Item]``, ``Annotated[...]``) are accepted and walked
        too. Registering a plain class (neither dataclass nor pydantic) also lets it be
        *dumped*: its ``__dict__``/slots are stored and restored without ``__init__``.
        """
        for tp in types:
            if not isinstance(tp, type) and not _is_type_hint(tp):
                raise TypeError(
                    f"Only classes (or type hints such as list[Item]) can be allowed for "
                    f"deserialization, got {tp!r} ({type(tp).__name__})."
                )
        self._registry.add(*(tp for tp in types if isinstance(tp, type)))
        self._registry.add(*collect_schema_types(*types))
        self._cache.clear()

    @property
    def allowed_types(self) -> frozenset[type]:
        """The registered classes (stategraph's own classes are always allowed too)."""
        return frozenset(self._registry)

    def with_msgpack_allowlist(self, types: Iterable[type]) -> JsonPlusSerializer:
        """A copy of this serializer that also allows ``types``."""
        new = JsonPlusSerializer(strict=self.strict, pickle_fallback=self.pickle_fallback)
        new._registry.add(*self._registry)
        new.allow(*types)
        return new

    # ---------------------------------------------------------------------- dumps

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize ``obj`` to ``(type_tag, payload)``.

        ``None`` gives ``("null", b"")``, ``bytes`` ``("bytes", raw)``, ``bytearray``
        ``("bytearray", raw)``, anything else ``("msgpack", data)`` — or ``("pickle", data)``
        when msgpack cannot encode it and ``pickle_fallback`` is on. Raises
        :class:`SerializationError` (a ``TypeError``) naming the offending type.
        """
        if obj is None:
            return ("null", b"")
        tp = type(obj)
        if tp is bytes:
            return ("bytes", obj)
        if tp is bytearray:
            return ("bytearray", bytes(obj))
        try:
            return (
                "msgpack",
                ormsgpack.packb(obj, default=self._fast.default, option=FAST_OPTIONS),
            )
        except TypeError:
            pass
        try:
            return ("msgpack", self._dumps_slow(obj))
        except SerializationError:
            if not self.pickle_fallback:
                raise
            import pickle

            try:
                return ("pickle", pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
            except Exception as exc:
                raise SerializationError(
                    f"Cannot serialize a value of type '{_type_name(tp)}' with msgpack nor "
                    f"pickle: {exc}"
                ) from exc

    def _dumps_slow(self, obj: Any) -> bytes:
        """Encode with the pre-walk (non-``str`` keys) and precise error reporting."""
        enc = Encoder(self._registry, self._cache, slow=True)
        try:
            return enc.pack(obj)
        except (TypeError, ValueError, RecursionError, OverflowError) as exc:
            detail = _describe_failure(obj, enc.error, exc)
            raise SerializationError(detail[:1].upper() + detail[1:], detail=detail) from (
                enc.error or exc
            )

    # ---------------------------------------------------------------------- loads

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Rebuild a value from ``(type_tag, payload)``.

        Raises :class:`DeserializationError` for an unknown tag, a malformed payload, a
        ``"pickle"`` payload while ``pickle_fallback`` is off, or (strict mode) a class
        that is not allowed.
        """
        type_, payload = data
        if type_ == "msgpack":
            return self._loads_msgpack(payload)
        if type_ == "null":
            return None
        if type_ == "bytes":
            return bytes(payload)
        if type_ == "bytearray":
            return bytearray(payload)
        if type_ == "json":
            import json

            return json.loads(payload)
        if type_ == "pickle":
            if not self.pickle_fallback:
                raise DeserializationError(
                    "Refusing to load a 'pickle' payload: unpickling can run arbitrary code. "
                    "If this data comes from a source you trust, load it with "
                    "JsonPlusSerializer(pickle_fallback=True)."
                )
            import pickle

            return pickle.loads(payload)
        raise DeserializationError(
            f"Unknown serialization type {type_!r}: expected 'msgpack', 'null', 'bytes', "
            f"'bytearray', 'json' or 'pickle'."
        )

    def _loads_msgpack(self, payload: bytes) -> Any:
        try:
            return self._decoder.unpack(payload)
        except (ValueError, TypeError) as exc:
            first_error: BaseException = exc
        # Failed: run again with a decoder that keeps the original error of the hook.
        dec = Decoder(self._registry, self._strict)
        try:
            value = dec.unpack(payload)
        except (ValueError, TypeError) as exc:
            first_error = exc
        else:
            return value  # the first failure did not happen again
        error = dec.error
        if isinstance(error, (DeserializationError, Warning)) or (
            error is not None and not isinstance(error, Exception)
        ):
            raise error from None
        cause = error if error is not None else first_error
        raise DeserializationError(
            f"Cannot load a msgpack payload ({len(payload)} bytes): {cause!r}"
        ) from cause


def dumps_channel(serde: SerializerProtocol, channel: str, value: Any) -> tuple[str, bytes]:
    """``serde.dumps_typed(value)``, naming ``channel`` in the error if that fails."""
    try:
        return serde.dumps_typed(value)
    except SerializationError as exc:
        raise SerializationError(
            f"Cannot serialize the value of channel '{channel}': {exc.detail}",
            detail=exc.detail,
        ) from exc
    except TypeError as exc:
        raise SerializationError(
            f"Cannot serialize the value of channel '{channel}': value of type "
            f"'{_type_name(type(value))}' is not serializable: {exc}. {_HINT}"
        ) from exc
