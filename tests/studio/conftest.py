"""Fixtures of the studio tests: the demo database, applications and a live server."""

from __future__ import annotations

import importlib.util
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from starlette.testclient import TestClient

from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.store.sqlite import SqliteStore
from stategraph.studio._reading import thread_index_for
from stategraph.studio.app import create_app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load_demo() -> ModuleType:
    if "studio_demo" in sys.modules:
        return sys.modules["studio_demo"]
    spec = importlib.util.spec_from_file_location("studio_demo", EXAMPLES / "studio_demo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["studio_demo"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def demo() -> ModuleType:
    """The example module (its graph and its ``build``)."""
    return _load_demo()


@pytest.fixture(scope="session")
def demo_master(tmp_path_factory: pytest.TempPathFactory, demo: ModuleType) -> str:
    """The demo database, built once."""
    path = str(tmp_path_factory.mktemp("demo") / "demo.sqlite")
    demo.build(path)
    return path


@pytest.fixture
def demo_db(tmp_path: Path, demo_master: str) -> str:
    """A fresh copy of the demo database (four threads) and its store."""
    path = str(tmp_path / "demo.sqlite")
    for suffix in ("", ".store"):
        src = sqlite3.connect(demo_master + suffix)
        dst = sqlite3.connect(path + suffix)
        src.backup(dst)
        src.close()
        dst.close()
    return path


AppFactory = Callable[..., TestClient]


@pytest.fixture
def make_client(demo_db: str, demo: ModuleType) -> Iterator[AppFactory]:
    """``make_client(allow_writes=..., graph=..., token=...)``: a TestClient on the demo db."""
    stack = ExitStack()

    def make(
        *, allow_writes: bool = False, with_graph: bool = True, token: str | None = None,
        with_store: bool = True, path: str | None = None, limits: Any = None,
    ) -> TestClient:  # fmt: skip
        db = path or demo_db
        if allow_writes:
            conn = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
        else:
            conn = sqlite3.connect(
                f"file:{db}?mode=ro", uri=True, check_same_thread=False, isolation_level=None
            )
        stack.callback(conn.close)
        saver = SqliteSaver(conn)
        store = None
        if with_store and Path(db + ".store").exists():
            store = stack.enter_context(SqliteStore.from_conn_string(db + ".store"))
        index = thread_index_for(saver, sqlite=db)
        stack.callback(index.close)
        app = create_app(
            saver,
            graph=demo.graph if with_graph else None,
            store=store,
            index=index,
            allow_writes=allow_writes,
            token=token,
            limits=limits,
        )
        client = TestClient(app, base_url="http://127.0.0.1:2024")
        stack.enter_context(client)
        return client

    yield make
    stack.close()


def csrf_of(client: TestClient) -> str:
    """The CSRF token a page carries."""
    text = client.get("/").text
    start = text.index('name="csrf-token" content="') + len('name="csrf-token" content="')
    return text[start : text.index('"', start)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LiveServer:
    """A studio served by uvicorn on a free loopback port, in a thread, configured as
    ``stategraph studio`` serves it (:func:`stategraph.studio.serving.uvicorn_config`)."""

    def __init__(self, app: Any, limits: Any = None) -> None:
        import uvicorn

        from stategraph.studio.serving import uvicorn_config

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", self.port, limits))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the studio server did not start in 20 s")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture
def live_studio(demo_db: str, demo: ModuleType) -> Iterator[tuple[LiveServer, str]]:
    """A writable studio over the demo database, served for real; yields (server, db)."""
    with ExitStack() as stack:
        conn = sqlite3.connect(demo_db, check_same_thread=False, isolation_level=None)
        stack.callback(conn.close)
        saver = SqliteSaver(conn)
        store = stack.enter_context(SqliteStore.from_conn_string(demo_db + ".store"))
        index = thread_index_for(saver, sqlite=demo_db)
        stack.callback(index.close)
        app = create_app(saver, graph=demo.graph, store=store, index=index, allow_writes=True)
        server = stack.enter_context(LiveServer(app))
        yield server, demo_db
