"""``stategraph studio --store postgresql://...``: browsing a PostgresStore (real server).

Every test works in a schema of its own (dropped afterwards); the URL puts it on the
``search_path`` the way an application would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack

import psycopg
import pytest
from tests.checkpoint.saver_harness import PG_URL, PgSchema

from stategraph.cli._errors import CliError
from stategraph.cli._main import main
from stategraph.cli._stores import is_postgres_url, open_store
from stategraph.store.postgres import PostgresStore

from .conftest import EXAMPLES, free_port


def _url(schema: PgSchema) -> str:
    """The test database's URL with ``schema`` on the search path."""
    options = urllib.parse.quote(f"-c search_path={schema.name}")
    return f"{PG_URL}{'&' if '?' in PG_URL else '?'}options={options}"


def _tables(schema: PgSchema) -> set[str]:
    with schema.connect() as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (schema.name,),
        ).fetchall()
    return {row[0] for row in rows}


@pytest.fixture
def filled() -> Iterator[PgSchema]:
    """A schema holding a PostgresStore with three items."""
    schema = PgSchema()
    try:
        with PostgresStore.from_conn_string(schema.conninfo) as store:
            store.put(("crew", "ines"), "profile", {"role": "navigator"})
            store.put(("crew", "otto"), "profile", {"role": "cook"})
            store.put(("log",), "day-1", {"weather": "fog"})
        yield schema
    finally:
        schema.drop()


def test_urls_are_told_from_file_names() -> None:
    assert is_postgres_url("postgresql://u@h/db") and is_postgres_url("POSTGRES://h/db")
    assert not is_postgres_url("store.sqlite") and not is_postgres_url("/tmp/postgresql.db")


def test_read_only_store_reads_and_the_server_refuses_writes(filled: PgSchema) -> None:
    with ExitStack() as stack:
        store = open_store(_url(filled), stack)
        item = store.get(("crew", "ines"), "profile")
        assert item is not None and item.value == {"role": "navigator"}
        assert sorted(store.list_namespaces()) == [("crew", "ines"), ("crew", "otto"), ("log",)]
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            store.put(("log",), "day-2", {"weather": "sun"})
    rows = filled.connect().execute("SELECT key FROM sg_store ORDER BY key").fetchall()
    assert [r[0] for r in rows] == ["day-1", "profile", "profile"]


def test_a_schema_without_a_store_is_refused_and_left_alone(capsys, demo_db) -> None:
    schema = PgSchema()
    try:
        with schema.connect() as conn:  # LangGraph's table name, not ours
            conn.execute("CREATE TABLE store (prefix text, key text)")
        code = main(["studio", "--sqlite", demo_db, "--store", _url(schema), "--allow-writes"])
        assert code == 3
        err = capsys.readouterr().err
        assert "no 'sg_store' table" in err and "LangGraph" in err and schema.name in err
        assert _tables(schema) == {"store"}
    finally:
        schema.drop()


def test_an_older_store_schema_is_migrated_only_with_writes_allowed(filled: PgSchema) -> None:
    with filled.connect() as conn:
        conn.execute("DELETE FROM sg_store_migrations")
    with ExitStack() as stack, pytest.raises(CliError, match="--allow-writes") as info:
        open_store(_url(filled), stack)
    assert info.value.code == 2
    with filled.connect() as conn:
        assert conn.execute("SELECT COUNT(*) FROM sg_store_migrations").fetchone() == (0,)
    with ExitStack() as stack:
        store = open_store(_url(filled), stack, allow_writes=True)
        assert store.get(("log",), "day-1").value == {"weather": "fog"}
    with filled.connect() as conn:
        assert conn.execute("SELECT v FROM sg_store_migrations").fetchall() == [(1,)]


def test_unreachable_server_is_a_clear_error(capsys, demo_db) -> None:
    port = free_port()  # nothing listens there
    url = f"postgresql://postgres@127.0.0.1:{port}/test?connect_timeout=5"
    assert main(["studio", "--sqlite", demo_db, "--store", url]) == 3
    assert "Cannot connect to the PostgreSQL store" in capsys.readouterr().err


def _request(url: str, method: str = "GET", body: object = None) -> tuple[int, str]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _start(demo_db: str, store_url: str, *extra: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    cmd = [
        sys.executable, "-m", "stategraph.cli._main", "studio", "--sqlite", demo_db,
        "--store", store_url, "--port", str(port), *extra,
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            if _request(base + "/ok")[0] == 200:
                return proc, base
        except OSError:
            time.sleep(0.2)
    proc.kill()
    out = proc.stdout.read() if proc.stdout else ""
    raise AssertionError(f"the studio did not start: {out}")


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait(timeout=20)


def test_server_process_browses_a_postgres_store(filled: PgSchema, demo_db: str) -> None:
    assert EXAMPLES.is_dir()
    proc, base = _start(demo_db, _url(filled))
    try:
        status, body = _request(base + "/store/namespaces", "POST", {"prefix": ["crew"]})
        assert status == 200
        assert sorted(json.loads(body)["namespaces"]) == [["crew", "ines"], ["crew", "otto"]]
        query = urllib.parse.urlencode({"namespace": "crew.otto", "key": "profile"})
        status, body = _request(f"{base}/store/items?{query}")
        assert status == 200 and json.loads(body)["value"] == {"role": "cook"}
        status, body = _request(
            base + "/store/items", "PUT", {"namespace": ["log"], "key": "day-2", "value": {}}
        )
        assert status == 403 and "--allow-writes" in body
        status, page = _request(base + "/ui/store")
        assert status == 200 and "No store" not in page
    finally:
        _stop(proc)
    proc, base = _start(demo_db, _url(filled), "--allow-writes")
    try:
        status, _ = _request(
            base + "/store/items", "PUT", {"namespace": ["log"], "key": "day-2", "value": {"x": 1}}
        )
        assert status == 204
    finally:
        _stop(proc)
    with PostgresStore.from_conn_string(filled.conninfo) as store:
        item = store.get(("log",), "day-2")
        assert item is not None and item.value == {"x": 1}
