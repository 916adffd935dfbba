"""EncryptedSerializer: AES-GCM around any serializer, on a real saver (issue 10)."""

from __future__ import annotations

import dataclasses
import operator
import warnings
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("cryptography", reason="the 'crypto' extra (cryptography) is not installed")

from stategraph.checkpoint.serde.base import DeserializationError
from stategraph.checkpoint.serde.encrypted import AesGcmCipher, EncryptedSerializer
from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.graph import START, StateGraph

KEY = b"k" * 32


def test_round_trip_and_tag_format() -> None:
    serde = EncryptedSerializer.from_aes(key=KEY)
    value = {"a": (1, 2), "when": {3, 4}, "text": "secret words"}
    tag, payload = serde.dumps_typed(value)
    assert tag == "msgpack+aes-gcm"
    assert b"secret words" not in payload
    assert serde.loads_typed((tag, payload)) == value
    assert serde.dumps_typed(value)[1] != payload  # a fresh nonce each time
    assert serde.loads_typed(serde.dumps_typed(None)) is None
    assert serde.loads_typed(serde.dumps_typed(b"raw")) == b"raw"


def test_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEGRAPH_AES_KEY", "0123456789abcdef")
    a = EncryptedSerializer.from_pycryptodome_aes()
    b = EncryptedSerializer.from_aes(key=b"0123456789abcdef")
    assert b.loads_typed(a.dumps_typed([1, 2])) == [1, 2]
    monkeypatch.delenv("STATEGRAPH_AES_KEY")
    with pytest.raises(ValueError, match="STATEGRAPH_AES_KEY"):
        EncryptedSerializer.from_aes()
    with pytest.raises(ValueError, match="16, 24 or 32 bytes"):
        EncryptedSerializer.from_aes(key=b"short")


def test_wrong_key_and_tampering_raise_never_garbage() -> None:
    serde = EncryptedSerializer.from_aes(key=KEY)
    tag, payload = serde.dumps_typed({"n": 1})
    other = EncryptedSerializer.from_aes(key=b"x" * 32)
    with pytest.raises(DeserializationError, match="authentication failed"):
        other.loads_typed((tag, payload))
    for i in range(len(payload)):  # every single flipped bit position of every byte
        bad = bytearray(payload)
        bad[i] ^= 0x01
        with pytest.raises(DeserializationError):
            serde.loads_typed((tag, bytes(bad)))
    with pytest.raises(DeserializationError, match="authentication failed"):
        serde.loads_typed(("json+aes-gcm", payload))  # the inner tag is authenticated
    with pytest.raises(DeserializationError, match="too short"):
        serde.loads_typed((tag, payload[:10]))
    with pytest.raises(DeserializationError, match="'aes-eax'"):
        serde.loads_typed(("msgpack+aes-eax", payload))
    with pytest.raises(DeserializationError):
        serde.loads_typed((tag, "text"))  # type: ignore[arg-type]


def test_plaintext_payloads_are_refused_unless_migrating() -> None:
    plain = JsonPlusSerializer().dumps_typed({"old": True})
    with pytest.raises(DeserializationError, match=r"unencrypted.*migration=True"):
        EncryptedSerializer.from_aes(key=KEY).loads_typed(plain)
    assert EncryptedSerializer.from_aes(key=KEY, migration=True).loads_typed(plain) == {"old": True}
    legacy = EncryptedSerializer.from_aes(key=KEY, allow_plaintext=True)  # the older name
    assert legacy.migration and legacy.loads_typed(plain) == {"old": True}


class _Reversing:
    """A custom cipher (LangGraph's protocol): encrypt/decrypt without associated data."""

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        return "rev", plaintext[::-1]

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        if ciphername != "rev":
            raise ValueError("unknown cipher")
        return ciphertext[::-1]


def test_any_cipher_and_any_serializer() -> None:
    serde = EncryptedSerializer(_Reversing(), JsonPlusSerializer(strict=True))
    tag, payload = serde.dumps_typed([1, "a"])
    assert tag == "msgpack+rev"
    assert serde.loads_typed((tag, payload)) == [1, "a"]
    with pytest.raises(DeserializationError, match="cipher 'other'"):
        serde.loads_typed(("msgpack+other", payload))
    assert serde.strict is True  # delegated to the wrapped serializer
    assert isinstance(AesGcmCipher(KEY).encrypt(b"x")[1], bytes)


class State(TypedDict):
    items: Annotated[list, operator.add]


def test_a_graph_on_sqlite_stores_only_ciphertext(tmp_path: Path) -> None:
    path = tmp_path / "enc.sqlite"
    serde = EncryptedSerializer.from_aes(key=KEY)

    def build(saver: Any) -> Any:
        g = StateGraph(State)
        g.add_node("n", lambda s: {"items": ["from-node"]})
        g.add_edge(START, "n")
        return g.compile(checkpointer=saver)

    config = {"configurable": {"thread_id": "t"}}
    with SqliteSaver.from_conn_string(str(path)) as saver:
        saver.serde = serde
        assert build(saver).invoke({"items": ["top-secret"]}, config) == {
            "items": ["top-secret", "from-node"]
        }
    raw = path.read_bytes()
    assert b"top-secret" not in raw and b"from-node" not in raw
    with SqliteSaver.from_conn_string(str(path)) as saver:
        saver.serde = serde
        assert build(saver).get_state(config).values == {"items": ["top-secret", "from-node"]}
    with SqliteSaver.from_conn_string(str(path)) as saver:
        saver.serde = EncryptedSerializer.from_aes(key=b"w" * 32)
        with pytest.raises(DeserializationError, match="authentication failed"):
            build(saver).get_state(config)


@dataclasses.dataclass
class Note:
    text: str


class NoteState(TypedDict):
    notes: Annotated[list[Note], operator.add]


def test_schema_classes_are_registered_through_the_wrapper(tmp_path: Path) -> None:
    g = StateGraph(NoteState)
    g.add_node("n", lambda s: {"notes": [Note("from-node")]})
    g.add_edge(START, "n")
    config = {"configurable": {"thread_id": "t"}}
    with SqliteSaver.from_conn_string(str(tmp_path / "n.sqlite")) as saver:
        saver.serde = EncryptedSerializer.from_aes(key=KEY)
        app = g.compile(checkpointer=saver)
        app.invoke({"notes": [Note("in")]}, config)
    with SqliteSaver.from_conn_string(str(tmp_path / "n.sqlite")) as saver:
        saver.serde = EncryptedSerializer.from_aes(key=KEY)
        app = g.compile(checkpointer=saver)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert app.get_state(config).values == {"notes": [Note("in"), Note("from-node")]}
