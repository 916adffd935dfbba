"""Shared pytest configuration for the whole suite."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("PYTHONHASHSEED", "0")

# real Ray and Dask clusters and the ``executor`` fixture (``@pytest.mark.executors``)
pytest_plugins = ["tests.executor_fixtures"]


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Browser tests run only when asked for (``-m browser``; ``make studio-browser``)."""
    if "browser" in (config.getoption("-m") or ""):
        return
    keep, drop = [], []
    for item in items:
        (drop if item.get_closest_marker("browser") else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
