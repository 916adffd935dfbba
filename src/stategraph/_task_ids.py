"""Deterministic task ids (shared by the runtime and the observers that name tasks)."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["make_task_id"]

_xxh3_128_hexdigest: Callable[[bytes], str] | None = None


def make_task_id(*parts: str | int) -> str:
    """Deterministic task id: xxh3-128 of the parts, formatted like a UUID."""
    global _xxh3_128_hexdigest
    digest = _xxh3_128_hexdigest
    if digest is None:
        from xxhash import xxh3_128_hexdigest

        digest = _xxh3_128_hexdigest = xxh3_128_hexdigest
    h = digest("\x00".join(map(str, parts)).encode())
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
