"""pytest fixtures for testing graphs (loaded automatically when stategraph is installed).

* ``thread_config``: a config with a fresh ``thread_id`` for each test;
* ``checkpointer``: a saver, the test runs once with ``InMemorySaver`` and once with
  ``SqliteSaver`` (a file in the test's temporary folder);
* ``async_checkpointer``: the same with ``InMemorySaver`` and ``AsyncSqliteSaver``;
* ``deterministic_ids``: ids and timestamps reproducible within the test.

The module imports nothing heavy until a fixture is used, so it costs nothing to
projects that do not use it.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from stategraph.testing._clock import DeterministicSource

_async_fixture: Any
try:
    # pytest-asyncio's default "strict" mode runs only async fixtures declared with its
    # own decorator; it works in "auto" mode too
    from pytest_asyncio import fixture as _async_fixture
except ImportError:  # other async plugins (anyio) run plain async fixtures themselves
    _async_fixture = pytest.fixture

_counter = itertools.count()


@pytest.fixture
def thread_config(request: pytest.FixtureRequest) -> dict[str, Any]:
    """``{"configurable": {"thread_id": ...}}`` with an id no other test uses."""
    name = request.node.name.replace("[", "-").rstrip("]")
    return {"configurable": {"thread_id": f"{name}-{next(_counter)}"}}


@pytest.fixture(params=["memory", "sqlite"])
def checkpointer(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Any]:
    """A checkpoint saver: the test runs with ``InMemorySaver`` and with ``SqliteSaver``."""
    if request.param == "memory":
        from stategraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
        return
    from stategraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(str(tmp_path / "checkpoints.sqlite")) as saver:
        yield saver


@_async_fixture(params=["memory", "sqlite"])
async def async_checkpointer(request: pytest.FixtureRequest, tmp_path: Any) -> AsyncIterator[Any]:
    """An async-capable saver: ``InMemorySaver`` and ``AsyncSqliteSaver``."""
    if request.param == "memory":
        from stategraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
        return
    from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "checkpoints.sqlite")) as saver:
        yield saver


@pytest.fixture
def deterministic_ids() -> Iterator[DeterministicSource]:
    """Make checkpoint ids, timestamps and generated message ids reproducible."""
    from stategraph.testing._clock import deterministic

    with deterministic() as source:
        yield source
