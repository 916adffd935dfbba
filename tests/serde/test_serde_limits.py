"""Hostile payloads end in DeserializationError, in time and memory proportional to
their size (issue 10): oversized constructors, deep nesting, hash flooding, regex
flags, JSON payloads and payloads of the wrong type."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import tracemalloc
from typing import Any

import ormsgpack
import pytest

from stategraph.checkpoint.serde import _ext as ext
from stategraph.checkpoint.serde import _limits as limits
from stategraph.checkpoint.serde.base import DeserializationError
from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer


def pack(value: Any) -> bytes:
    return ormsgpack.packb(value)


def ext_of(code: int, payload: Any) -> ormsgpack.Ext:
    return ormsgpack.Ext(code, pack(payload))


def load(data: Any, tag: Any = "msgpack") -> Any:
    return JsonPlusSerializer().loads_typed((tag, data))


def test_small_subclass_payload_does_not_allocate_a_gigabyte() -> None:
    data = pack(ext_of(ext.EXT_SUBCLASS, ["m", "q", "bytes", 2**30]))
    assert len(data) < 40
    tracemalloc.start()
    try:
        with pytest.raises(DeserializationError, match="subclass of bytes must be stored"):
            load(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


@pytest.mark.parametrize(
    ("base", "value"),
    [("str", 12), ("list", 10**6), ("set", "abc"), ("dict", [1]), ("int", "1"), ("tuple", 7)],
)
def test_subclass_value_of_the_wrong_type_is_refused(base: str, value: Any) -> None:
    with pytest.raises(DeserializationError, match="Malformed payload"):
        load(pack(ext_of(ext.EXT_SUBCLASS, ["m", "q", base, value])))


def test_deep_extension_nesting_is_limited_by_the_decoder_itself() -> None:
    # a subprocess with a huge recursion limit: without the decoder's own bound the
    # interpreter overflows the C stack (segfault) instead of raising
    code = f"""
import sys, ormsgpack
sys.setrecursionlimit(10**6)
from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from stategraph.checkpoint.serde.base import DeserializationError
for depth, native in ((20000, 0), (40, 1000)):
    p = ormsgpack.packb(None)
    for _ in range(depth):
        p = b"\\x91" * native + ormsgpack.packb(ormsgpack.Ext({ext.EXT_TUPLE}, p))
    try:
        JsonPlusSerializer().loads_typed(("msgpack", p))
    except DeserializationError as exc:
        print("refused", "nested" in str(exc))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["refused", "True", "refused", "True"]


def test_what_the_encoder_writes_at_the_default_recursion_limit_loads_back() -> None:
    serde = JsonPlusSerializer()
    value: Any = "leaf"
    depth = 0
    while True:  # the deepest nesting of tuples the encoder accepts
        try:
            dumped = serde.dumps_typed((value,))
        except TypeError:
            break
        value = (value,)
        depth += 1
    # Python 3.10's frames are costlier: its encoder stops near 190 levels, 3.11+ past 200
    assert depth >= 150
    assert serde.loads_typed(serde.dumps_typed(value)) == value
    # deep and wide: big payloads at every level still load
    wide: Any = {"text": "x" * 5000}
    for _ in range(60):
        wide = ({"text": "y" * 2000, "inner": wide, "nums": list(range(300))},)
    assert serde.loads_typed(serde.dumps_typed(wide)) == wide
    assert dumped[0] == "msgpack"


def _bigint(value: int) -> ormsgpack.Ext:
    return ormsgpack.Ext(
        ext.EXT_BIGINT, value.to_bytes(value.bit_length() // 8 + 1, "big", signed=True)
    )


P = 2**61 - 1  # CPython hashes ints modulo this prime


@pytest.mark.parametrize("code", [ext.EXT_SET, ext.EXT_FROZENSET])
def test_sets_of_colliding_big_integers_are_refused_in_linear_time(code: int) -> None:
    items = [_bigint(P * (i + 1) * 2**64) for i in range(20000)]
    data = pack(ormsgpack.Ext(code, pack(items)))
    start = time.perf_counter()
    with pytest.raises(DeserializationError, match="share the hash"):
        load(data)
    assert time.perf_counter() - start < 2.0  # quadratic: minutes


@pytest.mark.parametrize("code", [ext.EXT_PAIRS_DICT, ext.EXT_ORDERED_DICT, ext.EXT_COUNTER])
def test_mappings_with_colliding_big_integer_keys_are_refused(code: int) -> None:
    flat: list[Any] = []
    for i in range(20000):
        flat += [_bigint(P * (i + 1) * 2**64), i]
    start = time.perf_counter()
    with pytest.raises(DeserializationError, match="share the hash"):
        load(pack(ormsgpack.Ext(code, pack(flat))))
    assert time.perf_counter() - start < 2.0


def test_ordinary_sets_and_dicts_of_big_integers_still_load() -> None:
    serde = JsonPlusSerializer()
    value = {
        "s": {2**70 + i for i in range(5000)},
        "d": {2**80 + i: i for i in range(5000)},
        "few": {P, 2 * P, 3 * P},  # a handful of equal hashes is fine
    }
    assert serde.loads_typed(serde.dumps_typed(value)) == value


@pytest.mark.parametrize(
    "flags",
    [re.DEBUG, re.DEBUG | re.IGNORECASE, 1 << 20, -1],
    ids=["debug", "debug-i", "unknown", "negative"],
)
def test_regex_flags_are_restricted(flags: int, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(DeserializationError, match="flags"):
        load(pack(ext_of(ext.EXT_PATTERN, ["a+b", flags])))
    assert capsys.readouterr().out == ""  # re.DEBUG would have printed


def test_regex_size_is_bounded_and_normal_patterns_round_trip() -> None:
    with pytest.raises(DeserializationError, match="at most"):
        load(pack(ext_of(ext.EXT_PATTERN, ["a" * (limits.MAX_PATTERN + 1), 0])))
    with pytest.raises(DeserializationError, match="Malformed regular expression"):
        load(pack(ext_of(ext.EXT_PATTERN, [["a"], 0])))
    serde = JsonPlusSerializer()
    for pattern in (re.compile(r"\d+", re.I | re.M), re.compile(rb"x.y", re.S)):
        assert serde.loads_typed(serde.dumps_typed(pattern)) == pattern


@pytest.mark.parametrize(
    "payload",
    [b"[" * 200000, b"{bad", b"\xff\xfe", b'{"a": [' * 5000, b"[1, 2"],
    ids=["deep", "invalid", "not-utf8", "deep-objects", "truncated"],
)
def test_json_payloads_end_in_deserialization_error(payload: bytes) -> None:
    with pytest.raises(DeserializationError):
        load(payload, "json")


def test_json_depth_scan_ignores_brackets_inside_strings() -> None:
    text = '{"a": "' + "[" * 5000 + '\\"]", "b": [[1]]}'
    assert load(text.encode(), "json") == {"a": "[" * 5000 + '"]', "b": [[1]]}


@pytest.mark.parametrize(
    "data",
    [
        ("msgpack", "text"),
        ("msgpack", 5),
        ("bytes", 2**30),
        ("bytearray", [1, 2]),
        ("json", 5),
        ("json", "[]"),
        (5, b""),
        ("msgpack",),
        "msgpack",
        None,
    ],
    ids=repr,
)
def test_non_bytes_and_malformed_pairs_end_in_deserialization_error(data: Any) -> None:
    with pytest.raises(DeserializationError):
        JsonPlusSerializer().loads_typed(data)


def test_memoryview_and_bytearray_payloads_load() -> None:
    serde = JsonPlusSerializer()
    tag, payload = serde.dumps_typed({"a": (1, 2)})
    assert serde.loads_typed((tag, memoryview(payload))) == {"a": (1, 2)}
    assert serde.loads_typed((tag, bytearray(payload))) == {"a": (1, 2)}


@pytest.mark.parametrize(
    "data",
    [
        b"\xdd\xff\xff\xff\xff",  # array of 4 billion items, 5 bytes
        b"\xdf\xff\xff\xff\xff",  # map of 4 billion pairs
        b"\xc6\xff\xff\xff\xff",  # bin of 4 GiB
        b"\xdb\xff\xff\xff\xffabc",  # str of 4 GiB
        pack(ormsgpack.Ext(ext.EXT_DEQUE, pack([[1], "x"]))),
        pack(ormsgpack.Ext(ext.EXT_SET, pack(5))),
        pack(ormsgpack.Ext(ext.EXT_PAIRS_DICT, pack([1, 2, 3]))),
        pack(ormsgpack.Ext(ext.EXT_BIGINT, b"")),
    ],
)
def test_declared_sizes_and_shapes_are_not_trusted(data: bytes) -> None:
    tracemalloc.start()
    try:
        try:
            out = load(data)
        except DeserializationError:
            out = None
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out in (None, 0)
    # a few MB of interpreter and decoder overhead (more on 3.10), never the declared size
    assert peak < 16_000_000


def test_native_depth_scanner_measures_nesting() -> None:
    assert limits.native_depth(pack([[1, [2]], {"a": [3]}]), 100) == 3
    assert limits.native_depth(pack({"k": "v" * 300, "n": [1.5, None, True]}), 100) == 2
    assert limits.native_depth(pack([ormsgpack.Ext(1, pack([[[]]]))]), 100) == 1
    assert limits.native_depth(b"\x91" * 500 + b"\xc0", 10) > 10
