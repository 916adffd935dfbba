"""Shared pytest configuration for the whole suite."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("PYTHONHASHSEED", "0")

# real Ray and Dask clusters and the ``executor`` fixture (``@pytest.mark.executors``)
pytest_plugins = ["tests.executor_fixtures"]

DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/test"


def _worker_database(base_url: str, worker: str) -> str | None:
    """A fresh database ``<base>_<worker>`` on the server of ``base_url``; its URL, or None
    when PostgreSQL (or psycopg) is not there (the PostgreSQL tests then skip as usual)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        import psycopg
        from psycopg import sql
    except ImportError:
        return None
    parts = urlsplit(base_url)
    base = parts.path.lstrip("/") or "postgres"
    name = f"{base}_{worker}"
    try:
        with psycopg.connect(base_url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error:
        return None
    return urlunsplit(parts._replace(path="/" + name))


def pytest_configure(config):  # type: ignore[no-untyped-def]
    """Under pytest-xdist, give each worker its own PostgreSQL database.

    The PostgreSQL tests share table and schema names, so two workers on one database
    would collide. Worker ``gwN`` gets ``<base>_gwN`` (``<base>``: the database of
    ``STATEGRAPH_TEST_PG``, default ``test``), created empty, and ``STATEGRAPH_TEST_PG``
    names it. This runs before collection: the test modules read the variable on import.
    """
    worker = getattr(config, "workerinput", {}).get("workerid")
    if not worker:
        return
    base = os.environ.get("STATEGRAPH_TEST_PG") or DEFAULT_PG
    url = _worker_database(base, worker)
    if url is not None:
        os.environ["STATEGRAPH_TEST_PG_BASE"] = base
        os.environ["STATEGRAPH_TEST_PG"] = url
        config._stategraph_worker_pg = url


def pytest_unconfigure(config):  # type: ignore[no-untyped-def]
    """Drop the worker's own database (see :func:`pytest_configure`)."""
    url = getattr(config, "_stategraph_worker_pg", None)
    if url is None:
        return
    import psycopg
    from psycopg import sql

    name = url.rsplit("/", 1)[1]
    base = os.environ.get("STATEGRAPH_TEST_PG_BASE") or DEFAULT_PG
    try:
        with psycopg.connect(base, autocommit=True, connect_timeout=5) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
    except psycopg.Error:
        pass  # left behind: the next run on this worker drops it first


# the parameter values that put a test on a real Ray or Dask cluster
CLUSTER_PARAMS = {"ray", "dask"}
CLUSTER_GROUP = "ray-dask-clusters"


def _uses_a_cluster(item) -> bool:  # type: ignore[no-untyped-def]
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return False
    return any(callspec.params.get(key) in CLUSTER_PARAMS for key in ("executor", "engine"))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Browser tests run only when asked for (``-m browser``; ``make studio-browser``).

    Under pytest-xdist (``-n 2 --dist loadgroup``, as ``make unit`` runs), every test
    joins a group that one worker runs whole: its module (its module- and class-scoped
    fixtures are set up once, as with ``--dist loadfile``), except the tests on real Ray
    and Dask clusters, which all join one group (one worker starts the clusters, not
    both: two machines' worth of cluster processes on 2 cores would starve the other
    worker). That group goes first, as the longest.
    """
    if "browser" not in (config.getoption("-m") or ""):
        keep, drop = [], []
        for item in items:
            (drop if item.get_closest_marker("browser") else keep).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
    if getattr(config.option, "dist", "no") != "loadgroup":
        return
    clusters, rest = [], []
    for item in items:
        if item.get_closest_marker("xdist_group"):
            rest.append(item)
        elif _uses_a_cluster(item):
            item.add_marker(pytest.mark.xdist_group(CLUSTER_GROUP))
            clusters.append(item)
        else:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
            rest.append(item)
    items[:] = clusters + rest
