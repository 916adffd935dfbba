"""PostgresStore / AsyncPostgresStore specifics on the real server: schema and
migrations, pools and pipeline mode, the vector modes, JSON fidelity, threads, and
the sync API of the async store."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from stategraph.store.base import PutOp, SearchOp
from stategraph.store.postgres import MIGRATIONS, PostgresStore
from stategraph.store.postgres.aio import AsyncPostgresStore

from .helpers import letters, letters_index
from .pg_helpers import Schema, has_pgvector, require_postgres


@pytest.fixture
def schema() -> Iterator[Schema]:
    require_postgres()
    s = Schema()
    try:
        yield s
    finally:
        s.drop()


def test_setup_creates_versioned_tables_and_is_idempotent(schema: Schema) -> None:
    with PostgresStore.from_conn_string(schema.conninfo) as store:
        store.setup()
        store.setup()
    with PostgresStore.from_conn_string(schema.conninfo) as store:
        store.setup()  # a second process: nothing to do
        store.put(("a",), "k", {"v": 1})
    assert schema.tables() == ["sg_store", "sg_store_migrations", "sg_store_vectors"]
    assert schema.query("SELECT v FROM sg_store_migrations") == [(len(MIGRATIONS),)]


def test_a_newer_schema_is_refused(schema: Schema) -> None:
    with PostgresStore.from_conn_string(schema.conninfo) as store:
        store.setup()
    with psycopg.connect(schema.conninfo, autocommit=True) as conn:
        conn.execute("INSERT INTO sg_store_migrations VALUES (99, 0)")
    with PostgresStore.from_conn_string(schema.conninfo) as store:
        with pytest.raises(RuntimeError, match="newer than this stategraph supports"):
            store.get(("a",), "k")


def test_langgraph_store_tables_are_left_alone(schema: Schema) -> None:
    with psycopg.connect(schema.conninfo, autocommit=True) as conn:
        conn.execute("CREATE TABLE store (prefix text, key text, value jsonb)")
        conn.execute("INSERT INTO store VALUES ('a', 'k', '{\"lg\": true}')")
    with PostgresStore.from_conn_string(schema.conninfo) as store:
        store.put(("a",), "k", {"sg": True})
        assert store.get(("a",), "k").value == {"sg": True}
    assert schema.query("SELECT value::text FROM store") == [('{"lg": true}',)]


def test_values_keep_nul_unicode_and_numbers(schema: Schema) -> None:
    value = {"s": "alice\x00mallory", "u": "é☃𝄞", "big": 2**62, "f": 0.1, "n": None, "l": [1, "x"]}
    with PostgresStore.from_conn_string(schema.conninfo) as store:
        store.put(("a",), "k", value)
        assert store.get(("a",), "k").value == value
        assert [i.key for i in store.search(("a",), filter={"s": "alice\x00mallory"})] == ["k"]
        assert store.search(("a",), filter={"s": "alice"}) == []
        with pytest.raises(TypeError, match="JSON-serializable"):
            store.put(("a",), "bad", {"x": float("nan")})


def test_custom_deserializer(schema: Schema) -> None:
    import json

    seen: list[bytes] = []

    def loads(data: bytes) -> dict[str, Any]:
        seen.append(data)
        return {**json.loads(data), "via": "deserializer"}

    with psycopg.connect(schema.conninfo, autocommit=True) as conn:
        store = PostgresStore(conn, deserializer=loads)
        store.put(("a",), "k", {"v": 1})
        assert store.get(("a",), "k").value == {"v": 1, "via": "deserializer"}
    assert seen and isinstance(seen[0], bytes)


@pytest.mark.parametrize("pipeline", [False, True])
def test_pool_and_pipeline(schema: Schema, pipeline: bool) -> None:
    with PostgresStore.from_conn_string(
        schema.conninfo,
        pool_config={"min_size": 1, "max_size": 4},
        pipeline=pipeline,
        index=letters_index(["text"]),
    ) as store:
        store.batch([PutOp(("d",), str(i), {"text": "ab" * (i + 1)}) for i in range(20)])

        def work(n: int) -> None:
            for i in range(10):
                store.put(("t", str(n)), str(i), {"text": "abc", "n": i})
                assert store.get(("t", str(n)), str(i)).value["n"] == i

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(store.search(("t",), limit=100)) == 40
        assert store.list_namespaces(prefix=("t",)) == [("t", str(n)) for n in range(4)]
        # "ab" * n all point the same way: scores 1.0 (up to float32 rounding)
        top = store.search(("d",), query="ab", limit=3)
        assert len(top) == 3
        assert [r.score for r in top] == pytest.approx([1.0, 1.0, 1.0])


def test_one_connection_shared_by_threads(schema: Schema) -> None:
    with psycopg.connect(schema.conninfo, autocommit=True) as conn:
        store = PostgresStore(conn)
        errors: list[BaseException] = []

        def work(n: int) -> None:
            try:
                for i in range(25):
                    store.batch([PutOp(("t",), f"{n}-{i}", {"n": n}), SearchOp(("t",), limit=5)])
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert len(store.search(("t",), limit=1000)) == 100


def test_sql_ranking_matches_the_in_memory_store(schema: Schema) -> None:
    from stategraph.store.memory import InMemoryStore

    docs = {f"d{i}": {"text": t} for i, t in enumerate(["aab", "abc", "zzz", "cab", "bbb", "a"])}
    memory = InMemoryStore(index=letters_index(["text"]))
    with PostgresStore.from_conn_string(schema.conninfo, index=letters_index(["text"])) as store:
        for key, value in docs.items():
            memory.put(("docs",), key, value)
            store.put(("docs",), key, value)
        store.put(("docs",), "novec", {"other": 1})  # no text: no vector, ranked last
        memory.put(("docs",), "novec", {"other": 1})
        for query in ("ab", "c", "zz", "b"):
            ours = [(r.key, round(r.score or -1, 5)) for r in store.search(("docs",), query=query)]
            mem = [(r.key, round(r.score or -1, 5)) for r in memory.search(("docs",), query=query)]
            assert ours == mem
        assert store.vector_mode == ("pgvector" if has_pgvector() else "array")
        page = store.search(("docs",), query="ab", limit=2, offset=1)
        assert [r.key for r in page] == [
            r.key for r in memory.search(("docs",), query="ab", limit=2, offset=1)
        ]


def test_vector_array_is_selectable(schema: Schema) -> None:
    with PostgresStore.from_conn_string(
        schema.conninfo, index=letters_index(["text"]), vector="array"
    ) as store:
        store.put(("d",), "k", {"text": "abc"})
        assert store.vector_mode == "array"
        rows = schema.query("SELECT embedding FROM sg_store_vectors")
        assert rows[0][0] == letters(["abc"])[0]
        assert "vec" not in [
            r[0]
            for r in schema.query(
                "SELECT column_name FROM information_schema.columns WHERE table_name = "
                "'sg_store_vectors' AND table_schema = current_schema()"
            )
        ]


def test_pgvector_mode_without_the_extension_says_what_to_do(schema: Schema) -> None:
    if has_pgvector():
        pytest.skip("this server has the vector extension: the refusal cannot happen")
    with PostgresStore.from_conn_string(
        schema.conninfo, index=letters_index(["text"]), vector="pgvector"
    ) as store:
        with pytest.raises(RuntimeError, match="vector='array'"):
            store.put(("d",), "k", {"text": "abc"})


def test_pgvector_mode_ranks_like_the_array_mode(schema: Schema) -> None:
    if not has_pgvector():
        pytest.skip(
            "the PostgreSQL server at STATEGRAPH_TEST_PG has no 'vector' extension "
            "(pg_available_extensions); install pgvector to run the pgvector path"
        )
    results = {}
    for mode in ("pgvector", "array"):
        with PostgresStore.from_conn_string(
            schema.conninfo,
            index=letters_index(["text"]),
            vector=mode,  # type: ignore[arg-type]
        ) as store:
            for i, text in enumerate(["aab", "abc", "zzz", "cab"]):
                store.put((mode,), str(i), {"text": text})
            results[mode] = [
                (r.key, round(r.score or 0, 5)) for r in store.search((mode,), query="ab")
            ]
    assert results["pgvector"] == results["array"]


@pytest.mark.parametrize(
    "index",
    [
        {**letters_index(), "distance_type": "l2"},
        {**letters_index(), "ann_index_config": {"kind": "hnsw"}},
    ],
)
def test_unsupported_index_options_are_refused(schema: Schema, index: dict[str, Any]) -> None:
    with psycopg.connect(schema.conninfo, autocommit=True) as conn:
        with pytest.raises(ValueError, match="not supported"):
            PostgresStore(conn, index=index)  # type: ignore[arg-type]
        store = PostgresStore(
            conn,
            index={
                **letters_index(),
                "distance_type": "cosine",
                "ann_index_config": {"kind": "flat"},
            },  # type: ignore[typeddict-unknown-key]
        )
        store.put(("d",), "k", {"text": "x"})


async def test_async_store_pool_ttl_sweeper_and_sync_api_from_threads(schema: Schema) -> None:
    async with AsyncPostgresStore.from_conn_string(
        schema.conninfo,
        pool_config={"min_size": 1, "max_size": 3},
        index=letters_index(["text"]),
        ttl={"default_ttl": 1.0, "sweep_interval_minutes": 10},
    ) as store:
        await store.setup()
        assert store._task is not None and not store._task.done()
        await asyncio.gather(*(store.aput(("a",), str(i), {"text": "abc" * i}) for i in range(10)))
        assert len(await store.asearch(("a",), query="abc", limit=20)) == 10
        # the sync API from another thread while the loop runs
        got = await asyncio.to_thread(lambda: store.get(("a",), "3"))
        assert got is not None and got.value == {"text": "abcabcabc"}
        with pytest.raises(asyncio.InvalidStateError, match="event loop"):
            store.get(("a",), "3")
        store._now = lambda: 1e12  # far in the future: everything expired
        assert await store.sweep_ttl() == 10
        assert await store.asearch(("a",)) == []
    assert store._task is None
