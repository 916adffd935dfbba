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

from collections.abc import Iterable, Sequence
from threading import get_ident
from typing import TYPE_CHECKING, Any

import ormsgpack

from stategraph.checkpoint.serde._allowlist import TypeRegistry, collect_schema_types
from stategraph.checkpoint.serde._ext import FAST_OPTIONS, EncodeFn, Encoder, Unencodable
from stategraph.checkpoint.serde.base import (
    DeserializationError,
    SerializationError,
    SerializerProtocol,
    UnknownTypeWarning,
    typed_pair,
)

if TYPE_CHECKING:
    from stategraph.checkpoint.serde._decode import Decoder

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


def _resolve_class(entry: Any) -> type:
    """A class, or the class a ``(module, qualname)`` pair names."""
    if isinstance(entry, type):
        return entry
    if isinstance(entry, (tuple, list)) and len(entry) == 2:
        import importlib

        module, qualname = entry
        try:
            obj: Any = importlib.import_module(module)
            for part in qualname.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise ValueError(
                f"allowed_msgpack_modules names {module}.{qualname}, which cannot be "
                f"imported: {exc}."
            ) from exc
        if isinstance(obj, type):
            return obj
    raise TypeError(
        "allowed_msgpack_modules entries must be classes or (module, qualname) pairs, "
        f"got {entry!r}."
    )


def _revive_lc(value: Any, allowed: bool | tuple[tuple[str, ...], ...]) -> Any:
    """Rebuild stategraph objects from LangChain-style constructor dicts (old JSON)."""
    if isinstance(value, list):
        return [_revive_lc(v, allowed) for v in value]
    if not isinstance(value, dict):
        return value
    if value.get("type") == "constructor" and "lc" in value and isinstance(value.get("id"), list):
        path = [str(p) for p in value["id"]]
        kwargs = {k: _revive_lc(v, allowed) for k, v in (value.get("kwargs") or {}).items()}
        permitted = allowed is True or any(
            tuple(path[: len(prefix)]) == prefix for prefix in allowed or ()
        )
        # only the value types of stategraph.types (Interrupt, Send, Command...) are
        # rebuilt: a checkpoint must never choose what gets imported or constructed
        if permitted and len(path) == 3 and path[0] in ("langgraph", "stategraph"):
            if path[1] == "types":
                from stategraph import types as sg_types

                cls = getattr(sg_types, path[2], None)
                if isinstance(cls, type) and path[2] in sg_types.__all__:
                    return cls(**kwargs)
        return kwargs
    return {k: _revive_lc(v, allowed) for k, v in value.items()}


class JsonPlusSerializer:
    """Msgpack serializer that keeps value types and loads only allowed classes.

    ``allowed_types`` are classes (with the classes their fields mention) that may be
    constructed at load time, in addition to stategraph's own. With ``strict=True`` a
    value of a class that is not allowed raises :class:`DeserializationError` instead of
    loading as plain data with a warning. ``pickle_fallback=True`` pickles values msgpack
    cannot encode and accepts ``"pickle"`` payloads: only for data you trust.
    """

    __slots__ = (
        "_cache",
        "_decoders",
        "_fast",
        "_json_modules",
        "_registry",
        "_strict",
        "_top",
        "pickle_fallback",
    )

    def __init__(
        self,
        *,
        allowed_types: Iterable[type] = (),
        strict: bool = False,
        pickle_fallback: bool = False,
        allowed_msgpack_modules: Iterable[tuple[str, str] | type] | bool | None = None,
        allowed_json_modules: Iterable[Sequence[str]] | bool | None = None,
    ) -> None:
        """Create a serializer; see the class docstring for the options.

        ``allowed_msgpack_modules`` (LangGraph's spelling) lists more classes to allow,
        as classes or ``(module, qualname)`` pairs; ``True``/``None`` add nothing (the
        allowlist is never switched off). ``allowed_json_modules`` revives LangChain-style
        ``{"lc": ..., "type": "constructor"}`` objects of ``"json"`` payloads written by
        older LangGraph versions, for stategraph's own classes only: ``True`` for all of
        them, or a list of module paths such as ``[("langgraph", "types")]``.
        """
        self._registry = TypeRegistry()
        self._cache: dict[type, EncodeFn] = {}
        self._fast = Encoder(self._registry, self._cache, slow=False)
        self._top = self._fast.outermost()
        self._strict = strict
        self._decoders: dict[int, Decoder] = {}  # one per thread (they count depth)
        self.pickle_fallback = pickle_fallback
        types = list(allowed_types)
        if allowed_msgpack_modules is not None and not isinstance(allowed_msgpack_modules, bool):
            types.extend(_resolve_class(entry) for entry in allowed_msgpack_modules)
        if types:
            self.allow(*types)
        self._json_modules: bool | tuple[tuple[str, ...], ...]
        if allowed_json_modules is None or isinstance(allowed_json_modules, bool):
            self._json_modules = bool(allowed_json_modules)
        else:
            self._json_modules = tuple(tuple(path) for path in allowed_json_modules)

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
        self._decoders = {}

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
            return ("msgpack", self._dumps_fast(obj, tp))
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

    def _dumps_fast(self, obj: Any, tp: type) -> bytes:
        """Encode natively (``str`` dict keys only); raise ``TypeError`` otherwise.

        A value of a class already handed to the encoders (a message dataclass, a
        pydantic model...) is encoded by its encode function directly, which writes the
        extension's bytes at their final size (see
        :func:`~stategraph.checkpoint.serde._ext.ext_bytes`): the same bytes
        as ormsgpack's, without a growing copy of a large payload. (``int`` is left
        to ormsgpack: only the big ones are extensions.)"""
        fn = self._cache.get(tp)
        if fn is None or tp is int:
            return ormsgpack.packb(obj, default=self._fast.default, option=FAST_OPTIONS)
        try:
            packed: Any = fn(self._top, obj)
        except Exception as exc:  # as ormsgpack reports a failing ``default``
            raise TypeError(f"Type is not msgpack serializable: {_type_name(tp)}") from exc
        return packed if type(packed) is bytes else ormsgpack.packb(packed)

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

        Raises :class:`DeserializationError` for anything that cannot be loaded: an
        unknown tag, a payload that is not bytes, a malformed or hostile payload (too
        deep, hash-flooded, oversized), a ``"pickle"`` payload while ``pickle_fallback``
        is off, or (strict mode) a class that is not allowed. Loading takes time and
        memory proportional to the payload's size.
        """
        type_, payload = typed_pair(data)
        if type_ == "msgpack" and type(payload) is bytes:
            return self._loads_msgpack(payload)
        if type_ == "null":
            return None
        if not isinstance(type_, str):
            raise DeserializationError(
                f"Unknown serialization type {type_!r}: expected 'msgpack', 'null', "
                f"'bytes', 'bytearray', 'json' or 'pickle'."
            )
        if not isinstance(payload, (bytes, bytearray, memoryview)):
            raise DeserializationError(
                f"Cannot load a {type_!r} payload of type {type(payload).__name__}: "
                f"payloads are bytes."
            )
        if type_ == "msgpack":
            return self._loads_msgpack(payload)
        if type_ == "bytes":
            return bytes(payload)
        if type_ == "bytearray":
            return bytearray(payload)
        if type_ == "json":
            return self._loads_json(bytes(payload))
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

    def _loads_json(self, payload: bytes) -> Any:
        import json

        from stategraph.checkpoint.serde._limits import check_json_depth

        check_json_depth(payload)
        try:
            value = json.loads(payload)
            return _revive_lc(value, self._json_modules) if self._json_modules else value
        except DeserializationError:
            raise
        except (ValueError, TypeError, RecursionError, UnicodeDecodeError) as exc:
            raise DeserializationError(
                f"Cannot load a 'json' payload ({len(payload)} bytes): {exc}"
            ) from exc

    def _loads_msgpack(self, payload: bytes | bytearray | memoryview) -> Any:
        tid = get_ident()
        dec = self._decoders.get(tid)
        if dec is None or dec.levels:  # none yet, or in use by this thread (re-entrant)
            from stategraph.checkpoint.serde._decode import Decoder  # first load: not before

            dec = Decoder(self._registry, self._strict, record=False)
            if len(self._decoders) > 256:
                self._decoders.clear()
            self._decoders[tid] = dec
        try:
            return dec.load(payload)
        except DeserializationError:
            raise  # refused by a check of the top level (hash flooding...), not by a hook
        except (ValueError, TypeError, RecursionError) as exc:
            first_error: BaseException = exc
        # Failed: run again with a decoder that keeps the original error of the hook.
        from stategraph.checkpoint.serde._decode import Decoder

        dec = Decoder(self._registry, self._strict)
        try:
            value = dec.load(payload)
        except (ValueError, TypeError, RecursionError) as exc:
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
