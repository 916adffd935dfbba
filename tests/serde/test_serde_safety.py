"""Hostile payloads: loading never imports, constructs or runs anything not allowed."""

from __future__ import annotations

import builtins
import os
import pickle
import subprocess
import sys
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ormsgpack
import pytest

from stategraph.checkpoint.serde import _ext as ext
from stategraph.checkpoint.serde.base import DeserializationError, UnknownTypeWarning
from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer

EVIL_MODULE = "evil_module_that_must_not_be_imported"


@pytest.fixture
def marker(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / f"pwned-{uuid.uuid4().hex}"
    yield path
    assert not path.exists(), "a hostile payload ran code"


@pytest.fixture
def no_imports(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every import statement executed while the test runs."""
    seen: list[str] = []
    real_import = builtins.__import__

    def spy(name: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", spy)
    return seen


def pack(payload: Any) -> bytes:
    return ormsgpack.packb(payload)


def ext_payload(code: int, payload: Any) -> bytes:
    return pack(ormsgpack.Ext(code, pack(payload)))


def hostile_payloads(marker: Path) -> list[tuple[str, bytes]]:
    cmd = f"touch {marker}"
    return [
        ("object os.system", ext_payload(ext.EXT_OBJECT, ["os", "system", {"command": cmd}])),
        ("dataclass os.system", ext_payload(ext.EXT_DATACLASS, ["os", "system", {"a": cmd}])),
        ("namedtuple os.system", ext_payload(ext.EXT_NAMEDTUPLE, ["os", "system", [cmd]])),
        (
            "namedtuple subprocess.Popen",
            ext_payload(ext.EXT_NAMEDTUPLE, ["subprocess", "Popen", [["touch", str(marker)]]]),
        ),
        (
            "pydantic subprocess.Popen",
            ext_payload(
                ext.EXT_PYDANTIC,
                ["subprocess", "Popen", {"args": ["touch", str(marker)]}, None, None, None, None],
            ),
        ),
        (
            "pydantic generic naming os.system",
            ext_payload(
                ext.EXT_PYDANTIC,
                [
                    "x",
                    "Y[Z]",
                    {"a": cmd},
                    None,
                    None,
                    [["os", "system"], [["builtins", "eval"]]],
                    None,
                ],
            ),
        ),
        (
            "enum builtins.eval",
            ext_payload(ext.EXT_ENUM, ["builtins", "eval", f"open('{marker}', 'w')"]),
        ),
        (
            "exception builtins.eval",
            ext_payload(ext.EXT_EXCEPTION, ["builtins", "eval", [f"open('{marker}','w')"], "x"]),
        ),
        (
            "exception builtins.exec",
            ext_payload(ext.EXT_EXCEPTION, ["builtins", "exec", [f"open('{marker}','w')"], "x"]),
        ),
        (
            "subclass subprocess.Popen",
            ext_payload(ext.EXT_SUBCLASS, ["subprocess", "Popen", "list", ["touch", str(marker)]]),
        ),
        (
            "subclass os.system str",
            ext_payload(ext.EXT_SUBCLASS, ["os", "system", "str", cmd]),
        ),
        (
            "defaultdict factory os.system",
            ext_payload(ext.EXT_DEFAULTDICT, [["os", "system"], ["k", cmd]]),
        ),
        (
            "defaultdict factory named eval",
            ext_payload(ext.EXT_DEFAULTDICT, ["eval", ["k", cmd]]),
        ),
        (
            "unknown module is not imported",
            ext_payload(ext.EXT_OBJECT, [EVIL_MODULE, "Thing", {"a": 1}]),
        ),
        (
            "own module: function, not a class",
            ext_payload(ext.EXT_OBJECT, ["stategraph.types", "interrupt", {"value": cmd}]),
        ),
        (
            "own module: walk into an imported module",
            ext_payload(ext.EXT_OBJECT, ["stategraph.types", "dataclasses.Field", {}]),
        ),
        (
            "own module: class imported from elsewhere",
            ext_payload(ext.EXT_DATACLASS, ["stategraph.types", "TypedDict", {}]),
        ),
    ]


def _ids() -> list[str]:
    return [name for name, _ in hostile_payloads(Path("/nonexistent"))]


@pytest.mark.parametrize("index", range(len(_ids())), ids=_ids())
def test_hostile_payload_warns_and_loads_plain_data(
    index: int, marker: Path, no_imports: list[str]
) -> None:
    _name, data = hostile_payloads(marker)[index]
    serde = JsonPlusSerializer()
    with pytest.warns(UnknownTypeWarning, match="serde.allow"):
        out = serde.loads_typed(("msgpack", data))
    assert not isinstance(out, subprocess.Popen)
    assert isinstance(out, (dict, list, tuple, str))
    assert EVIL_MODULE not in sys.modules
    assert not [m for m in no_imports if m in ("os", "subprocess", EVIL_MODULE)]


@pytest.mark.parametrize("index", range(len(_ids())), ids=_ids())
def test_hostile_payload_raises_in_strict_mode(index: int, marker: Path) -> None:
    _name, data = hostile_payloads(marker)[index]
    serde = JsonPlusSerializer(strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DeserializationError, match="not allowed"):
            serde.loads_typed(("msgpack", data))
    assert EVIL_MODULE not in sys.modules


def test_hostile_payload_nested_deep_in_plain_data(marker: Path) -> None:
    inner = ormsgpack.Ext(ext.EXT_OBJECT, pack(["os", "system", {"c": f"touch {marker}"}]))
    data = pack({"messages": [{"content": [inner]}]})
    with pytest.warns(UnknownTypeWarning, match="os.system"):
        out = JsonPlusSerializer().loads_typed(("msgpack", data))
    assert out == {"messages": [{"content": [{"c": f"touch {marker}"}]}]}


class _Exploit:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (os.system, (f"touch {self.path}",))


def test_pickle_payload_refused_while_pickle_is_off(marker: Path) -> None:
    data = pickle.dumps(_Exploit(str(marker)))
    for serde in (JsonPlusSerializer(), JsonPlusSerializer(strict=True)):
        with pytest.raises(DeserializationError, match="pickle_fallback=True"):
            serde.loads_typed(("pickle", data))


def test_pickle_is_never_produced_unless_enabled() -> None:
    from stategraph.checkpoint.serde.base import SerializationError

    with pytest.raises(SerializationError):
        JsonPlusSerializer().dumps_typed(_Exploit("x"))


def test_registered_types_are_the_only_user_types_constructed(marker: Path) -> None:
    serde = JsonPlusSerializer(allowed_types=[_Exploit])
    data = ext_payload(ext.EXT_OBJECT, [__name__, "_Exploit", {"path": str(marker)}])
    out = serde.loads_typed(("msgpack", data))
    assert type(out) is _Exploit and out.path == str(marker)  # no __init__/__reduce__ ran


@pytest.mark.parametrize(
    "data",
    [
        pack(ormsgpack.Ext(99, b"")),  # unknown extension code
        ext_payload(ext.EXT_OBJECT, ["only-two", "items"]),
        ext_payload(ext.EXT_DATACLASS, [1, 2, {}]),  # names must be strings
        ext_payload(ext.EXT_DATACLASS, [["os"], "system", {}]),
        ext_payload(ext.EXT_DATETIME, ["not", "a", "date"]),
        ext_payload(ext.EXT_PATH, [7, "x"]),
        ext_payload(ext.EXT_DATETIME, [2024, 1, 1, 0, 0, 0, 0, ["z", "../../../etc/passwd"], 0]),
        ext_payload(ext.EXT_SUBCLASS, ["m", "q", "object", 1]),
        ext_payload(ext.EXT_DATACLASS, ["stategraph.types", "Send", {}]),  # not a dataclass
        b"\xc1",  # never-used msgpack byte
        pack([1, 2])[:-1],  # truncated
    ],
)
def test_malformed_payloads_raise_deserialization_error(data: bytes) -> None:
    with pytest.raises(DeserializationError):
        JsonPlusSerializer().loads_typed(("msgpack", data))


def test_unknown_type_tag() -> None:
    with pytest.raises(DeserializationError, match="Unknown serialization type 'marshal'"):
        JsonPlusSerializer().loads_typed(("marshal", b"\x00"))


def test_own_types_are_allowed_without_registration() -> None:
    from stategraph.types import Interrupt, Overwrite

    data = ext_payload(
        ext.EXT_DATACLASS, ["stategraph.types", "Interrupt", {"value": 1, "id": "i"}]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = JsonPlusSerializer(strict=True).loads_typed(("msgpack", data))
    assert out == Interrupt(1, "i")
    data2 = ext_payload(ext.EXT_DATACLASS, ["stategraph.types", "Overwrite", {"value": [1]}])
    assert JsonPlusSerializer(strict=True).loads_typed(("msgpack", data2)) == Overwrite([1])


def test_warning_filter_error_propagates_warning_itself() -> None:
    data = ext_payload(ext.EXT_OBJECT, ["os", "system", {}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UnknownTypeWarning, match=r"os\.system"):
            JsonPlusSerializer().loads_typed(("msgpack", data))
