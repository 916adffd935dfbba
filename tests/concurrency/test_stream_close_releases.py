"""A stream its consumer closes early gives its thread back at once.

The consumer closes ``astream`` / ``stream`` after the first chunk; the next run on the
same thread with the default strategy (``reject``) must get the thread right away, and
no heartbeat of the closed run may still be alive. Before, the inner driver was left to
the event loop's async-generator hook (or the collector), so the lease outlived the
stream for a while and the next run was refused.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from lease_helpers import build, run_input

from stategraph.checkpoint.memory import InMemorySaver


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}, "lease_timeout": 30.0}


async def test_closing_astream_releases_the_lease_and_heartbeat() -> None:
    app = build(InMemorySaver(), delay=0.05, use_async=True)
    cfg = _config("closed-early-async")
    gc.disable()  # the release must not depend on a collection
    try:
        stream = app.astream(run_input("first"), cfg)
        await stream.__anext__()
        await stream.aclose()
        beats = [t for t in asyncio.all_tasks() if "_abeat" in repr(t.get_coro())]
        assert all(t.done() for t in beats)
        out = await asyncio.wait_for(app.ainvoke(run_input("second"), cfg), timeout=10)
    finally:
        gc.enable()
    assert out["log"][-1] == "b:second"


def test_closing_stream_releases_the_lease() -> None:
    app = build(InMemorySaver(), delay=0.05)
    cfg = _config("closed-early-sync")
    gc.disable()
    try:
        stream = app.stream(run_input("first"), cfg)
        next(stream)
        held = [stream]  # a reference elsewhere (a traceback, a notebook cell) keeps it
        stream.close()
        out = app.invoke(run_input("second"), cfg)
        del held
    finally:
        gc.enable()
    assert out["log"][-1] == "b:second"
