"""Errors, warnings, strict mode, pickle opt-in, performance shape and import cost."""

from __future__ import annotations

import dataclasses
import socket
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import ormsgpack
import pytest

from stategraph.checkpoint.serde.base import (
    DeserializationError,
    SerializationError,
    SerializerProtocol,
    UnknownTypeWarning,
)
from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer, dumps_channel


@dataclasses.dataclass
class Unlisted:
    a: int
    when: tuple[int, ...] = ()


class NotADataclass:
    def __init__(self) -> None:
        self.a = 1


def test_serializer_satisfies_protocol() -> None:
    assert isinstance(JsonPlusSerializer(), SerializerProtocol)


def test_lambda_raises_serialization_error_naming_type() -> None:
    with pytest.raises(SerializationError, match="'function'") as info:
        JsonPlusSerializer().dumps_typed(lambda: 1)
    assert isinstance(info.value, TypeError)
    assert "serde.allow" in str(info.value) and "pickle_fallback" in str(info.value)


def test_nested_unserializable_names_the_culprit_and_container() -> None:
    with pytest.raises(SerializationError) as info:
        JsonPlusSerializer().dumps_typed({"ok": 1, "bad": [1, (2, print)]})
    message = str(info.value)
    assert "Value of type 'dict' is not serializable" in message
    assert "'builtin_function_or_method'" in message


def test_unserializable_inside_dataclass_with_int_keys() -> None:
    with pytest.raises(SerializationError, match="NotADataclass"):
        value = Unlisted(1, when=({1: NotADataclass()},))  # type: ignore[arg-type]
        JsonPlusSerializer().dumps_typed(value)


def test_open_file_and_socket(tmp_path: Path) -> None:
    serde = JsonPlusSerializer()
    with open(tmp_path / "f.txt", "w") as handle:
        with pytest.raises(SerializationError, match="TextIOWrapper"):
            serde.dumps_typed({"file": handle})
    sock = socket.socket()
    try:
        with pytest.raises(SerializationError, match="socket"):
            serde.dumps_typed([sock])
    finally:
        sock.close()


def test_plain_class_must_be_registered_to_be_dumped() -> None:
    with pytest.raises(SerializationError, match="NotADataclass"):
        JsonPlusSerializer().dumps_typed(NotADataclass())
    serde = JsonPlusSerializer(allowed_types=[NotADataclass])
    out = serde.loads_typed(serde.dumps_typed(NotADataclass()))
    assert type(out) is NotADataclass and out.a == 1


def test_cycle_raises_serialization_error() -> None:
    value: list[Any] = []
    value.append(value)
    with pytest.raises(SerializationError):
        JsonPlusSerializer().dumps_typed(value)


def test_dumps_channel_names_channel_and_type() -> None:
    serde = JsonPlusSerializer()
    assert dumps_channel(serde, "messages", [1]) == serde.dumps_typed([1])
    with pytest.raises(SerializationError) as info:
        dumps_channel(serde, "tools", {"fn": lambda: 1})
    message = str(info.value)
    assert message.startswith("Cannot serialize the value of channel 'tools': ")
    assert "'function'" in message and "'dict'" in message


def test_dumps_channel_wraps_foreign_serializer_type_errors() -> None:
    class Foreign:
        def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
            raise TypeError("nope")

        def loads_typed(self, data: tuple[str, bytes]) -> Any:
            return None

    with pytest.raises(SerializationError, match=r"channel 'x'.*'set'.*nope"):
        dumps_channel(Foreign(), "x", {1})


def test_unknown_type_warns_with_how_to_allow() -> None:
    data = JsonPlusSerializer().dumps_typed(Unlisted(1, (2,)))
    with pytest.warns(UnknownTypeWarning) as record:
        out = JsonPlusSerializer().loads_typed(data)
    assert out == {"a": 1, "when": (2,)}
    message = str(record[0].message)
    assert f"{__name__}.Unlisted" in message
    assert "serde.allow(Unlisted)" in message and "schema" in message


def test_strict_mode_raises() -> None:
    data = JsonPlusSerializer().dumps_typed({"x": [Unlisted(1)]})
    serde = JsonPlusSerializer(strict=True)
    with pytest.raises(DeserializationError, match=r"Unlisted.*serde.allow\(Unlisted\)"):
        serde.loads_typed(data)
    serde.allow(Unlisted)
    assert serde.loads_typed(data) == {"x": [Unlisted(1)]}
    serde.strict = False
    assert serde.strict is False


def test_strict_can_be_turned_on_later() -> None:
    serde = JsonPlusSerializer()
    data = serde.dumps_typed(Unlisted(1))
    serde.strict = True
    with pytest.raises(DeserializationError):
        serde.loads_typed(data)


def test_pickle_fallback_round_trip() -> None:
    serde = JsonPlusSerializer(pickle_fallback=True)
    tag, data = serde.dumps_typed(NotADataclass())
    assert tag == "pickle"
    out = serde.loads_typed((tag, data))
    assert type(out) is NotADataclass and out.a == 1
    assert serde.dumps_typed({"a": 1})[0] == "msgpack"  # msgpack stays the first choice


def test_pickle_fallback_still_fails_for_lambdas() -> None:
    with pytest.raises(SerializationError, match="nor pickle"):
        JsonPlusSerializer(pickle_fallback=True).dumps_typed(lambda: 1)


def test_plain_json_data_takes_no_python_walk() -> None:
    serde = JsonPlusSerializer()
    calls: list[Any] = []
    real = serde._fast.default

    def counting(obj: Any) -> Any:
        calls.append(obj)
        return real(obj)

    serde._fast.default = counting
    value = {f"k{i}": [i, str(i), None, 1.5, {"n": True}] for i in range(20)}
    tag, data = serde.dumps_typed(value)
    assert tag == "msgpack" and data == ormsgpack.packb(value)
    assert calls == []
    serde.dumps_typed({"t": (1, 2)})
    assert calls == [(1, 2)]


def test_concurrent_use_from_threads() -> None:
    serde = JsonPlusSerializer(allowed_types=[Unlisted])
    errors: list[BaseException] = []
    values = [{"i": i, "dc": Unlisted(i, (i,)), "keys": {i: {i}}} for i in range(50)]

    def work() -> None:
        try:
            for value in values:
                assert serde.loads_typed(serde.dumps_typed(value)) == value
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_with_msgpack_allowlist_copies() -> None:
    base = JsonPlusSerializer(strict=True)
    extended = base.with_msgpack_allowlist([Unlisted])
    data = base.dumps_typed(Unlisted(1))
    assert extended.loads_typed(data) == Unlisted(1)
    assert Unlisted in extended.allowed_types and Unlisted not in base.allowed_types
    with pytest.raises(DeserializationError):
        base.loads_typed(data)


def test_allow_rejects_non_classes() -> None:
    with pytest.raises(TypeError, match="Only classes"):
        JsonPlusSerializer().allow(print)  # type: ignore[arg-type]


def test_import_is_light() -> None:
    code = (
        "import sys, stategraph.checkpoint.serde.jsonplus, stategraph.checkpoint.serde.base;"
        "bad = [m for m in ('pydantic', 'asyncio', 'sqlite3', 'concurrent.futures', 'pickle')"
        " if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_base_module_imports_no_ormsgpack() -> None:
    code = "import sys, stategraph.checkpoint.serde.base; print('ormsgpack' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_package_exports_lazily() -> None:
    import stategraph.checkpoint.serde as serde_pkg

    assert serde_pkg.JsonPlusSerializer is JsonPlusSerializer
    assert serde_pkg.SerializationError is SerializationError
    with pytest.raises(AttributeError):
        serde_pkg.nope
    assert "JsonPlusSerializer" in dir(serde_pkg)


def test_maybe_add_typed_methods_wraps_untyped_serializers() -> None:
    import json

    from stategraph.checkpoint.serde.base import maybe_add_typed_methods

    class JsonBytes:
        def dumps(self, obj: Any) -> bytes:
            return json.dumps(obj).encode()

        def loads(self, data: bytes) -> Any:
            return json.loads(data)

    typed = maybe_add_typed_methods(JsonBytes())
    assert typed.loads_typed(typed.dumps_typed({"a": 1})) == {"a": 1}
    assert typed.dumps_typed(None) == ("null", b"")
    with pytest.raises(DeserializationError):
        typed.loads_typed(("msgpack", b"\x80"))
    serde = JsonPlusSerializer()
    assert maybe_add_typed_methods(serde) is serde
    with pytest.raises(TypeError):
        maybe_add_typed_methods(object())  # type: ignore[arg-type]


def test_repr_mentions_options() -> None:
    text = repr(JsonPlusSerializer(strict=True, allowed_types=[Unlisted]))
    assert "strict=True" in text and "pickle_fallback=False" in text


def test_deserialization_error_is_value_error() -> None:
    assert issubclass(DeserializationError, ValueError)
    assert issubclass(SerializationError, TypeError)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError):
            JsonPlusSerializer().loads_typed(("msgpack", b"\xc1"))
