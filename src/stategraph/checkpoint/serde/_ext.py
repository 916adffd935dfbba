"""The stored format (extension codes, options) and the :class:`Encoder` that packs.

Plain JSON-like data (``dict`` with ``str`` keys, ``list``, ``str``, ``int``, ``float``,
``bool``, ``None``, ``bytes``) is packed by ormsgpack natively. The ``PASSTHROUGH``
options make ormsgpack hand every other value (tuples, dataclasses, enums, datetimes,
UUIDs, subclasses, big ints...) to ``Encoder.default``, which turns it into a msgpack
extension whose payload is itself packed recursively (the per-type functions live in
:mod:`stategraph.checkpoint.serde._encoders`). User classes are written
as ``[module, qualname, payload]``; the loader decides whether it may rebuild them.

Dicts whose keys are not all ``str`` make the native pass fail; the serializer then
re-encodes in *slow* mode, where a Python pre-walk turns each such dict into a pairs
extension (a flat ``[k1, v1, ...]`` list) so every key keeps its type and the loader
builds the dict itself, checking the keys for hash collisions. (Older releases wrote
int/float/bool/None/tuple keys as native map keys; those payloads still load.)
"""

from __future__ import annotations

import collections
import re
import struct
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import ormsgpack

from stategraph.checkpoint.serde._allowlist import TypeRegistry

if TYPE_CHECKING:
    import pathlib

# Extension codes. Stable: they are part of the stored format.
EXT_TUPLE = 1
EXT_SET = 2
EXT_FROZENSET = 3
EXT_DATETIME = 4
EXT_DATE = 5
EXT_TIME = 6
EXT_TIMEDELTA = 7
EXT_TZINFO = 8
EXT_UUID = 9
EXT_DECIMAL = 10
EXT_BIGINT = 11
EXT_COMPLEX = 12
EXT_PATH = 13
EXT_PATTERN = 14
EXT_DEQUE = 15
EXT_ORDERED_DICT = 16
EXT_COUNTER = 17
EXT_DEFAULTDICT = 18
EXT_PAIRS_DICT = 19
EXT_ENUM = 20
EXT_DATACLASS = 21
EXT_PYDANTIC = 22
EXT_PYDANTIC_V1 = 23
EXT_NAMEDTUPLE = 24
EXT_EXCEPTION = 25
EXT_SUBCLASS = 26
EXT_OBJECT = 27
EXT_SEND = 28

_PASSTHROUGH = (
    ormsgpack.OPT_PASSTHROUGH_DATACLASS
    | ormsgpack.OPT_PASSTHROUGH_DATETIME
    | ormsgpack.OPT_PASSTHROUGH_SUBCLASS
    | ormsgpack.OPT_PASSTHROUGH_TUPLE
    | ormsgpack.OPT_PASSTHROUGH_ENUM
    | ormsgpack.OPT_PASSTHROUGH_UUID
    | ormsgpack.OPT_PASSTHROUGH_BIG_INT
)
FAST_OPTIONS = _PASSTHROUGH
"""Options of the native pass: dict keys must be ``str``."""
SLOW_OPTIONS = _PASSTHROUGH
"""Options of the pre-walked pass (every dict left in it has ``str`` keys only)."""
LOAD_OPTIONS = 0
"""Options of every native unpack: ``str`` map keys only, whose hashes are randomized
(maps with other keys are decoded by :mod:`stategraph.checkpoint.serde._pyunpack`)."""


def path_types() -> tuple[type[pathlib.PurePath], ...]:
    """The path classes by stored kind: pure POSIX, pure Windows, POSIX, Windows.

    ``pathlib`` (with ``urllib.parse`` and ``ipaddress`` behind it) is imported here,
    when a path is stored or loaded, not with the serializer."""
    import pathlib

    return (pathlib.PurePosixPath, pathlib.PureWindowsPath, pathlib.PosixPath, pathlib.WindowsPath)


PATTERN_TYPE = type(re.compile(""))

FACTORY_NAMES: dict[Any, str] = {
    list: "list",
    dict: "dict",
    set: "set",
    frozenset: "frozenset",
    tuple: "tuple",
    int: "int",
    float: "float",
    str: "str",
    bool: "bool",
    bytes: "bytes",
    collections.OrderedDict: "OrderedDict",
    collections.Counter: "Counter",
    collections.deque: "deque",
    collections.defaultdict: "defaultdict",
}
"""``defaultdict`` factories that are always safe to call, by stored name."""

SUBCLASS_BASES: tuple[tuple[str, type], ...] = (
    ("dict", dict),
    ("list", list),
    ("str", str),
    ("int", int),
    ("float", float),
    ("bytes", bytes),
    ("set", set),
    ("frozenset", frozenset),
    ("tuple", tuple),
)
"""Builtin bases whose subclasses are stored as ``[module, qualname, base, value]``."""

EncodeFn = Callable[["Encoder", Any], ormsgpack.Ext]


_FIXEXT = {1: 0xD4, 2: 0xD5, 4: 0xD6, 8: 0xD7, 16: 0xD8}


def ext_bytes(code: int, data: bytes) -> bytes:
    """The msgpack bytes of extension ``code`` holding ``data``: exactly what
    ``ormsgpack.packb(ormsgpack.Ext(code, data))`` writes (the smallest header), made in
    one allocation of the final size. Writing a large value's bytes this way, rather
    than through a buffer that grows, lets them reuse the memory freed by earlier ones
    (the process's peak memory stays near the size of what is kept)."""
    size = len(data)
    fixed = _FIXEXT.get(size)
    if fixed is not None:
        head = struct.pack(">Bb", fixed, code)
    elif size <= 0xFF:
        head = struct.pack(">BBb", 0xC7, size, code)
    elif size <= 0xFFFF:
        head = struct.pack(">BHb", 0xC8, size, code)
    else:
        head = struct.pack(">BIb", 0xC9, size, code)
    return b"".join((head, data))


class Unencodable(TypeError):
    """Raised inside ``default`` for a value no encoder handles; carries its type."""

    def __init__(self, tp: type, reason: str) -> None:
        super().__init__(reason)
        self.tp = tp
        self.reason = reason


class PairsDict:
    """Marks a dict whose keys cannot all be msgpack map keys without losing their type."""

    __slots__ = ("value",)

    def __init__(self, value: dict[Any, Any]) -> None:
        self.value = value


def prewalk(obj: Any) -> Any:
    """Replace, in plain dicts/lists, dicts with a non-``str`` key by a pairs marker.

    Copy-on-write: containers that need no change are returned as they are.
    """
    tp = type(obj)
    if tp is dict:
        for key in obj:
            if type(key) is not str:
                return PairsDict(obj)
        entries: Iterable[tuple[Any, Any]] = obj.items()
    elif tp is list:
        entries = enumerate(obj)
    else:
        return obj
    copy: Any = None
    for key, value in entries:
        vt = type(value)
        if vt is dict or vt is list:
            new = prewalk(value)
            if new is not value:
                if copy is None:
                    copy = tp(obj)
                copy[key] = new
    return obj if copy is None else copy


def flat_pairs(mapping: Any) -> list[Any]:
    """``[k1, v1, k2, v2, ...]`` for a mapping, in iteration order."""
    out: list[Any] = []
    append = out.append
    for key, value in mapping.items():
        append(key)
        append(value)
    return out


def class_ref(tp: type) -> list[str]:
    """``[module, qualname]`` of a class."""
    return [tp.__module__, tp.__qualname__]


class Encoder:
    """Packs one value; the ``default`` hook dispatches on the value's class.

    ``cache`` maps a class to its encode function and is shared by the encoders of one
    serializer. A *slow* encoder pre-walks every payload (see :func:`prewalk`) and
    remembers in ``error`` the first exception raised inside ``default``, because
    ormsgpack replaces it by a generic ``TypeError``.
    """

    __slots__ = ("cache", "default", "error", "option", "registry", "slow", "wrap")

    def __init__(self, registry: TypeRegistry, cache: dict[type, EncodeFn], *, slow: bool) -> None:
        self.wrap: Callable[[int, bytes], ormsgpack.Ext] = ormsgpack.Ext
        self.registry = registry
        self.cache = cache
        self.slow = slow
        self.option = SLOW_OPTIONS if slow else FAST_OPTIONS
        self.error: BaseException | None = None
        self.default: Callable[[Any], ormsgpack.Ext] = (
            self._default_slow if slow else self._default_fast
        )

    def pack(self, payload: Any) -> bytes:
        """Pack ``payload`` with this encoder's hook and options."""
        if self.slow:
            payload = prewalk(payload)
        return ormsgpack.packb(payload, default=self.default, option=self.option)

    def ext(self, code: int, payload: Any) -> ormsgpack.Ext:
        """An extension of ``code`` holding ``payload`` packed recursively."""
        return self.wrap(code, self.pack(payload))

    def _default_fast(self, obj: Any) -> ormsgpack.Ext:
        tp = type(obj)
        fn = self.cache.get(tp)
        if fn is None:
            from stategraph.checkpoint.serde._encoders import resolve_encoder

            fn = self.cache[tp] = resolve_encoder(tp, self.registry)
        return fn(self, obj)

    def outermost(self) -> Encoder:
        """An encoder of top-level values for this (fast) one: the encode functions
        called with it return the msgpack bytes of their extension (:func:`ext_bytes`)
        instead of an ``Ext`` for ormsgpack to copy; values nested in them are still
        packed by this encoder."""
        top = Encoder(self.registry, self.cache, slow=self.slow)
        top.default = self.default
        top.wrap = ext_bytes  # type: ignore[assignment]  # bytes in place of the Ext
        return top

    def _default_slow(self, obj: Any) -> ormsgpack.Ext:
        try:
            return self._default_fast(obj)
        except BaseException as exc:
            if self.error is None:
                self.error = exc
            raise
