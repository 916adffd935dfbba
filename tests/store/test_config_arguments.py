"""The ``index=`` and ``ttl=`` arguments of a store share one check: not a dict is a
TypeError naming the argument, an unknown key a ValueError listing the known ones."""

from __future__ import annotations

from typing import Any

import pytest

from stategraph.store.memory import InMemoryStore


def _embed(texts: list[str]) -> list[list[float]]:
    return [[1.0, 0.0] for _ in texts]


def _bad(value: object) -> Any:
    """A wrong argument, past the type checker."""
    return value


def test_index_not_a_dict() -> None:
    with pytest.raises(TypeError) as err:
        InMemoryStore(index=_bad([2, _embed]))
    assert str(err.value) == (
        "index must be a dict like {'dims': 1536, 'embed': fn, 'fields': ['text']}, got list."
    )


def test_index_unknown_key() -> None:
    with pytest.raises(ValueError) as err:
        InMemoryStore(index=_bad({"dims": 2, "embed": _embed, "field": ["x"]}))
    assert str(err.value) == (
        "Unknown index config keys ['field']; supported: ['dims', 'embed', 'fields']."
    )


def test_ttl_not_a_dict() -> None:
    with pytest.raises(TypeError) as err:
        InMemoryStore(ttl=_bad(5))
    assert str(err.value) == (
        "ttl must be a dict like {'default_ttl': 60, 'refresh_on_read': True}, got int."
    )


def test_ttl_unknown_key() -> None:
    with pytest.raises(ValueError) as err:
        InMemoryStore(ttl=_bad({"default": 1}))
    assert str(err.value) == (
        "Unknown TTL config keys ['default']; supported: "
        "['default_ttl', 'refresh_on_read', 'sweep_interval_minutes']."
    )


def test_valid_configs_pass() -> None:
    index: Any = {"dims": 2, "embed": _embed}
    store = InMemoryStore(index=index, ttl={"default_ttl": 1.5})
    assert store.index_config is not None
    assert store.ttl_config == {"default_ttl": 1.5}
