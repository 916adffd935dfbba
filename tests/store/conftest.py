"""Fixtures running one store test suite against every store and both APIs.

``make_api`` is parametrized over (store kind, API mode): the sync API on the sync
stores, the async API on every store (sync stores included). Tests are written once,
as ``async def``, and call ``await api.put(...)``: the adapter calls ``put`` or
``aput`` depending on the mode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from stategraph.store.base import BaseStore

from .helpers import CASES, SYNC_KINDS, Api, close_store, make_store


@pytest.fixture(params=CASES, ids=lambda case: f"{case[0]}-{case[1]}")
def make_api(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Api]]:
    """Factory: ``make_api(index=..., ttl=...)`` -> :class:`Api` on a fresh store."""
    kind, mode = request.param
    stores: list[BaseStore] = []

    def factory(**kwargs: Any) -> Api:
        path = tmp_path / str(len(stores))
        path.mkdir()
        store = make_store(kind, path, **kwargs)
        stores.append(store)
        return Api(store, mode)

    yield factory
    for store in stores:
        close_store(store)


@pytest.fixture(params=SYNC_KINDS)
def sync_store_factory(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[..., BaseStore]]:
    """Factory of sync stores (memory, sqlite file, sqlite :memory:)."""
    stores: list[BaseStore] = []

    def factory(**kwargs: Any) -> BaseStore:
        path = tmp_path / str(len(stores))
        path.mkdir()
        store = make_store(request.param, path, **kwargs)
        stores.append(store)
        return store

    yield factory
    for store in stores:
        close_store(store)
