"""One encode function per kind of value, and :func:`resolve_encoder` to pick it.

Each function turns a value into a msgpack extension (see the codes in
:mod:`stategraph.checkpoint.serde._ext`). Standard types get dedicated codes whose
payload never names a class; user classes (dataclasses, pydantic models, NamedTuples,
enums, exceptions, builtin subclasses, registered plain classes) are stored as
``[module, qualname, payload]`` and rebuilt at load time only if allowed.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import re
import sys
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ormsgpack

from stategraph.checkpoint.serde._allowlist import TypeRegistry
from stategraph.checkpoint.serde._ext import (
    EXT_BIGINT,
    EXT_COMPLEX,
    EXT_COUNTER,
    EXT_DATACLASS,
    EXT_DATE,
    EXT_DATETIME,
    EXT_DECIMAL,
    EXT_DEFAULTDICT,
    EXT_DEQUE,
    EXT_ENUM,
    EXT_EXCEPTION,
    EXT_FROZENSET,
    EXT_NAMEDTUPLE,
    EXT_OBJECT,
    EXT_ORDERED_DICT,
    EXT_PAIRS_DICT,
    EXT_PATH,
    EXT_PATTERN,
    EXT_PYDANTIC,
    EXT_PYDANTIC_V1,
    EXT_SEND,
    EXT_SET,
    EXT_SUBCLASS,
    EXT_TIME,
    EXT_TIMEDELTA,
    EXT_TUPLE,
    EXT_TZINFO,
    EXT_UUID,
    FACTORY_NAMES,
    PATTERN_TYPE,
    SUBCLASS_BASES,
    EncodeFn,
    Encoder,
    PairsDict,
    Unencodable,
    class_ref,
    flat_pairs,
    path_types,
)

if TYPE_CHECKING:
    import pathlib

# ------------------------------------------------------------------------- encoders


def _enc_tuple(enc: Encoder, obj: Any) -> ormsgpack.Ext:
    return enc.ext(EXT_TUPLE, list(obj))


def _enc_set(enc: Encoder, obj: Any) -> ormsgpack.Ext:
    return enc.ext(EXT_SET, list(obj))


def _enc_frozenset(enc: Encoder, obj: Any) -> ormsgpack.Ext:
    return enc.ext(EXT_FROZENSET, list(obj))


def tz_payload(tz: datetime.tzinfo | None, when: datetime.datetime | None) -> Any:
    """Encode a tzinfo: ``None``, ``["z", key]`` (zoneinfo) or ``["o", d, s, us, name]``."""
    if tz is None:
        return None
    if type(tz) is datetime.timezone:
        args = tz.__getinitargs__()  # type: ignore[attr-defined]
        offset = args[0]
        name = args[1] if len(args) > 1 else None
        return ["o", offset.days, offset.seconds, offset.microseconds, name]
    key = getattr(tz, "key", None)
    if type(tz).__module__ == "zoneinfo" and isinstance(key, str):
        return ["z", key]
    offset = tz.utcoffset(when)
    if offset is None:
        return None
    return ["o", offset.days, offset.seconds, offset.microseconds, tz.tzname(when)]


def _enc_datetime(enc: Encoder, obj: datetime.datetime) -> ormsgpack.Ext:
    return enc.ext(
        EXT_DATETIME,
        [
            obj.year,
            obj.month,
            obj.day,
            obj.hour,
            obj.minute,
            obj.second,
            obj.microsecond,
            tz_payload(obj.tzinfo, obj),
            obj.fold,
        ],
    )


def _enc_date(enc: Encoder, obj: datetime.date) -> ormsgpack.Ext:
    return enc.ext(EXT_DATE, [obj.year, obj.month, obj.day])


def _enc_time(enc: Encoder, obj: datetime.time) -> ormsgpack.Ext:
    tz = tz_payload(obj.tzinfo, None)
    return enc.ext(EXT_TIME, [obj.hour, obj.minute, obj.second, obj.microsecond, tz, obj.fold])


def _enc_timedelta(enc: Encoder, obj: datetime.timedelta) -> ormsgpack.Ext:
    return enc.ext(EXT_TIMEDELTA, [obj.days, obj.seconds, obj.microseconds])


def _enc_tzinfo(enc: Encoder, obj: datetime.tzinfo) -> ormsgpack.Ext:
    payload = tz_payload(obj, None)
    if payload is None:
        raise Unencodable(type(obj), "this time zone has no fixed offset nor zoneinfo key")
    return enc.ext(EXT_TZINFO, payload)


def _enc_uuid(enc: Encoder, obj: uuid.UUID) -> ormsgpack.Ext:
    return enc.wrap(EXT_UUID, obj.bytes)


def _enc_decimal(enc: Encoder, obj: decimal.Decimal) -> ormsgpack.Ext:
    return enc.wrap(EXT_DECIMAL, str(obj).encode())


def _enc_bigint(enc: Encoder, obj: int) -> ormsgpack.Ext:
    size = obj.bit_length() // 8 + 1
    return enc.wrap(EXT_BIGINT, int(obj).to_bytes(size, "big", signed=True))


def _enc_complex(enc: Encoder, obj: complex) -> ormsgpack.Ext:
    return enc.ext(EXT_COMPLEX, [obj.real, obj.imag])


def _enc_path(enc: Encoder, obj: pathlib.PurePath) -> ormsgpack.Ext:
    import pathlib

    tp = type(obj)
    types = path_types()
    if tp in types:
        kind = types.index(tp)
    else:
        windows = isinstance(obj, pathlib.PureWindowsPath)
        concrete = isinstance(obj, pathlib.Path)
        kind = (1 if windows else 0) + (2 if concrete else 0)
    return enc.ext(EXT_PATH, [kind, str(obj)])


def _enc_pattern(enc: Encoder, obj: re.Pattern[Any]) -> ormsgpack.Ext:
    from stategraph.checkpoint.serde._limits import MAX_PATTERN

    if len(obj.pattern) > MAX_PATTERN:
        raise Unencodable(
            type(obj),
            f"a regular expression longer than {MAX_PATTERN} characters cannot be stored",
        )
    # re.DEBUG only prints while compiling; the loader refuses it
    return enc.ext(EXT_PATTERN, [obj.pattern, obj.flags & ~int(re.DEBUG)])


def _enc_deque(enc: Encoder, obj: collections.deque[Any]) -> ormsgpack.Ext:
    return enc.ext(EXT_DEQUE, [list(obj), obj.maxlen])


def _enc_ordered_dict(enc: Encoder, obj: Any) -> ormsgpack.Ext:
    return enc.ext(EXT_ORDERED_DICT, flat_pairs(obj))


def _enc_counter(enc: Encoder, obj: Any) -> ormsgpack.Ext:
    return enc.ext(EXT_COUNTER, flat_pairs(obj))


def factory_ref(factory: Any) -> Any:
    """How a ``defaultdict`` factory is stored: ``None``, a safe name or a class ref."""
    if factory is None:
        return None
    try:
        name = FACTORY_NAMES.get(factory)
    except TypeError:  # an unhashable callable
        name = None
    if name is not None:
        return name
    module = getattr(factory, "__module__", None) or type(factory).__module__
    qualname = getattr(factory, "__qualname__", None) or type(factory).__qualname__
    return [str(module), str(qualname)]


def _enc_defaultdict(enc: Encoder, obj: collections.defaultdict[Any, Any]) -> ormsgpack.Ext:
    return enc.ext(EXT_DEFAULTDICT, [factory_ref(obj.default_factory), flat_pairs(obj)])


def _enc_pairs(enc: Encoder, obj: PairsDict) -> ormsgpack.Ext:
    return enc.ext(EXT_PAIRS_DICT, flat_pairs(obj.value))


def _enc_enum(enc: Encoder, obj: enum.Enum) -> ormsgpack.Ext:
    tp = type(obj)
    return enc.ext(EXT_ENUM, [tp.__module__, tp.__qualname__, obj.value])


def _enc_send(enc: Encoder, obj: Any) -> ormsgpack.Ext:
    policy = getattr(obj, "timeout", None)
    if policy is None:
        return enc.ext(EXT_SEND, [obj.node, obj.arg])
    # the policy travels as plain fields, so loading it needs no allowlist entry
    limits = [policy.run_timeout, policy.idle_timeout, policy.refresh_on]
    return enc.ext(EXT_SEND, [obj.node, obj.arg, limits])


def _enc_exception(enc: Encoder, obj: BaseException) -> ormsgpack.Ext:
    tp = type(obj)
    head = [tp.__module__, tp.__qualname__]
    text = repr(obj)
    if not enc.slow:  # any failure re-runs in slow mode, which can fall back below
        return enc.ext(EXT_EXCEPTION, [*head, list(obj.args), text])
    saved = enc.error
    try:
        return enc.ext(EXT_EXCEPTION, [*head, list(obj.args), text])
    except Exception:
        enc.error = saved  # arguments that cannot be stored are replaced by the message
        return enc.ext(EXT_EXCEPTION, [*head, [str(obj)], text])


# -------------------------------------------------------------- class-based encoders


_FACTORY_DEFAULT = getattr(dataclasses, "_HAS_DEFAULT_FACTORY", object())
"""What a generated dataclass ``__init__`` shows as the default of a ``default_factory``
field."""
_EXACT_DEFAULT_TYPES = (str, int, bytes)
"""Defaults whose equal values are interchangeable with them (``-0.0 == 0.0``, so floats
are omitted only when they are the default object itself)."""


def default_checks(tp: type) -> tuple[tuple[str, Callable[[Any], bool]], ...]:
    """``(field, is_default)`` for the fields of dataclass ``tp`` that ``tp(**values)``
    fills in when they are left out: a value for which ``is_default`` holds can be
    omitted from storage and comes back identical (the decoder calls ``tp(**values)``).

    The defaults are read from ``tp.__init__``'s signature, so a hand-written
    ``__init__`` is followed too; a class whose ``__init__`` needs an argument that is
    not a field (a required ``InitVar``) omits nothing (the decoder then restores the
    fields as stored). A default is matched by identity, by equality for ``str``,
    ``int`` and ``bytes`` of the same type, and, for a ``list`` or ``dict``
    ``default_factory``, by being an empty one of exactly that type."""
    import inspect

    fields = {f.name: f for f in dataclasses.fields(tp)}
    try:
        params = inspect.signature(tp.__init__).parameters  # type: ignore[misc]
    except (TypeError, ValueError):
        return ()
    checks: list[tuple[str, Callable[[Any], bool]]] = []
    for i, (name, param) in enumerate(params.items()):
        if i == 0 or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue  # self, *args, **kwargs
        default = param.default
        if default is param.empty:
            if name not in fields:
                return ()  # a required InitVar: the decoder cannot call tp(**values)
            continue
        if name not in fields or param.kind is param.POSITIONAL_ONLY:
            continue
        if default is _FACTORY_DEFAULT:
            factory = fields[name].default_factory
            if factory is list or factory is dict:
                checks.append((name, _empty_of(factory)))
        else:
            checks.append((name, _matches(default)))
    return tuple(checks)


def _empty_of(tp: type) -> Callable[[Any], bool]:
    def is_default(value: Any) -> bool:
        return type(value) is tp and not value

    return is_default


def _matches(default: Any) -> Callable[[Any], bool]:
    exact = type(default) in _EXACT_DEFAULT_TYPES

    def is_default(value: Any) -> bool:
        return value is default or (exact and type(value) is type(default) and value == default)

    return is_default


def _dataclass_encoder(tp: type) -> EncodeFn:
    names = tuple(f.name for f in dataclasses.fields(tp))
    module, qualname = tp.__module__, tp.__qualname__
    missing = object()
    name_set = frozenset(names)
    # only stategraph's own classes (messages, ...) leave defaults out: their defaults
    # are ours to keep; an application's class may change a default between
    # releases, which must not change what its saved values mean
    checks = default_checks(tp) if tp.__module__.startswith("stategraph.") else ()

    def encode(enc: Encoder, obj: Any) -> ormsgpack.Ext:
        state = getattr(obj, "__dict__", None)
        if state is not None and state.keys() == name_set:
            # plain (non-slotted) dataclass holding exactly its fields
            values: dict[str, Any] = state
        else:
            values = {}
            for name in names:
                value = getattr(obj, name, missing)
                if value is not missing:
                    values[name] = value
        omit = [name for name, is_default in checks if name in values and is_default(values[name])]
        if omit:
            values = {k: v for k, v in values.items() if k not in omit}
        return enc.ext(EXT_DATACLASS, [module, qualname, values])

    return encode


def _generic_ref(tp: type) -> Any:
    meta = getattr(tp, "__pydantic_generic_metadata__", None)
    if not isinstance(meta, dict) or meta.get("origin") is None:
        return None
    args = meta.get("args", ())
    if not all(isinstance(arg, type) for arg in args):
        return None
    return [class_ref(meta["origin"]), [class_ref(arg) for arg in args]]


def _pydantic_encoder(tp: type) -> EncodeFn:
    names = tuple(tp.__pydantic_fields__)  # type: ignore[attr-defined]
    head = [tp.__module__, tp.__qualname__]
    generic = _generic_ref(tp)

    def encode(enc: Encoder, obj: Any) -> ormsgpack.Ext:
        state = obj.__dict__
        values = {name: state[name] for name in names if name in state}
        fields_set = obj.__pydantic_fields_set__
        extra = obj.__pydantic_extra__ or None
        private = getattr(obj, "__pydantic_private__", None) or None
        stored_set = None if fields_set == values.keys() else list(fields_set)
        payload = [*head, values, stored_set, extra, generic, private]
        if private is None or not enc.slow:  # a failure re-runs in slow mode
            return enc.ext(EXT_PYDANTIC, payload)
        saved = enc.error
        try:
            return enc.ext(EXT_PYDANTIC, payload)
        except Exception:  # private attributes holding clients, locks...: not stored
            enc.error = saved
        kept = {}
        for name, value in private.items():
            try:
                enc.pack(value)
            except Exception:
                enc.error = saved
            else:
                kept[name] = value
        payload[-1] = kept or None
        return enc.ext(EXT_PYDANTIC, payload)

    return encode


def _pydantic_v1_encoder(tp: type) -> EncodeFn:
    head = [tp.__module__, tp.__qualname__]

    def encode(enc: Encoder, obj: Any) -> ormsgpack.Ext:
        return enc.ext(EXT_PYDANTIC_V1, [*head, dict(obj.__dict__), list(obj.__fields_set__)])

    return encode


def _namedtuple_encoder(tp: type) -> EncodeFn:
    head = [tp.__module__, tp.__qualname__]

    def encode(enc: Encoder, obj: Any) -> ormsgpack.Ext:
        return enc.ext(EXT_NAMEDTUPLE, [*head, list(obj)])

    return encode


def _subclass_encoder(tp: type, base_name: str, base: type) -> EncodeFn:
    head = [tp.__module__, tp.__qualname__, base_name]
    value_of: Callable[[Any], Any]
    if base is dict:
        value_of = flat_pairs
    elif base in (list, tuple, set, frozenset):
        value_of = list
    elif base is str:
        value_of = str.__str__
    elif base is int:
        value_of = int.__int__
    elif base is float:
        value_of = float.__float__
    else:
        value_of = bytes

    def encode(enc: Encoder, obj: Any) -> ormsgpack.Ext:
        return enc.ext(EXT_SUBCLASS, [*head, value_of(obj)])

    return encode


def _object_encoder(tp: type) -> EncodeFn:
    head = [tp.__module__, tp.__qualname__]
    slots = [
        name
        for klass in tp.__mro__
        for name in klass.__dict__.get("__slots__", ())
        if name not in ("__dict__", "__weakref__")
    ]

    def encode(enc: Encoder, obj: Any) -> ormsgpack.Ext:
        state = dict(getattr(obj, "__dict__", {}))
        for name in slots:
            if hasattr(obj, name):
                state[name] = getattr(obj, name)
        return enc.ext(EXT_OBJECT, [*head, state])

    return encode


_EXACT: dict[type, EncodeFn] = {
    tuple: _enc_tuple,
    set: _enc_set,
    frozenset: _enc_frozenset,
    datetime.datetime: _enc_datetime,
    datetime.date: _enc_date,
    datetime.time: _enc_time,
    datetime.timedelta: _enc_timedelta,
    datetime.timezone: _enc_tzinfo,
    uuid.UUID: _enc_uuid,
    decimal.Decimal: _enc_decimal,
    int: _enc_bigint,
    complex: _enc_complex,
    PATTERN_TYPE: _enc_pattern,
    collections.deque: _enc_deque,
    collections.OrderedDict: _enc_ordered_dict,
    collections.Counter: _enc_counter,
    collections.defaultdict: _enc_defaultdict,
    PairsDict: _enc_pairs,
}

_ISINSTANCE: tuple[tuple[type, EncodeFn], ...] = (
    (datetime.datetime, _enc_datetime),
    (datetime.date, _enc_date),
    (datetime.time, _enc_time),
    (datetime.timedelta, _enc_timedelta),
    (uuid.UUID, _enc_uuid),
    (decimal.Decimal, _enc_decimal),
)
"""Subclasses of these standard types are stored as the standard type."""


def resolve_encoder(tp: type, registry: TypeRegistry) -> EncodeFn:
    """Pick the encode function for instances of ``tp``; raise :class:`Unencodable`."""
    fn = _EXACT.get(tp)
    if fn is not None:
        return fn
    if issubclass(tp, enum.Enum):
        return _enc_enum
    if hasattr(tp, "__pydantic_fields__") and hasattr(tp, "model_construct"):
        return _pydantic_encoder(tp)
    if dataclasses.is_dataclass(tp):
        return _dataclass_encoder(tp)
    if hasattr(tp, "__fields__") and hasattr(tp, "construct") and hasattr(tp, "__fields_set__"):
        return _pydantic_v1_encoder(tp)
    if issubclass(tp, tuple) and hasattr(tp, "_fields"):
        return _namedtuple_encoder(tp)
    if issubclass(tp, BaseException):
        return _enc_exception
    if tp.__module__ == "stategraph.types" and tp.__qualname__ == "Send":
        return _enc_send
    if tp.__module__ == "zoneinfo" or issubclass(tp, datetime.timezone):
        return _enc_tzinfo
    for base, fn in _ISINSTANCE:
        if issubclass(tp, base):
            return fn
    pathlib = sys.modules.get("pathlib")  # a path's class is loaded: pathlib is too
    if pathlib is not None and issubclass(tp, pathlib.PurePath):
        return _enc_path
    for base_name, base in SUBCLASS_BASES:
        if issubclass(tp, base):
            return _subclass_encoder(tp, base_name, base)
    if registry.allows(tp) and (hasattr(tp, "__dict__") or hasattr(tp, "__slots__")):
        return _object_encoder(tp)
    raise Unencodable(
        tp,
        "it is not JSON-like data, a dataclass, a pydantic model, a NamedTuple, an enum, "
        "an exception or a supported standard-library type, and its class is not "
        "registered with serde.allow()",
    )
