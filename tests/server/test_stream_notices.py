"""Following a run of another process from the notices that carry its events
(PostgreSQL ``NOTIFY``), reading the event table only to fill a gap."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("starlette")

from stategraph.server._records import events
from stategraph.server._streams import END, RunStreams

pytestmark = pytest.mark.server


class _Db:
    dialect = "postgres"

    async def listen(self, channel: str, callback: Any) -> Any:
        assert channel == events.CHANNEL
        return asyncio.get_running_loop().create_future()


class _Records:
    """The event table and run statuses in memory; counts the reads."""

    def __init__(self) -> None:
        self.db = _Db()
        self.table: list[tuple[int, str, str]] = []
        self.status = "running"
        self.reads: list[str] = []

    async def read(self, op: Any) -> Any:
        sql, params = next(op)
        self.reads.append(sql.split()[1])
        if "sg_srv_events" in sql:
            rows = [r for r in self.table if r[0] > params[1]]
        else:
            rows = [(self.status, None)]
        try:
            op.send(rows)
        except StopIteration as stop:
            return stop.value
        raise AssertionError("one statement expected")


def test_notices_carry_events_and_fall_back_to_the_run_id() -> None:
    rows = [(0, "metadata", '{"run_id": "r"}'), (1, "values", '{"a": "x\\u001ey"}')]
    payload = events.notice("r", rows)
    assert events.parse_notice(payload) == ("r", rows)
    assert events.notice("r", [(0, "values", '"' + "x" * 9000 + '"')]) == "r"
    assert events.notice("r", [(0, "values", '"\x1e"')]) == "r"  # not JSON text: no framing
    assert events.parse_notice("r") == ("r", None)


async def test_an_expected_run_is_followed_from_notices_alone() -> None:
    records = _Records()
    streams = RunStreams(records)  # type: ignore[arg-type]
    streams.expect("r1")
    got: list[tuple[int, str, str]] = []

    async def follow() -> None:
        async for item in streams.follow("r1", fresh=True):
            got.append(item)

    task = asyncio.ensure_future(follow())
    await asyncio.sleep(0.01)
    streams._notified(events.notice("r1", [(0, "metadata", "{}"), (1, "values", "[1]")]))
    streams._notified(events.notice("r2", [(0, "metadata", "{}")]))  # not followed here
    await asyncio.sleep(0.01)
    assert got == [(0, "metadata", "{}"), (1, "values", "[1]")]
    streams._notified(events.notice("r1", [(2, "values", "[2]"), (3, END, "null")]))
    await asyncio.wait_for(task, 2.0)
    assert got[-1] == (2, "values", "[2]") and records.reads == []
    assert "r1" not in streams._remote and "r2" not in streams._remote
    await streams.aclose()


async def test_a_late_follower_reads_the_table_then_fills_gaps() -> None:
    records = _Records()
    records.table = [(0, "metadata", "{}"), (1, "values", "[1]")]
    streams = RunStreams(records)  # type: ignore[arg-type]
    got: list[int] = []

    async def follow() -> None:
        async for seq, _, _ in streams.follow("r1"):
            got.append(seq)

    task = asyncio.ensure_future(follow())
    await asyncio.sleep(0.05)
    assert got == [0, 1] and records.reads == ["seq,"]
    # event 2 came in a notice too big to carry it; event 3's notice shows the gap
    records.table += [(2, "values", "[2]"), (3, "values", "[3]")]
    streams._notified("r1")
    await asyncio.sleep(0.05)
    assert got == [0, 1, 2, 3]
    streams._notified(events.notice("r1", [(4, END, "null")]))
    await asyncio.wait_for(task, 2.0)
    assert got == [0, 1, 2, 3]
    await streams.aclose()


async def test_a_follower_without_notices_ends_when_the_run_ended() -> None:
    records = _Records()
    streams = RunStreams(records)  # type: ignore[arg-type]
    streams.notice_poll = 0.05
    streams.expect("r1")
    records.table = [(0, "metadata", "{}"), (1, END, "null")]
    records.status = "success"  # its notices were lost (the listener reconnected)
    got = [seq async for seq, _, _ in streams.follow("r1", fresh=True)]
    assert got == [0]
    await streams.aclose()


async def test_two_followers_of_one_run_each_get_every_event() -> None:
    records = _Records()
    streams = RunStreams(records)  # type: ignore[arg-type]
    streams.expect("r1")
    got: dict[str, list[int]] = {"stream": [], "wait": []}

    async def follow(name: str) -> None:
        async for seq, _, _ in streams.follow("r1", fresh=True):
            got[name].append(seq)

    tasks = [asyncio.ensure_future(follow(name)) for name in got]
    await asyncio.sleep(0.01)
    streams._notified(events.notice("r1", [(0, "metadata", "{}"), (1, "values", "[1]")]))
    await asyncio.sleep(0.01)
    streams._notified(events.notice("r1", [(2, "values", "[2]"), (3, END, "null")]))
    await asyncio.wait_for(asyncio.gather(*tasks), 2.0)
    assert got == {"stream": [0, 1, 2], "wait": [0, 1, 2]} and records.reads == []
    assert "r1" not in streams._remote
    await streams.aclose()
