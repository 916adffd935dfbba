"""Deterministic task ids (shared by the runtime and the observers that name tasks)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = ["make_task_id", "task_id_key", "task_id_of_key"]

_xxh3_128_hexdigest: Callable[[bytes], str] | None = None


def make_task_id(*parts: str | int) -> str:
    """Deterministic task id: xxh3-128 of the parts, formatted like a UUID."""
    return task_id_of_key(task_id_key(parts))


def task_id_key(parts: Iterable[str | int]) -> str:
    """The text :func:`make_task_id` hashes for ``parts``: they joined by NUL.

    Keys join too: the key of ``(*a, *b)`` is ``task_id_key(a) + "\x00" +
    task_id_key(b)``, so a constant tail can be computed once.
    """
    return "\x00".join(map(str, parts))


def task_id_of_key(key: str) -> str:
    """The task id of a :func:`task_id_key` (what :func:`make_task_id` returns)."""
    global _xxh3_128_hexdigest
    digest = _xxh3_128_hexdigest
    if digest is None:
        from xxhash import xxh3_128_hexdigest

        digest = _xxh3_128_hexdigest = xxh3_128_hexdigest
    h = digest(key.encode())
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
