"""Encryption at rest for checkpoints: :class:`EncryptedSerializer` (AES-GCM).

It wraps any serializer. ``dumps_typed`` serializes with the inner serializer, then
encrypts the payload; the stored tag becomes ``"<inner tag>+<cipher name>"`` (for
example ``"msgpack+aes-gcm"``), as LangGraph's ``EncryptedSerializer`` does, so a
saver stores it like any other value. The inner tag is authenticated with the payload:
changing either, using the wrong key, or truncating the data raises
:class:`~stategraph.checkpoint.serde.base.DeserializationError`; a payload never
decrypts into garbage.

The bundled savers also bind each stored row to its place (thread, namespace,
checkpoint, channel, version: see :mod:`stategraph.checkpoint._seal`) with
:meth:`EncryptedSerializer.encrypt_bound`, so a row copied elsewhere does not load.
Plaintext, and rows written before that binding, are refused unless the serializer
is created with ``migration=True`` (read them, and write everything new encrypted
and bound: open a database with it once per migration, then drop it).

AES-GCM comes from the ``cryptography`` package (``pip install 'stategraph[crypto]'``),
imported only when a cipher is created.
"""

from __future__ import annotations

import os
from typing import Any, Protocol, runtime_checkable

from stategraph._optional import requires_extra
from stategraph.checkpoint.serde.base import (
    DeserializationError,
    SerializerProtocol,
    maybe_add_typed_methods,
    typed_pair,
)

__all__ = ["CipherProtocol", "AesGcmCipher", "EncryptedSerializer", "KEY_ENV"]

KEY_ENV = "STATEGRAPH_AES_KEY"
"""The environment variable read for the key when none is passed."""
_NONCE = 12
_TAG = 16


@runtime_checkable
class CipherProtocol(Protocol):
    """Encrypts and decrypts payloads; LangGraph's cipher protocol plus associated data."""

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        """Return ``(cipher_name, ciphertext)``."""
        ...

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        """Return the plaintext; raise if the data is not authentic."""
        ...


def _key_bytes(key: bytes | str | None) -> bytes:
    if key is None:
        env = os.environ.get(KEY_ENV)
        if not env:
            raise ValueError(
                f"No AES key: pass key=... or set the {KEY_ENV} environment variable to a "
                f"16, 24 or 32 byte key (for example 32 random characters)."
            )
        key = env
    raw = key.encode() if isinstance(key, str) else bytes(key)
    if len(raw) not in (16, 24, 32):
        raise ValueError(
            f"An AES key must be 16, 24 or 32 bytes long (AES-128/192/256), got {len(raw)}."
        )
    return raw


class AesGcmCipher:
    """AES-GCM with a random 96-bit nonce per payload: ``nonce || ciphertext || tag``.

    ``associated`` data (the inner serializer's type tag) is authenticated too.
    """

    name = "aes-gcm"

    def __init__(self, key: bytes | str | None = None) -> None:
        """Create the cipher; ``key`` defaults to ``$STATEGRAPH_AES_KEY``."""
        with requires_extra(
            "EncryptedSerializer needs the 'cryptography' package: "
            "pip install 'stategraph[crypto]'."
        ):
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        self._aead = AESGCM(_key_bytes(key))

    def encrypt(self, plaintext: bytes, associated: bytes = b"") -> tuple[str, bytes]:
        """Encrypt ``plaintext``; return ``(name, nonce + ciphertext + tag)``."""
        nonce = os.urandom(_NONCE)
        return self.name, nonce + self._aead.encrypt(nonce, plaintext, associated or None)

    def decrypt(self, ciphername: str, ciphertext: bytes, associated: bytes = b"") -> bytes:
        """Decrypt and authenticate; raise :class:`DeserializationError` on any mismatch."""
        if ciphername != self.name:
            raise DeserializationError(
                f"Cannot decrypt a payload encrypted with {ciphername!r}: this serializer "
                f"uses {self.name!r}."
            )
        from cryptography.exceptions import InvalidTag

        data = bytes(ciphertext)
        if len(data) < _NONCE + _TAG:
            raise DeserializationError(
                f"Cannot decrypt a payload of {len(data)} bytes: too short to be AES-GCM "
                f"data (truncated or not encrypted)."
            )
        try:
            return self._aead.decrypt(data[:_NONCE], data[_NONCE:], associated or None)
        except InvalidTag:
            raise DeserializationError(
                "Cannot decrypt a checkpoint payload: authentication failed. The key is not "
                "the one it was written with, or the stored data was modified."
            ) from None


class EncryptedSerializer:
    """Wraps a serializer and encrypts every payload it writes (AES-GCM by default).

    ``EncryptedSerializer(cipher, serde)`` as in LangGraph; or
    :meth:`from_aes` / :meth:`from_pycryptodome_aes` with a key (default
    ``$STATEGRAPH_AES_KEY``). Payloads written without encryption (a tag without
    ``"+"``) and rows a saver stored before binding rows to their place are refused;
    pass ``migration=True`` to read them while moving a database to encryption
    (``allow_plaintext=True`` is the older name of the same mode).
    """

    __slots__ = ("cipher", "migration", "serde")

    def __init__(
        self,
        cipher: CipherProtocol,
        serde: SerializerProtocol | None = None,
        *,
        migration: bool = False,
        allow_plaintext: bool | None = None,
    ) -> None:
        """Encrypt with ``cipher`` what ``serde`` (default ``JsonPlusSerializer()``) writes.

        ``migration=True`` also reads plaintext and rows written before binding
        (everything written is still encrypted and bound)."""
        if serde is None:
            from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer

            serde = JsonPlusSerializer()
        self.cipher = cipher
        self.serde = maybe_add_typed_methods(serde)
        self.migration = bool(migration or allow_plaintext)

    @property
    def allow_plaintext(self) -> bool:
        """Whether plaintext payloads load: only in migration mode."""
        return self.migration

    @classmethod
    def from_aes(
        cls,
        serde: SerializerProtocol | None = None,
        *,
        key: bytes | str | None = None,
        migration: bool = False,
        allow_plaintext: bool | None = None,
    ) -> EncryptedSerializer:
        """AES-GCM with ``key`` (16, 24 or 32 bytes; default ``$STATEGRAPH_AES_KEY``)."""
        return cls(AesGcmCipher(key), serde, migration=migration, allow_plaintext=allow_plaintext)

    @classmethod
    def from_pycryptodome_aes(
        cls, serde: SerializerProtocol | None = None, **kwargs: Any
    ) -> EncryptedSerializer:
        """LangGraph's constructor name: same as :meth:`from_aes` (``key=...``).

        The cipher comes from ``cryptography`` (AES-GCM), not pycryptodome.
        """
        return cls.from_aes(serde, **kwargs)

    def __getattr__(self, name: str) -> Any:
        """Delegate the rest (``allow``, ``strict``...) to the wrapped serializer."""
        if name in ("serde", "cipher", "migration"):
            raise AttributeError(name)
        return getattr(self.serde, name)

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize with the wrapped serializer, then encrypt the payload."""
        type_, payload = self.serde.dumps_typed(obj)
        name, data = self._encrypt(payload, type_)
        return f"{type_}+{name}", data

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Decrypt (authenticating payload and tag), then load with the wrapped serializer."""
        type_, payload = typed_pair(data)
        if not isinstance(type_, str) or "+" not in type_:
            if not self.migration:
                raise DeserializationError(
                    f"Refusing an unencrypted {type_!r} payload: this serializer encrypts, "
                    "and a plaintext value in its place may have been substituted. To read "
                    "a database written without encryption, use migration=True."
                )
            return self.serde.loads_typed(data)
        if not isinstance(payload, (bytes, bytearray, memoryview)):
            raise DeserializationError(
                f"Cannot decrypt a payload of type {type(payload).__name__}: payloads are bytes."
            )
        inner, _, name = type_.rpartition("+")
        plaintext = self._decrypt(name, bytes(payload), inner)
        return self.serde.loads_typed((inner, plaintext))

    def encrypt_bound(self, plaintext: bytes, place: bytes) -> tuple[str, bytes]:
        """Encrypt ``plaintext`` authenticated together with ``place`` (where it is
        stored); :meth:`decrypt_bound` with another ``place`` fails. A cipher without
        associated data gets ``place`` inside the plaintext, checked on decryption."""
        if isinstance(self.cipher, AesGcmCipher):
            return self.cipher.encrypt(plaintext, place)
        import ormsgpack

        return self.cipher.encrypt(ormsgpack.packb([place, plaintext]))

    def decrypt_bound(self, name: str, data: bytes, place: bytes) -> bytes:
        """Decrypt what :meth:`encrypt_bound` wrote for ``place``; raise
        :class:`DeserializationError` if it was written for another place or changed."""
        if isinstance(self.cipher, AesGcmCipher):
            return self.cipher.decrypt(name, data, place)
        import ormsgpack

        packed = self._decrypt(name, data, "sealed")
        try:
            stored_place, plaintext = ormsgpack.unpackb(packed)
        except (ValueError, TypeError) as exc:
            raise DeserializationError(f"A sealed payload is malformed ({exc}).") from None
        if stored_place != place or type(plaintext) is not bytes:
            raise DeserializationError("the payload was written for another place.")
        return plaintext

    def _encrypt(self, payload: bytes, type_: str) -> tuple[str, bytes]:
        if isinstance(self.cipher, AesGcmCipher):
            return self.cipher.encrypt(payload, type_.encode())
        return self.cipher.encrypt(payload)

    def _decrypt(self, name: str, payload: bytes, inner: str) -> bytes:
        if isinstance(self.cipher, AesGcmCipher):
            return self.cipher.decrypt(name, payload, inner.encode())
        try:
            return self.cipher.decrypt(name, payload)
        except DeserializationError:
            raise
        except Exception as exc:
            raise DeserializationError(
                f"Cannot decrypt a {inner!r} payload with cipher {name!r}: {exc}"
            ) from exc
