"""Maps and sets whose keys collide in Python's hash load in linear time (issue 10).

A msgpack map keyed by arrays loads with tuple keys, and the hash of a tuple of small
ints can be inverted: thousands of distinct pairs ``(a, b)`` can be given one hash, so
building the dict would take quadratic time. These tests build such payloads for real
(about 1 MB), check that loading refuses them with a :class:`DeserializationError` in
about the time a same-size ordinary payload takes, and that legitimate non-``str`` keys,
as written now and by older releases, still load exactly.
"""

from __future__ import annotations

import enum
import time
import warnings
from collections.abc import Callable
from typing import Any

import ormsgpack
import pytest

from stategraph.checkpoint.serde import _ext as ext
from stategraph.checkpoint.serde import _limits as limits
from stategraph.checkpoint.serde.base import DeserializationError, UnknownTypeWarning
from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer

MASK = 2**64 - 1
PRIME = 2**61 - 1  # CPython reduces int hashes modulo this prime
# constants of CPython's (xxHash-based) tuple hash on 64-bit builds
X1 = 11400714785074694791
X2 = 14029467366897019727
X5 = 2870177450012600261


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (64 - bits))) & MASK


def _rotr(value: int, bits: int) -> int:
    return ((value >> bits) | (value << (64 - bits))) & MASK


def colliding_pairs(count: int, target: int = 424242) -> list[tuple[int, int]]:
    """``count`` distinct pairs of 64-bit ints whose tuple hash is ``target``.

    Runs the tuple hash backwards: after the first item the accumulator is known, so
    the hash the second item needs is solved for; it is usable when it is a possible
    int hash (``|h| < 2**61 - 1``, not -1), and then the int equal to it has that hash.
    """
    needed = _rotr(((target - (2 ^ X5 ^ 3527539)) & MASK) * pow(X1, -1, 2**64) & MASK, 31)
    inverse_x2 = pow(X2, -1, 2**64)
    pairs: list[tuple[int, int]] = []
    first = 0
    while len(pairs) < count:
        first += 1
        after_first = _rotl((X5 + first * X2) & MASK, 31) * X1 & MASK
        second = (needed - after_first) * inverse_x2 & MASK
        if second >= 2**63:
            second -= 2**64
        if -PRIME < second < PRIME and second != -1:
            pairs.append((first, second))
    return pairs


def spread_pairs(count: int) -> list[tuple[int, int]]:
    """``count`` ordinary pairs of the same byte size as :func:`colliding_pairs`'."""
    return [(first + 1, 2**62 + first) for first in range(count)]


def legacy_map(keys: list[Any]) -> bytes:
    """A native msgpack map ``{key: 0}`` as older releases wrote it (non-str keys).

    Written item by item: building the dict first would itself take quadratic time.
    """
    parts = [b"\xdf", len(keys).to_bytes(4, "big")]
    for key in keys:
        parts.append(ormsgpack.packb(list(key) if type(key) is tuple else key))
        parts.append(b"\x00")
    return b"".join(parts)


def cpu(fn: Callable[[], Any]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def load(data: bytes) -> Any:
    return JsonPlusSerializer().loads_typed(("msgpack", data))


ENTRIES = 65_000  # about 1 MB of payload


def test_the_generated_pairs_really_collide() -> None:
    pairs = colliding_pairs(500)
    assert len(set(pairs)) == 500
    assert {hash(pair) for pair in pairs} == {424242}
    assert len({hash(pair) for pair in spread_pairs(500)}) == 500


def test_native_map_with_colliding_tuple_keys_is_refused_in_linear_time() -> None:
    hostile = legacy_map(list(colliding_pairs(ENTRIES)))
    ordinary = legacy_map(list(spread_pairs(ENTRIES)))
    assert len(hostile) > 900_000
    assert abs(len(hostile) - len(ordinary)) < len(ordinary) // 5

    def refuse() -> None:
        with pytest.raises(DeserializationError, match="share the hash value 424242"):
            load(hostile)

    loaded: list[Any] = []
    baseline = min(cpu(lambda: loaded.append(load(ordinary))) for _ in range(3))
    assert len(loaded[0]) == ENTRIES
    assert next(iter(loaded[0])) == (1, 2**62)
    # quadratic building would take minutes; generous factor for a loaded machine
    assert cpu(refuse) < 20 * baseline + 0.5


@pytest.mark.parametrize(
    "wrap",
    [
        lambda body: ormsgpack.Ext(ext.EXT_TUPLE, b"\x91" + body),
        lambda body: ormsgpack.Ext(ext.EXT_DEQUE, b"\x92\x91" + body + b"\xc0"),
    ],
    ids=["in-tuple", "in-deque"],
)
def test_colliding_map_inside_an_extension_is_refused_with_its_reason(
    wrap: Callable[[bytes], ormsgpack.Ext],
) -> None:
    data = ormsgpack.packb({"state": wrap(legacy_map(list(colliding_pairs(2000))))})
    with pytest.raises(DeserializationError, match="share the hash"):
        load(data)


def test_colliding_tuples_in_sets_and_pairs_dicts_are_refused() -> None:
    keys = [ormsgpack.Ext(ext.EXT_TUPLE, ormsgpack.packb(list(p))) for p in colliding_pairs(3000)]
    as_set = ormsgpack.packb(ormsgpack.Ext(ext.EXT_SET, ormsgpack.packb(keys)))
    with pytest.raises(DeserializationError, match="set of 3000 items where 3000 share"):
        load(as_set)
    flat: list[Any] = []
    for key in keys:
        flat += [key, None]
    as_pairs = ormsgpack.packb(ormsgpack.Ext(ext.EXT_PAIRS_DICT, ormsgpack.packb(flat)))
    with pytest.raises(DeserializationError, match="mapping of 3000 items where 3000 share"):
        load(as_pairs)


def test_a_bounded_number_of_equal_hashes_still_loads() -> None:
    # a few colliding keys are legitimate (ints equal modulo 2**61 - 1 are common)
    few = colliding_pairs(limits.MAX_COLLISIONS)
    keys: list[Any] = [*few, 5, 5 + PRIME, 5 + 2 * PRIME, *range(1000)]
    assert list(load(legacy_map(keys))) == list(dict.fromkeys(keys))
    too_many = colliding_pairs(limits.MAX_COLLISIONS + 1)
    with pytest.raises(DeserializationError, match=f"{limits.MAX_COLLISIONS + 1} share"):
        load(legacy_map([*too_many, *range(1000)]))


class Colour(enum.Enum):
    RED = "red"


LEGIT: list[Any] = [
    {1: "a", -2: "b", 2**63 - 1: "c", 2**64 - 1: "d", -(2**63): "e"},
    {1.5: "f", None: "n", True: "t", b"raw": "bytes"},
    {(1, 2): "pair", (1, (2, (3, "x"))): "nested", (): "empty", ("s", None, 0.5): "mixed"},
    {2**100: "big", (2**70, "x"): "big in tuple", Colour.RED: "enum"},
    {"outer": {7: [{(1,): {8: "deep"}}]}, "set": {(1, 2), (3, 4)}, "fs": frozenset({1, 2})},
    {i: (i, str(i)) for i in range(3000)},
]


@pytest.mark.parametrize("value", LEGIT, ids=range(len(LEGIT)))
def test_non_str_keys_round_trip_exactly(value: Any) -> None:
    serde = JsonPlusSerializer()
    serde.allow(Colour)
    loaded = serde.loads_typed(serde.dumps_typed(value))
    assert loaded == value
    assert [type(k) for k in loaded] == [type(k) for k in value]
    assert list(loaded) == list(value)  # key order kept


def test_the_encoder_writes_no_native_map_with_non_str_keys() -> None:
    serde = JsonPlusSerializer()
    tag, data = serde.dumps_typed({"a": {1: {(2, 3): "x"}}, "b": [{None: 1}]})
    assert tag == "msgpack"
    # unpacking without OPT_NON_STR_KEYS fails on any native non-str map key
    codes: list[int] = []
    top = ormsgpack.unpackb(data, ext_hook=lambda code, body: codes.append(code) or code)
    assert top == {"a": ext.EXT_PAIRS_DICT, "b": [ext.EXT_PAIRS_DICT]}


LEGACY: list[tuple[bytes, Any]] = [
    (
        ormsgpack.packb({1: "a", 2: {3: "b"}}, option=ormsgpack.OPT_NON_STR_KEYS),
        {1: "a", 2: {3: "b"}},
    ),
    (
        ormsgpack.packb({(1, (2, 3)): [1.5], None: True}, option=ormsgpack.OPT_NON_STR_KEYS),
        {(1, (2, 3)): [1.5], None: True},
    ),
    (b"\x83\x01\xa1a\xc2\xa1b\x01\xa1c", {1: "c", False: "b"}),  # duplicates: last wins
    (b"\x82\xc4\x02hi\x01\xcb?\xf8\x00\x00\x00\x00\x00\x00\x02", {b"hi": 1, 1.5: 2}),
    (b"\x81\x90\x80", {(): {}}),
]


@pytest.mark.parametrize(("data", "expected"), LEGACY, ids=range(len(LEGACY)))
def test_payloads_of_older_releases_with_native_non_str_keys_still_load(
    data: bytes, expected: Any
) -> None:
    loaded = load(data)
    assert loaded == expected
    assert [type(k) for k in loaded] == [type(k) for k in expected]
    # what the native unpacker with non-str keys (older releases) made of it
    assert loaded == ormsgpack.unpackb(data, option=ormsgpack.OPT_NON_STR_KEYS)


def test_extensions_before_a_legacy_map_are_decoded_once() -> None:
    # the native pass decodes the unknown enum (one warning), then stops at the int
    # key; the rest of the payload is decoded without decoding that extension again
    unknown = ormsgpack.Ext(ext.EXT_ENUM, ormsgpack.packb(["gone.module", "Gone", 3]))
    body = ormsgpack.packb([unknown, {1: 2}], option=ormsgpack.OPT_NON_STR_KEYS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert load(body) == [3, {1: 2}]
    assert [w.category for w in caught] == [UnknownTypeWarning]


def test_nested_legacy_maps_load_in_linear_time() -> None:
    # every level holds its inner level first, then an int-keyed map: decoding each
    # level twice would double the work per level (2**60 here)
    value: Any = ormsgpack.Ext(ext.EXT_TUPLE, ormsgpack.packb(["leaf"]))
    expected: Any = ("leaf",)
    for level in range(60):
        body = ormsgpack.packb([value, {level: level}], option=ormsgpack.OPT_NON_STR_KEYS)
        value = ormsgpack.Ext(ext.EXT_TUPLE, body)
        expected = (expected, {level: level})
    assert load(ormsgpack.packb(value)) == expected


@pytest.mark.parametrize(
    "data",
    [
        b"\x82\x01\x02\x03",  # truncated map
        b"\x81\x81\x01\x02\x03",  # map as a key
        b"\x81\xd4\x01\x01\x02",  # extension as a key
        b"\x81\x91\xd4\x01\x01\x02",  # extension inside a tuple key
        b"\x82\x01\xa2\xff\xfe\x02\x03",  # invalid UTF-8 next to an int key
        b"\x81\x01\x02\x03",  # trailing byte
        b"\x81\x01\xc1",  # reserved type byte
        b"\x81\x01\xdd\xff\xff\xff\xff",  # array claiming more items than bytes
        b"\x81\x01\xd4\x63\x00",  # unknown extension code
        b"\x92" + b"\x91" * 100_000 + b"\x01\x81\x01\x02",  # too deep, then an int key
    ],
    ids=repr,
)
def test_malformed_legacy_maps_end_in_deserialization_error(data: bytes) -> None:
    with pytest.raises(DeserializationError):
        load(data)


def test_langgraph_import_refuses_colliding_keys_and_loads_int_keys() -> None:
    from stategraph.checkpoint.langgraph_import._decode import LangGraphDecoder

    decoder = LangGraphDecoder()
    hostile = legacy_map(list(colliding_pairs(ENTRIES)))
    start = time.process_time()
    with pytest.raises(DeserializationError, match="share the hash"):
        decoder.loads_typed(("msgpack", hostile))
    assert time.process_time() - start < 5.0  # quadratic building: minutes
    # LangGraph writes int and tuple keys natively: they load as they were
    native = ormsgpack.packb(
        {1: "a", (2, 3): ["b"], "s": {4: None}}, option=ormsgpack.OPT_NON_STR_KEYS
    )
    assert decoder.loads_typed(("msgpack", native)) == {1: "a", (2, 3): ["b"], "s": {4: None}}
