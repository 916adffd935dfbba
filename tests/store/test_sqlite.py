"""SQLite-specific behaviour: threads, injection, schema, connections, persistence."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from stategraph.store._sqlite_filter import sql_prefilter
from stategraph.store.sqlite import MIGRATIONS, SqliteStore
from stategraph.store.sqlite.aio import AsyncSqliteStore

from .helpers import Clock, letters_index


@pytest.mark.parametrize("where", ["file", "memory"])
def test_concurrent_puts_from_threads(tmp_path, where):
    path = tmp_path / "t.db" if where == "file" else ":memory:"
    with SqliteStore.from_conn_string(str(path)) as store:
        errors: list[BaseException] = []
        start = threading.Barrier(8)

        def worker(n: int) -> None:
            try:
                start.wait()
                for i in range(50):
                    store.put(("t", str(n)), f"k{i}", {"n": n, "i": i})
                    if i % 10 == 0:
                        store.search(("t",), filter={"n": n}, limit=5)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        for n in range(8):
            items = store.search(("t", str(n)), limit=100)
            assert sorted(r.value["i"] for r in items) == list(range(50))
        assert len(store.list_namespaces()) == 8
        assert store.conn.execute("SELECT COUNT(*) FROM sg_store").fetchone()[0] == 400


def test_sql_injection_in_filter_matches_nothing(tmp_path):
    with SqliteStore.from_conn_string(str(tmp_path / "i.db")) as store:
        store.put(("a",), "k1", {"x": 1})
        store.put(("a",), "k2", {"x": 2})
        before = store.conn.execute("SELECT prefix, key, value FROM sg_store").fetchall()
        for key in ["x') OR 1=1 --", "x' OR '1'='1", "x; DROP TABLE sg_store; --", '$.x")']:
            assert store.search(("a",), filter={key: 1}) == []
            assert store.search(("a",), filter={key: {"$gt": 0}}) == []
        assert store.search(("a",), filter={"x": "1 OR 1=1"}) == []
        assert store.search(("a') OR 1=1 --",)) == []
        assert store.get(("a",), "k1' OR '1'='1") is None
        after = store.conn.execute("SELECT prefix, key, value FROM sg_store").fetchall()
        assert after == before
        assert [r.key for r in store.search(("a",), filter={"x": 1})] == ["k1"]


def test_schema_is_versioned_and_setup_idempotent(tmp_path):
    path = str(tmp_path / "s.db")
    with SqliteStore.from_conn_string(path) as store:
        store.setup()
        store.setup()
        store.put(("a",), "k", {"v": 1})
        versions = [r[0] for r in store.conn.execute("SELECT v FROM sg_store_migrations")]
        assert versions == list(range(1, len(MIGRATIONS) + 1))
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    with SqliteStore.from_conn_string(path) as again:  # reopening: data kept, no re-migration
        assert again.get(("a",), "k").value == {"v": 1}
        count = again.conn.execute("SELECT COUNT(*) FROM sg_store_migrations").fetchone()[0]
        assert count == len(MIGRATIONS)


def test_newer_schema_is_refused(tmp_path):
    path = str(tmp_path / "n.db")
    with SqliteStore.from_conn_string(path) as store:
        store.setup()
        store.conn.execute("INSERT INTO sg_store_migrations VALUES (99, 0)")
    with SqliteStore.from_conn_string(path) as store, pytest.raises(RuntimeError, match="99"):
        store.get(("a",), "k")


def test_from_conn_string_closes_connection(tmp_path):
    with SqliteStore.from_conn_string(str(tmp_path / "c.db")) as store:
        conn = store.conn
        store.put(("a",), "k", {"v": 1})
    with pytest.raises(sqlite3.ProgrammingError):
        conn.execute("SELECT 1")


def test_user_connection_is_not_closed_and_joins_transactions(tmp_path):
    conn = sqlite3.connect(str(tmp_path / "u.db"), check_same_thread=False)
    store = SqliteStore(conn)
    store.put(("a",), "kept", {"v": 1})
    conn.execute("CREATE TABLE other (x)")
    conn.execute("INSERT INTO other VALUES (1)")  # opens an implicit transaction
    assert conn.in_transaction
    store.put(("a",), "rolled_back", {"v": 2})
    assert store.get(("a",), "rolled_back") is not None
    with pytest.raises(TypeError):  # a failed batch undoes only its own savepoint
        store.put(("a",), "bad", {"v": {1}})
    assert conn.in_transaction
    conn.rollback()
    assert store.get(("a",), "rolled_back") is None
    assert store.get(("a",), "kept").value == {"v": 1}
    store.close()
    assert conn.execute("SELECT COUNT(*) FROM sg_store").fetchone()[0] == 1
    conn.close()


def test_two_stores_share_one_file(tmp_path):
    path = str(tmp_path / "shared.db")
    with SqliteStore.from_conn_string(path) as one, SqliteStore.from_conn_string(path) as two:
        one.put(("a",), "k", {"v": 1})
        assert two.get(("a",), "k").value == {"v": 1}
        two.put(("a",), "k", {"v": 2})
        assert one.get(("a",), "k").value == {"v": 2}
        assert one.get(("a",), "k").created_at == two.get(("a",), "k").created_at


def test_non_json_values_fail_clearly_and_change_nothing():
    with SqliteStore.from_conn_string(":memory:") as store:
        store.put(("a",), "k", {"v": 1})
        with pytest.raises(TypeError, match="not JSON-serializable"):
            store.put(("a",), "k", {"v": object()})
        assert store.get(("a",), "k").value == {"v": 1}


def test_nan_is_refused():
    with SqliteStore.from_conn_string(":memory:") as store:
        with pytest.raises(TypeError, match="NaN"):
            store.put(("a",), "k", {"v": float("nan")})
        assert store.get(("a",), "k") is None


def test_sql_prefilter_binds_keys_and_values():
    flt = {
        "x') OR 1=1 --": 1,
        "a.b": {"$gt": 2, "$ne": 3},
        "n": None,
        "q": "s",
        "tags.0": "x",
        "nested": {"k": 1},
    }
    sql, params = sql_prefilter(flt)
    assert sql == (
        "(json_extract(value, ?) > ? OR json_extract(value, ?) > ?) "
        "AND (json_extract(value, ?) = ?)"
    )
    assert params == ['$."a.b"', 2, '$."a"."b"', 2, '$."q"', "s"]
    assert sql_prefilter(None) == ("", [])


def test_failed_batch_rolls_back():
    from stategraph.store.base import PutOp

    with SqliteStore.from_conn_string(":memory:") as store:
        with pytest.raises(TypeError):
            store.batch([PutOp(("a",), "ok", {"v": 1}), PutOp(("a",), "bad", {"v": {1, 2}})])
        assert store.get(("a",), "ok") is None


def test_vectors_are_float32_blobs():
    with SqliteStore.from_conn_string(":memory:", index=letters_index(["t"])) as store:
        store.put(("a",), "k", {"t": "ab"})
        blob, field = store.conn.execute("SELECT embedding, field FROM sg_store_vectors").fetchone()
        assert field == "t"
        assert len(blob) == 26 * 4
        store.delete(("a",), "k")
        assert store.conn.execute("SELECT COUNT(*) FROM sg_store_vectors").fetchone()[0] == 0


def test_sweep_removes_vectors_too():
    with SqliteStore.from_conn_string(":memory:", index=letters_index(["t"])) as store:
        clock = Clock()
        store._now = clock
        store.put(("a",), "k", {"t": "ab"}, ttl=1)
        clock.advance(minutes=2)
        assert store.sweep_ttl() == 1
        assert store.conn.execute("SELECT COUNT(*) FROM sg_store_vectors").fetchone()[0] == 0


async def test_async_store_context_manager_and_sync_api(tmp_path):
    path = str(tmp_path / "a.db")
    async with AsyncSqliteStore.from_conn_string(path) as store:
        await store.aput(("a",), "k", {"v": 1})
        assert store.get(("a",), "k").value == {"v": 1}  # sync API on the same store
        store.put(("a",), "k2", {"v": 2})
        assert [i.key for i in await store.asearch(("a",))] == ["k2", "k"]
        conn = store.conn
    with pytest.raises(sqlite3.ProgrammingError):
        conn.execute("SELECT 1")
    with SqliteStore.from_conn_string(path) as sync_store:
        assert sync_store.get(("a",), "k2").value == {"v": 2}


async def test_async_store_setup_and_sweep(tmp_path):
    store = AsyncSqliteStore(str(tmp_path / "b.db"))
    try:
        await store.setup()
        await store.setup()
        clock = Clock()
        store._now = clock
        await store.aput(("a",), "k", {"v": 1}, ttl=1)
        clock.advance(minutes=5)
        assert store.sweep_ttl() == 1
        assert await store.asweep_ttl() == 0
    finally:
        await store.aclose()
