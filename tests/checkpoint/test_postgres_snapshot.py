"""Reads of the PostgreSQL savers see one consistent snapshot.

``get_tuple`` and each page of ``list`` may take several statements (the checkpoint
rows, then the delta bases and interned items they refer to). When a sweep,
``delete_thread`` or ``prune`` deletes the thread between two of them, the read runs
again in one REPEATABLE READ transaction instead of failing with "stored item
missing". The deletion is injected deterministically right after the first statement.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from saver_harness import PgSchema

from stategraph.checkpoint.base import create_checkpoint, empty_checkpoint
from stategraph.checkpoint.postgres import PostgresSaver
from stategraph.checkpoint.postgres._base import Plan
from stategraph.checkpoint.postgres.aio import AsyncPostgresSaver

BIG = ["a" * 600, "b" * 600, "c" * 600]
"""List items large enough to be interned: reading them takes a second statement."""


def after_first(plan: Plan[Any], hook: Callable[[], None]) -> Plan[Any]:
    """``plan``, with ``hook()`` called once its first statement has been answered."""
    statement = next(plan)
    rows = yield statement
    hook()
    while True:
        try:
            statement = plan.send(rows)
        except StopIteration as stop:
            return stop.value
        rows = yield statement


def fill(saver: PostgresSaver, thread_id: str) -> dict[str, Any]:
    """Two checkpoints of ``thread_id`` holding ``BIG`` (interned); the latest's config.
    Read them with another saver: the writer keeps the items it wrote in memory."""
    config: dict[str, Any] = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    parent = empty_checkpoint()
    for step in range(2):
        child = create_checkpoint(parent, None, step)
        version = saver.get_next_version(child["channel_versions"].get("x"), None)
        child["channel_values"]["x"] = [*BIG, str(step)]
        child["channel_versions"]["x"] = version
        config = saver.put(config, child, {"step": step}, {"x": version})
        parent = child
    return config


class Racing:
    """Deletes the thread (from another connection) between the first and the second
    statement of the first attempt of each read of ``saver``."""

    def __init__(self, saver: Any, deleter: PostgresSaver, thread_id: str) -> None:
        self.deleter, self.thread_id = deleter, thread_id
        self.attempts: list[bool] = []
        get_plan, page_plan = saver._get_tuple_plan, saver.list_page_plan

        def get(statement: Any, first: bool) -> Plan[Any]:
            self.attempts.append(first)
            plan = get_plan(statement, first)
            return after_first(plan, self.delete) if first else plan

        def page(query: Any) -> Plan[Any]:
            self.attempts.append(not self.attempts or self.attempts[-1] is False)
            plan = page_plan(query)
            return after_first(plan, self.delete) if self.attempts[-1] else plan

        saver._get_tuple_plan = get
        saver.list_page_plan = page

    def delete(self) -> None:
        self.deleter.delete_thread(self.thread_id)


@pytest.fixture
def two(pg_schema: PgSchema) -> Iterator[tuple[PostgresSaver, PostgresSaver]]:
    a, b = pg_schema.connect(), pg_schema.connect()
    try:
        yield PostgresSaver(a), PostgresSaver(b)
    finally:
        a.close()
        b.close()


def test_statements_per_read_are_several(two: tuple[PostgresSaver, PostgresSaver]) -> None:
    saver, writer = two
    config = fill(writer, "t")  # the reader caches no items of its own
    seen: list[str] = []
    get_plan = saver._get_tuple_plan

    def counting(statement: Any, first: bool) -> Plan[Any]:
        plan = get_plan(statement, first)
        rows = None
        while True:
            try:
                sql, params = plan.send(rows)
            except StopIteration as stop:
                return stop.value
            seen.append(sql)
            rows = yield (sql, params)

    saver._get_tuple_plan = counting  # type: ignore[method-assign]
    got = saver.get_tuple(config)
    assert got is not None and got.checkpoint["channel_values"]["x"] == [*BIG, "1"]
    assert len(seen) >= 2  # the race below needs a gap between two statements


def test_get_tuple_deleted_between_statements_reads_one_snapshot(
    two: tuple[PostgresSaver, PostgresSaver],
) -> None:
    saver, deleter = two
    config = fill(deleter, "t")
    racing = Racing(saver, deleter, "t")
    assert saver.get_tuple(config) is None  # the snapshot after the deletion: no thread
    assert racing.attempts == [True, False]
    assert list(deleter.list({"configurable": {"thread_id": "t"}})) == []


def test_list_page_deleted_between_statements_reads_one_snapshot(
    two: tuple[PostgresSaver, PostgresSaver],
) -> None:
    saver, deleter = two
    fill(deleter, "t")
    fill(deleter, "u")
    racing = Racing(saver, deleter, "t")
    listed = list(saver.list(None))
    assert [t.config["configurable"]["thread_id"] for t in listed] == ["u", "u"]
    assert [t.checkpoint["channel_values"]["x"][-1] for t in listed] == ["1", "0"]
    assert racing.attempts == [True, False]


def test_read_without_a_race_takes_one_attempt(two: tuple[PostgresSaver, PostgresSaver]) -> None:
    saver, writer = two
    config = fill(writer, "t")
    attempts: list[bool] = []
    get_plan = saver._get_tuple_plan

    def spy(statement: Any, first: bool) -> Plan[Any]:
        attempts.append(first)
        return get_plan(statement, first)

    saver._get_tuple_plan = spy  # type: ignore[method-assign]
    got = saver.get_tuple(config)
    assert got is not None and got.metadata["step"] == 1
    assert attempts == [True]


def test_async_get_and_list_deleted_between_statements(pg_schema: PgSchema) -> None:
    sync_conn, other = pg_schema.connect(), pg_schema.connect()

    async def main() -> None:
        async with await pg_schema.aconnect() as aconn:
            saver = AsyncPostgresSaver(aconn)
            deleter = PostgresSaver(other)
            config = fill(PostgresSaver(sync_conn), "t")
            racing = Racing(saver, deleter, "t")
            assert await saver.aget_tuple(config) is None
            assert racing.attempts == [True, False]
            fill(PostgresSaver(sync_conn), "t")
            racing.attempts.clear()
            assert [x async for x in saver.alist({"configurable": {"thread_id": "t"}})] == []
            assert racing.attempts == [True, False]

    try:
        asyncio.run(main())
    finally:
        sync_conn.close()
        other.close()
