"""Top-level extension values are written straight to their final bytes; paths are
encoded without importing pathlib up front.

Once a class has an encode function, ``dumps_typed`` of an instance writes the
extension's msgpack bytes itself (``ext_bytes``) instead of letting ormsgpack copy an
``Ext``: the bytes must be exactly the ones ormsgpack writes, and failures must take
the same slow path with the same errors.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import pathlib
import subprocess
import sys
import uuid

import ormsgpack
import pytest

from stategraph.checkpoint.serde._ext import ext_bytes
from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer, SerializationError
from stategraph.messages import AIMessage, ToolMessage


@dataclasses.dataclass
class Box:
    value: object


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 5, 8, 9, 16, 17, 255, 256, 65535, 65536, 70_000])
@pytest.mark.parametrize("code", [0, 1, 21, 127])
def test_ext_bytes_are_ormsgpack_bytes(size: int, code: int) -> None:
    data = bytes(range(256)) * (size // 256) + bytes(range(size % 256))
    assert ext_bytes(code, data) == ormsgpack.packb(ormsgpack.Ext(code, data))


VALUES = [
    AIMessage(content="x" * 70_000, id="a1"),
    ToolMessage(content="result", tool_call_id="c1", id="t1"),
    (1, "two", 3.0),
    Box((1, 2)),
    uuid.UUID(int=12345),
    decimal.Decimal("1.25"),
    2**70,
    datetime.datetime(2026, 1, 2, 3, 4, 5),
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_second_dump_matches_the_first_and_ormsgpack(value: object) -> None:
    serde = JsonPlusSerializer(allowed_types=[Box])
    first = serde.dumps_typed(value)  # through ormsgpack: fills the encoder cache
    assert type(value) in serde._cache
    second = serde.dumps_typed(value)  # written directly
    assert second == first
    assert type(second[1]) is bytes
    assert serde.loads_typed(second) == value


def test_small_int_after_big_int_stays_native() -> None:
    serde = JsonPlusSerializer()
    serde.dumps_typed(2**70)  # caches the big-int encoder for ``int``
    assert serde.dumps_typed(5) == ("msgpack", b"\x05")
    assert serde.loads_typed(serde.dumps_typed(-(2**80))) == -(2**80)


def test_failure_of_a_cached_class_takes_the_slow_path() -> None:
    serde = JsonPlusSerializer(allowed_types=[Box])
    serde.dumps_typed(Box(1))
    with pytest.raises(SerializationError) as info:
        serde.dumps_typed(Box(object()))
    assert "'object' is not supported" in str(info.value)
    # keys that are not str inside a cached class: the slow path encodes them
    typed = serde.dumps_typed(Box({1: "one"}))
    assert serde.loads_typed(typed) == Box({1: "one"})


def test_serializer_imports_loader_and_pathlib_when_needed() -> None:
    """The loader modules load with the first load; pathlib (and urllib.parse,
    ipaddress) only when a path is stored or loaded."""
    code = (
        "import sys\n"
        "from stategraph.checkpoint.memory import InMemorySaver\n"
        "from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer\n"
        "s = JsonPlusSerializer()\n"
        "typed = s.dumps_typed({'a': (1, 2)})\n"
        "assert 'stategraph.checkpoint.serde._decode' not in sys.modules, 'loader imported'\n"
        "assert s.loads_typed(typed) == {'a': (1, 2)}\n"
        "assert 'pathlib' not in sys.modules, 'pathlib imported'\n"
        "import pathlib\n"
        "p = pathlib.PurePosixPath('/x')\n"
        "assert s.loads_typed(s.dumps_typed(p)) == p\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


class MyPath(type(pathlib.Path())):  # type: ignore[misc]
    """A user subclass of the concrete path class."""


@pytest.mark.parametrize(
    "value",
    [
        pathlib.PurePosixPath("a/b"),
        pathlib.PureWindowsPath("C:\\x"),
        pathlib.Path("r"),
        MyPath("m"),
    ],
    ids=lambda v: type(v).__name__,
)
def test_paths_and_their_subclasses_round_trip(value: pathlib.PurePath) -> None:
    serde = JsonPlusSerializer()
    loaded = serde.loads_typed(serde.dumps_typed(value))
    assert loaded == value
    assert type(loaded) is (type(pathlib.Path()) if isinstance(value, MyPath) else type(value))
    assert serde.dumps_typed(value) == serde.dumps_typed(value)
