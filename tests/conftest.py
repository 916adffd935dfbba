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
    would collide. Worker ``gwN`` gets ``<base>_gwN_<run>`` (``<base>``: the database of
    ``STATEGRAPH_TEST_PG``, default ``test``; ``<run>``: the start of xdist's id of this
    run), created empty, and ``STATEGRAPH_TEST_PG`` names it; :func:`pytest_unconfigure`
    drops it. This runs before collection: the test modules read the variable on import.
    """
    workerinput = getattr(config, "workerinput", {})
    worker = workerinput.get("workerid")
    if not worker:
        return
    # the run's id too: two runs at once on one server (two engineers, two Pythons)
    # must not drop each other's databases
    run = str(workerinput.get("testrunuid", ""))[:8]
    base = os.environ.get("STATEGRAPH_TEST_PG") or DEFAULT_PG
    url = _worker_database(base, f"{worker}_{run}" if run else worker)
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


# the parameter ids of the tests that run on a real Ray or Dask cluster
# (``@pytest.mark.executors``, and the ``engine`` parameter of tests/scaleout)
CLUSTER_IDS = frozenset({"ray", "dask"})
CLUSTER_GROUP = "ray-dask-clusters"


def xdist_scope(nodeid: str) -> str:
    """The unit of work one pytest-xdist worker runs whole: the test's module, or, for a
    test on a Ray or Dask cluster, the group of all such tests."""
    path, _, name = nodeid.partition("::")
    if name.endswith("]") and "[" in name:
        ids = name[name.index("[") + 1 : -1].split("-")
        if CLUSTER_IDS.intersection(ids):
            return CLUSTER_GROUP
    return path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):  # type: ignore[no-untyped-def]
    """``--dist loadgroup`` (how ``make unit`` runs): a module runs whole on one worker (its
    module- and class-scoped fixtures are set up once, as with ``--dist loadfile``), and
    the tests on real Ray and Dask clusters all run on one worker: the clusters start
    once, not on both workers (two of each on 2 cores would starve the other worker).
    Units go out largest first. (xdist's own loadgroup reads ``xdist_group`` marks; the
    test modules use none.)"""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleAndClusterScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

    return ModuleAndClusterScheduling(config, log)
