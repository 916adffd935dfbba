"""Closing an async run's lease never hangs on the heartbeat.

psycopg answers a cancellation that arrives during a query by cancelling the query
and raising an error of its own instead of ``CancelledError``. The heartbeat treats
storage errors as transient and tries again, so before the fix a cancellation that
arrived mid-renewal was swallowed: the run's ``aclose()`` waited forever for a
heartbeat that kept renewing the lease, and every other run on the thread waited
with it. The saver here renews the way psycopg does under cancellation (a real
in-memory saver whose renewal is slow and turns the cancellation into an error).
"""

from __future__ import annotations

import asyncio
from typing import Any

from lease_helpers import build, run_input

from stategraph.checkpoint.lease import Lease
from stategraph.checkpoint.memory import InMemorySaver

CONFIG: dict[str, Any] = {"configurable": {"thread_id": "hb"}, "lease_timeout": 3.0}


class DriverLikeSaver(InMemorySaver):
    """A renewal takes effect at once, then the driver keeps waiting (on the server's
    answer, say); a cancellation during that wait surfaces as an error."""

    def __init__(self) -> None:
        super().__init__()
        self.renewals = 0
        self.interrupted = 0

    async def alease_renew(self, lease: Lease) -> str | None:
        self.renewals += 1
        stop = await super().alease_renew(lease)
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.interrupted += 1
            raise RuntimeError("query cancellation interrupted") from None
        return stop


async def test_a_cancellation_turned_into_an_error_still_stops_the_heartbeat() -> None:
    saver = DriverLikeSaver()
    # the heartbeat renews after 1 s (lease_timeout / 3); each run lasts ~1.2 s, so
    # its close always finds a renewal waiting
    app = build(saver, delay=0.6, use_async=True)
    for i in range(3):
        out = await asyncio.wait_for(app.ainvoke(run_input(f"m{i}"), CONFIG), timeout=20)
        assert out["log"][-3:] == [f"m{i}", f"a:m{i}", f"b:m{i}"]
    # every run released the lease: a run with the default strategy ("reject")
    # gets the thread at once
    out = await asyncio.wait_for(app.ainvoke(run_input("last"), CONFIG), timeout=20)
    assert out["log"][-1] == "b:last"
    # no heartbeat task of an ended run is still alive
    await asyncio.sleep(0.5)
    left = [t for t in asyncio.all_tasks() if "_abeat" in repr(t.get_coro())]
    assert left == []
    assert saver.interrupted == saver.renewals == 4  # the case under test, every run
