"""A pure-Python msgpack unpacker for maps with non-``str`` keys, safe from hash flooding.

The decoder unpacks with ormsgpack *without* ``OPT_NON_STR_KEYS``: native maps then
only take ``str`` keys, whose hashes are randomized. Payloads written by older releases
(and hostile ones) can hold maps keyed by ints, floats, ``None``, bools, bytes or arrays
(which load as tuples). ormsgpack would build those dicts itself, and tuples of small
ints can be chosen so that thousands share one hash, which makes building the dict
quadratic. :func:`unpack` decodes such a payload here instead, one item at a time with
an explicit stack (no recursion), and checks each map's keys with
:func:`~stategraph.checkpoint.serde._limits.check_collisions` before building it, so
loading stays linear in the payload's size.

The result matches ormsgpack's with ``OPT_NON_STR_KEYS``: keys may be ``str``, ``bytes``,
``int``, ``float``, ``bool``, ``None`` or arrays of those (as tuples); maps and
extensions are refused as keys; the last of duplicate keys wins. Extensions are handed to
``ext_hook(code, data)`` in document order; the first ``len(replay)`` of them take the
values in ``replay`` instead (what the native pass had already decoded before it gave
up), so no extension is decoded twice.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

from stategraph.checkpoint.serde import _limits as limits

__all__ = ["MAX_DEPTH", "MalformedPayload", "Replaying", "unpack"]


class MalformedPayload(ValueError):
    """The bytes are not valid msgpack (or an extension hook failed); like ormsgpack's."""


_FIXED_STRUCT: dict[int, struct.Struct] = {
    0xCA: struct.Struct(">f"),
    0xCB: struct.Struct(">d"),
    0xCC: struct.Struct(">B"),
    0xCD: struct.Struct(">H"),
    0xCE: struct.Struct(">I"),
    0xCF: struct.Struct(">Q"),
    0xD0: struct.Struct(">b"),
    0xD1: struct.Struct(">h"),
    0xD2: struct.Struct(">i"),
    0xD3: struct.Struct(">q"),
}
_SIZE_WIDTH: dict[int, int] = {
    0xC4: 1, 0xC5: 2, 0xC6: 4,  # bin
    0xD9: 1, 0xDA: 2, 0xDB: 4,  # str
    0xC7: 1, 0xC8: 2, 0xC9: 4,  # ext
    0xDC: 2, 0xDD: 4,  # array
    0xDE: 2, 0xDF: 4,  # map
}  # fmt: skip
_EXT_FIXED: dict[int, int] = {0xD4: 1, 0xD5: 2, 0xD6: 4, 0xD7: 8, 0xD8: 16}
_KEY_SCALARS = (str, bytes, int, float, bool, type(None))

_ARRAY = 0
_MAP = 1
MAX_DEPTH = 1024
"""Containers nested in one payload (ormsgpack's own limit: deeper payloads never
loaded, and none is written)."""


def _build_map(flat: list[Any]) -> dict[Any, Any]:
    keys = flat[0::2]
    if len(keys) > limits.MAX_COLLISIONS and any(type(k) is not str for k in keys):
        limits.check_collisions(keys, "mapping")
    return dict(zip(keys, flat[1::2], strict=True))


def unpack(
    data: bytes | bytearray | memoryview,
    ext_hook: Callable[[int, bytes], Any],
    replay: Sequence[Any] = (),
) -> Any:
    """Decode one msgpack object from ``data`` (which it must fill exactly).

    Raises :class:`MalformedPayload` for invalid msgpack, a key that cannot be one, or
    an exception of ``ext_hook`` (chained as its cause), and
    :class:`~stategraph.checkpoint.serde.base.DeserializationError` for a map whose
    keys collide beyond :data:`~stategraph.checkpoint.serde._limits.MAX_COLLISIONS`.
    """
    buf = bytes(data)
    end = len(buf)
    pos = 0
    replayed = 0
    # open containers: [kind, items still expected, collected items, in a key]
    stack: list[list[Any]] = []
    result: Any = None
    while True:
        if pos >= end:
            raise MalformedPayload("Truncated msgpack payload.")
        in_key = bool(stack) and (
            stack[-1][3] or (stack[-1][0] == _MAP and not len(stack[-1][2]) % 2)
        )
        byte = buf[pos]
        pos += 1
        value: Any
        opened = -1
        kind = _ARRAY
        if byte <= 0x7F:
            value = byte
        elif byte >= 0xE0:
            value = byte - 0x100
        elif 0xA0 <= byte <= 0xBF or byte in (0xD9, 0xDA, 0xDB, 0xC4, 0xC5, 0xC6):
            if byte >= 0xA0 and byte <= 0xBF:
                size = byte & 0x1F
            else:
                width = _SIZE_WIDTH[byte]
                size = int.from_bytes(buf[pos : pos + width], "big")
                pos += width
            if pos + size > end:
                raise MalformedPayload("Truncated msgpack string or binary.")
            raw = buf[pos : pos + size]
            pos += size
            if byte in (0xC4, 0xC5, 0xC6):
                value = raw
            else:
                try:
                    value = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise MalformedPayload(f"Invalid UTF-8 in a msgpack string: {exc}") from exc
        elif 0x90 <= byte <= 0x9F:
            opened = byte & 0x0F
        elif 0x80 <= byte <= 0x8F:
            opened = byte & 0x0F
            kind = _MAP
        elif byte in (0xDC, 0xDD, 0xDE, 0xDF):
            width = _SIZE_WIDTH[byte]
            if pos + width > end:
                raise MalformedPayload("Truncated msgpack container header.")
            opened = int.from_bytes(buf[pos : pos + width], "big")
            pos += width
            kind = _MAP if byte >= 0xDE else _ARRAY
            if opened > end - pos:  # every item takes at least one byte
                raise MalformedPayload("A msgpack container holds more items than bytes.")
        elif byte == 0xC0:
            value = None
        elif byte == 0xC2:
            value = False
        elif byte == 0xC3:
            value = True
        elif byte in _FIXED_STRUCT:
            fmt = _FIXED_STRUCT[byte]
            if pos + fmt.size > end:
                raise MalformedPayload("Truncated msgpack number.")
            value = fmt.unpack_from(buf, pos)[0]
            pos += fmt.size
        elif byte in _EXT_FIXED or byte in (0xC7, 0xC8, 0xC9):
            if in_key:
                raise MalformedPayload("A msgpack extension cannot be a map key.")
            if byte in _EXT_FIXED:
                size = _EXT_FIXED[byte]
            else:
                width = _SIZE_WIDTH[byte]
                size = int.from_bytes(buf[pos : pos + width], "big")
                pos += width
            if pos + 1 + size > end:
                raise MalformedPayload("Truncated msgpack extension.")
            code = buf[pos]
            code = code - 0x100 if code >= 0x80 else code
            body = buf[pos + 1 : pos + 1 + size]
            pos += 1 + size
            if replayed < len(replay):
                value = replay[replayed]
                replayed += 1
            else:
                try:
                    value = ext_hook(code, body)
                except Exception as exc:
                    raise MalformedPayload(f"Extension {code} failed to load: {exc!r}") from exc
        else:
            raise MalformedPayload(f"Invalid msgpack type byte {byte:#04x}.")

        if opened >= 0:
            if kind == _MAP and in_key:
                raise MalformedPayload("A msgpack map cannot be a map key.")
            if opened:
                if len(stack) >= MAX_DEPTH:
                    raise MalformedPayload(
                        f"msgpack containers nested more than {MAX_DEPTH} levels deep."
                    )
                stack.append([kind, opened * (2 if kind == _MAP else 1), [], in_key])
                continue
            value = {} if kind == _MAP else (() if in_key else [])
        elif in_key and not isinstance(value, _KEY_SCALARS):
            raise MalformedPayload(f"A {type(value).__name__} cannot be a msgpack map key.")

        # attach ``value`` to the innermost open container, closing the finished ones
        while True:
            if not stack:
                result = value
                break
            top = stack[-1]
            top[2].append(value)
            top[1] -= 1
            if top[1]:
                break
            stack.pop()
            if top[0] == _MAP:
                value = _build_map(top[2])
            elif top[3]:
                value = tuple(top[2])
            else:
                value = top[2]
        if not stack:
            break
    if pos != end:
        raise MalformedPayload(f"{end - pos} bytes of trailing data after a msgpack object.")
    return result


_FAILED = object()


class Replaying:
    """Unpacks with ormsgpack (``str`` map keys only), then with :func:`unpack`.

    ``Replaying(ext_hook)(data)`` is ``ormsgpack.unpackb(data, ext_hook=ext_hook)`` for
    payloads whose maps have ``str`` keys; a payload with other map keys is decoded by
    :func:`unpack`, reusing the extensions the native pass had decoded. The hook may
    call this object again for an extension's own payload (each call keeps its own
    record).
    """

    __slots__ = ("ext_hook", "levels")

    def __init__(self, ext_hook: Callable[[int, bytes], Any]) -> None:
        self.ext_hook = ext_hook
        self.levels: list[list[Any]] = []

    def __call__(self, data: bytes | bytearray | memoryview) -> Any:
        import ormsgpack

        done: list[Any] = []
        self.levels.append(done)
        try:
            try:
                return ormsgpack.unpackb(data, ext_hook=self._hook)
            except ormsgpack.MsgpackDecodeError:
                if done and done[-1] is _FAILED:
                    raise
            return unpack(data, self._hook, tuple(done))
        finally:
            self.levels.pop()

    def _hook(self, code: int, body: bytes) -> Any:
        try:
            value = self.ext_hook(code, body)
        except BaseException:
            self.levels[-1].append(_FAILED)
            raise
        self.levels[-1].append(value)
        return value
