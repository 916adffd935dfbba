"""What the PostgreSQL run queue does beyond the queue contract: its schema and
migrations, procrastinate's view of the runs, retention, isolation, wake-ups across
connections, cron tick retention and its input checks."""

from __future__ import annotations

import asyncio
import time
import uuid

import psycopg
import pytest
from psycopg import sql
from tests.checkpoint.saver_harness import PG_URL, require_postgres
from tests.server.queue_contract import LEASE, run

from stategraph.server._pgqueue import MIGRATIONS, PostgresRunQueue
from stategraph.server._pgqueue._schema import _procrastinate_migrations, procrastinate_version

pytestmark = pytest.mark.server


def fresh_schema() -> str:
    return f"sg_pgq_t_{uuid.uuid4().hex[:10]}"


def drop(schema: str) -> None:
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def rows(schema: str, query: str, params: object = None) -> list[tuple]:
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        return conn.execute(query, params).fetchall()  # type: ignore[arg-type]


def execute(schema: str, query: str) -> None:
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        conn.execute(query)


# -- schema and migrations ---------------------------------------------------------------
async def test_setup_creates_everything_in_its_own_schema_once_even_when_raced() -> None:
    require_postgres()
    schema = fresh_schema()
    queues = [PostgresRunQueue(PG_URL, schema=schema) for _ in range(3)]
    try:
        await asyncio.gather(*(q.setup() for q in queues))
        await queues[0].setup()  # and again: nothing to do
        tables = {
            r[0]
            for r in rows(
                schema,
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                (schema,),
            )
        }
        assert {
            "procrastinate_jobs",
            "procrastinate_workers",
            "sg_runs",
            "sg_queue_migrations",
        } <= tables
        assert dict(rows(schema, "SELECT component, version FROM sg_queue_migrations")) == {
            "procrastinate": procrastinate_version(),
            "stategraph": str(len(MIGRATIONS)),
        }
        # nothing leaked into the default schema
        public = rows(
            schema,
            "SELECT count(*) FROM information_schema.tables"
            " WHERE table_schema = 'public' AND table_name = 'sg_runs'",
        )
        assert public == [(0,)]
    finally:
        for q in queues:
            await q.aclose()
        drop(schema)


async def test_a_schema_set_up_by_a_newer_version_is_refused_with_a_clear_error() -> None:
    require_postgres()
    schema = fresh_schema()
    q = PostgresRunQueue(PG_URL, schema=schema)
    try:
        await q.setup()
        execute(
            schema, "UPDATE sg_queue_migrations SET version = '99' WHERE component = 'stategraph'"
        )
        with pytest.raises(RuntimeError, match=f"schema '{schema}' is at migration 99"):
            await q.setup()
        execute(
            schema,
            f"UPDATE sg_queue_migrations SET version = '{len(MIGRATIONS)}'"
            " WHERE component = 'stategraph';"
            " UPDATE sg_queue_migrations SET version = '99.0.0' WHERE component = 'procrastinate'",
        )
        with pytest.raises(RuntimeError, match=r"procrastinate 99\.0\.0, newer than"):
            await q.setup()
    finally:
        await q.aclose()
        drop(schema)


def test_procrastinate_upgrades_apply_its_migration_files_between_the_versions() -> None:
    names = [name for name, _ in _procrastinate_migrations("3.3.0", "3.4.0")]
    assert names and all(n.startswith("03.04.00_") for n in names)
    assert names == sorted(names)  # pre before post
    assert _procrastinate_migrations("3.4.0", "3.4.0") == []


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"schema": "Bad-Name"}, "schema='Bad-Name'"),
        ({"queue_name": "no spaces"}, "queue_name='no spaces'"),
        ({"keep_finished": -1}, "keep_finished=-1"),
        ({"pool_min": 5, "pool_max": 2}, "pool_min=5"),
    ],
)
def test_bad_settings_are_refused_naming_the_setting(kwargs: dict, needle: str) -> None:
    with pytest.raises(ValueError) as err:
        PostgresRunQueue(PG_URL, **kwargs)
    assert needle in str(err.value)


def test_an_empty_dsn_is_refused() -> None:
    with pytest.raises(ValueError, match="connection string"):
        PostgresRunQueue("")


# -- the runs as procrastinate sees them ------------------------------------------------------
async def test_a_run_is_a_procrastinate_job_locked_by_its_thread_and_the_token_a_worker_row(
    queue: PostgresRunQueue,
) -> None:
    job = run("t1", kwargs={"input": {"q": "hi"}})
    await queue.enqueue(job)
    [(task, lock, status, args)] = rows(
        queue.schema,
        "SELECT task_name, lock, status::text, args FROM procrastinate_jobs",
    )
    assert (task, lock, status) == ("stategraph.run", "thread:t1", "todo")
    assert args["run_id"] == job.run_id and args["kwargs"] == {"input": {"q": "hi"}}
    claim = await queue.claim("w1", LEASE)
    assert claim is not None
    assert rows(queue.schema, "SELECT status::text, worker_id FROM procrastinate_jobs") == [
        ("doing", claim.token)
    ]
    assert rows(queue.schema, "SELECT id FROM procrastinate_workers") == [(claim.token,)]
    await queue.finish(claim, "success")
    assert rows(queue.schema, "SELECT status::text FROM procrastinate_jobs") == [("succeeded",)]
    events = [
        r[0] for r in rows(queue.schema, "SELECT type::text FROM procrastinate_events ORDER BY id")
    ]
    assert events == ["deferred", "started", "succeeded"]
    assert rows(queue.schema, "SELECT count(*) FROM procrastinate_workers") == [(0,)]
    assert await queue.pending("t1") == []


async def test_final_statuses_map_to_procrastinate_end_states(queue: PostgresRunQueue) -> None:
    expected = {
        "success": "succeeded",
        "error": "failed",
        "timeout": "failed",
        "interrupted": "aborted",
    }
    for status in expected:
        await queue.enqueue(run(f"t-{status}", run_id=f"r-{status}"))
        claim = await queue.claim("w", LEASE)
        assert claim is not None
        await queue.finish(claim, status)  # type: ignore[arg-type]
    got = dict(
        rows(
            queue.schema,
            "SELECT r.final_status, j.status::text FROM sg_runs r"
            " JOIN procrastinate_jobs j ON j.id = r.job_id",
        )
    )
    assert got == expected


async def test_finished_runs_are_purged_after_keep_finished(pg_schema: str) -> None:
    q = PostgresRunQueue(PG_URL, schema=pg_schema, queue_name="purge", keep_finished=0.2)
    try:
        await q.setup()
        await q.enqueue(run("t-purge", run_id="r-purge"))
        claim = await q.claim("w", LEASE)
        assert claim is not None
        await q.finish(claim, "success")
        assert await q.claim("w", LEASE) is None  # kept: too recent
        assert rows(pg_schema, "SELECT count(*) FROM sg_runs WHERE run_id = 'r-purge'") == [(1,)]
        await asyncio.sleep(0.3)
        q._last_purge = 0.0  # the purge runs at most once a minute; skip the wait
        assert await q.claim("w", LEASE) is None
        assert rows(pg_schema, "SELECT count(*) FROM sg_runs WHERE run_id = 'r-purge'") == [(0,)]
        # the run id is free again
        await q.enqueue(run("t-purge", run_id="r-purge"))
    finally:
        await q.aclose()


async def test_keep_finished_zero_deletes_at_once(pg_schema: str) -> None:
    q = PostgresRunQueue(PG_URL, schema=pg_schema, queue_name="nokeep", keep_finished=0)
    try:
        await q.setup()
        await q.enqueue(run("t-nokeep", run_id="r-nokeep"))
        claim = await q.claim("w", LEASE)
        assert claim is not None
        await q.finish(claim, "success")
        assert rows(pg_schema, "SELECT count(*) FROM sg_runs WHERE run_id = 'r-nokeep'") == [(0,)]
    finally:
        await q.aclose()


# -- isolation ---------------------------------------------------------------------------
async def test_queue_names_share_a_schema_without_seeing_each_other(pg_schema: str) -> None:
    a = PostgresRunQueue(PG_URL, schema=pg_schema, queue_name="iso-a")
    b = PostgresRunQueue(PG_URL, schema=pg_schema, queue_name="iso-b")
    try:
        await a.setup()
        await b.setup()
        job = run(None)
        await a.enqueue(job)
        assert await b.claim("w", LEASE) is None
        claim = await a.claim("w", LEASE)
        assert claim is not None and claim.run.run_id == job.run_id
    finally:
        await a.aclose()
        await b.aclose()


# -- wake-ups --------------------------------------------------------------------------
async def test_wait_wakes_on_an_enqueue_through_another_connection(queue: PostgresRunQueue) -> None:
    other = PostgresRunQueue(PG_URL, schema=queue.schema)
    try:
        await queue.wait(0.01)  # start listening

        async def later() -> None:
            await asyncio.sleep(0.2)
            await other.enqueue(run("t-wake"))

        task = asyncio.ensure_future(later())
        start = time.monotonic()
        await queue.wait(10.0)
        assert time.monotonic() - start < 5.0
        await task
    finally:
        await other.aclose()


async def test_wait_wakes_when_a_claim_expires(queue: PostgresRunQueue) -> None:
    await queue.enqueue(run("t-exp"))
    dead = await queue.claim("w1", 0.4)
    assert dead is not None
    start = time.monotonic()
    taken = None
    while taken is None and time.monotonic() - start < 3.0:  # spurious wake-ups allowed
        await queue.wait(10.0)
        taken = await queue.claim("w2", LEASE)
    assert taken is not None and taken.attempt == 2
    assert time.monotonic() - start < 3.0


async def test_aclose_wakes_waiters_and_closes(pg_schema: str) -> None:
    q = PostgresRunQueue(PG_URL, schema=pg_schema)
    await q.setup()
    await q.wait(0.01)
    waiter = asyncio.ensure_future(q.wait(30.0))
    await asyncio.sleep(0.1)
    await q.aclose()
    await asyncio.wait_for(waiter, 5.0)
    with pytest.raises(RuntimeError, match=f"schema '{pg_schema}' is closed"):
        await q.enqueue(run("t-closed"))


# -- cron ticks and checks ----------------------------------------------------------------
async def test_cron_ticks_far_behind_the_newest_are_refused_and_forgotten(pg_schema: str) -> None:
    q = PostgresRunQueue(PG_URL, schema=pg_schema, queue_name="ticks", keep_ticks=600)
    try:
        await q.setup()
        base = 1_900_000_000.0
        assert await q.claim_tick("c", base)
        assert await q.claim_tick("c", base + 3600)
        assert not await q.claim_tick("c", base + 60)  # more than keep_ticks behind
        assert await q.claim_tick("c", base + 3300)  # within keep_ticks: fires once
        assert not await q.claim_tick("c", base + 3300)
        stamps = rows(
            pg_schema,
            "SELECT defer_timestamp FROM procrastinate_periodic_defers"
            " WHERE task_name = 'stategraph.cron/ticks' ORDER BY 1",
        )
        assert [s[0] for s in stamps] == [round((base + 3300) * 1000), round((base + 3600) * 1000)]
    finally:
        await q.aclose()


async def test_bad_arguments_are_refused(queue: PostgresRunQueue) -> None:
    with pytest.raises(ValueError, match="lease_seconds"):
        await queue.claim("w", 0)
    with pytest.raises(ValueError, match="cron_id"):
        await queue.claim_tick("x" * 129, 0.0)
    with pytest.raises(ValueError, match="cancel action"):
        await queue.cancel("r", "stop")  # type: ignore[arg-type]


async def test_wait_returns_on_time_while_the_database_is_away() -> None:
    q = PostgresRunQueue(
        "postgresql://postgres@127.0.0.1:1/nowhere", connect_timeout=4.0, pool_min=0
    )
    try:
        start = time.monotonic()
        await q.wait(0.5)
        assert time.monotonic() - start < 3.0
        with pytest.raises(psycopg.OperationalError):
            await q.claim("w", LEASE)
    finally:
        await q.aclose()
