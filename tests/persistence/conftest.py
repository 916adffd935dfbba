"""Fixtures of the persistence integration tests (the harness is in
``persistence_helpers.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from persistence_helpers import COMBOS, Harness


@pytest.fixture(params=COMBOS)
def h(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    """A harness for every (saver kind, calling mode) combination."""
    kind, mode = request.param
    harness = Harness(kind, mode, tmp_path)
    try:
        yield harness
    finally:
        harness.close()
