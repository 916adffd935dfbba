"""Real local Ray and Dask clusters for the tests that run graphs on executors.

A test marked ``@pytest.mark.executors`` runs once per executor: ``threads`` (the
default, no cluster), ``ray`` (``ray.init(num_cpus=2)``) and ``dask``
(``LocalCluster(processes=True, n_workers=2)``). It receives the executor through the
``executor`` fixture (``None`` for threads); the runner fixtures of the test packages
pass it to every run as ``config["executor"]``. Clusters start once per session, on
first use.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXECUTORS = ("threads", "ray", "dask")


def _interpreter_path(path: str) -> bool:
    """Whether ``path`` belongs to the interpreter (stdlib, site-packages): never exported,
    since every process that inherits PYTHONPATH (another Python too) would load it."""
    real = os.path.realpath(path)
    roots = {
        os.path.realpath(p)
        for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
    }
    return any(real == r or real.startswith(r + os.sep) for r in roots)


def worker_path() -> str:
    """A PYTHONPATH under which worker processes import the test modules as pytest did
    (the project and the folders pytest put on ``sys.path``; not the interpreter's own)."""
    paths = [
        str(ROOT),
        str(ROOT / "tests"),
        *(p for p in sys.path if p and not _interpreter_path(p)),
    ]
    seen: list[str] = []
    for p in paths:
        if p not in seen:
            seen.append(p)
    return os.pathsep.join(seen)


@pytest.fixture(scope="session")
def ray_executor() -> Iterator[Any]:
    """A RayExecutor on a local Ray started for the session with 2 CPUs."""
    pytest.importorskip("ray", reason="ray is not installed (extra 'ray')")
    import ray

    from stategraph.executors.ray import RayExecutor

    path = worker_path()
    os.environ["PYTHONPATH"] = path
    # the Ray driver replaces builtins.print when it relays a worker's death (its tqdm
    # support): the rest of the suite needs the real print
    os.environ["RAY_TQDM_PATCH_PRINT"] = "0"
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    executor = RayExecutor()
    executor.ready()
    try:
        yield executor
    finally:
        executor.close()
        ray.shutdown()


@pytest.fixture(scope="session")
def dask_executor() -> Iterator[Any]:
    """A DaskExecutor on a LocalCluster of 2 worker processes started for the session."""
    pytest.importorskip("distributed", reason="dask[distributed] is not installed (extra 'dask')")
    import dask
    from distributed import Client, LocalCluster

    from stategraph.executors.dask import DaskExecutor

    os.environ["PYTHONPATH"] = worker_path()
    # a worker that dies fails its task at once (the node's RetryPolicy decides), and a
    # worker holds only the tasks it runs (none queued behind them that would fail too)
    dask.config.set(
        {
            "distributed.scheduler.allowed-failures": 0,
            "distributed.scheduler.worker-saturation": 1.0,
        }
    )
    cluster = LocalCluster(
        processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None
    )
    client = Client(cluster)
    executor = DaskExecutor(client)
    executor.ready()
    try:
        yield executor
    finally:
        executor.close()
        client.close()
        cluster.close()


@pytest.fixture
def executor(request: pytest.FixtureRequest) -> Any:
    """The executor of this test run (``None``: threads); see ``@pytest.mark.executors``."""
    name = getattr(request, "param", "threads")
    if name == "threads":
        return None
    return request.getfixturevalue(f"{name}_executor")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run tests marked ``executors`` once per executor."""
    if "executor" not in metafunc.fixturenames:
        return
    if metafunc.definition.get_closest_marker("executors") is None:
        return
    params = [
        pytest.param(name, id=name, marks=() if name == "threads" else pytest.mark.slow)
        for name in EXECUTORS
    ]
    metafunc.parametrize("executor", params, indirect=True)


def with_executor(config: Any, executor: Any) -> Any:
    """``config`` plus ``"executor": executor`` (unchanged when ``executor`` is None)."""
    if executor is None:
        return config
    return {**(config or {}), "executor": executor}


class SharedList(list):  # type: ignore[type-arg]
    """A list the nodes of a remote task can append to: entries go to a file.

    Tests record what their nodes did in lists; a node running on a Ray or Dask worker
    appends to a copy of such a list in another process. This list travels as its file
    path, every ``append`` adds a pickled line, and every read reloads the file, so the
    assertions of a test hold whichever process the nodes ran in.
    """

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def __reduce__(self) -> Any:
        return (SharedList, (self.path,))

    def _sync(self) -> None:
        import base64
        import pickle

        entries = []
        if os.path.exists(self.path):
            with open(self.path, "rb") as f:
                entries = [pickle.loads(base64.b64decode(line)) for line in f.read().splitlines()]
        super().clear()
        super().extend(entries)

    def append(self, item: Any) -> None:
        import base64
        import pickle

        with open(self.path, "ab") as f:
            f.write(base64.b64encode(pickle.dumps(item)) + b"\n")

    def extend(self, items: Any) -> None:
        for item in items:
            self.append(item)

    def clear(self) -> None:
        open(self.path, "wb").close()
        super().clear()

    def __len__(self) -> int:
        self._sync()
        return super().__len__()

    def __iter__(self) -> Any:
        self._sync()
        return super().__iter__()

    def __getitem__(self, index: Any) -> Any:
        self._sync()
        return super().__getitem__(index)

    def __eq__(self, other: object) -> bool:
        self._sync()
        return list(super().__iter__()) == other

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __contains__(self, item: object) -> bool:
        self._sync()
        return super().__contains__(item)

    def count(self, item: Any) -> int:
        self._sync()
        return super().count(item)

    def __repr__(self) -> str:
        self._sync()
        return super().__repr__()

    __hash__ = None  # type: ignore[assignment]


def shared_list(executor: Any) -> list[Any]:
    """A plain list for threads, a :class:`SharedList` for a remote executor."""
    if executor is None or getattr(executor, "in_process", False):
        return []
    import tempfile

    fd, path = tempfile.mkstemp(prefix="stategraph-calls-", suffix=".log")
    os.close(fd)
    return SharedList(path)
