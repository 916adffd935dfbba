"""Thread TTL: the sweeper deletes expired threads with their runs and checkpoints
(in-process server context on SQLite; no HTTP)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")

from stategraph.server._app import ServeOptions, running_context, sweep_once
from stategraph.server._config import load_config
from stategraph.server._records import threads

pytestmark = pytest.mark.server

APP = Path(__file__).parent / "app" / "langgraph.json"


async def test_expired_threads_are_swept_with_their_checkpoints(tmp_path: Path) -> None:
    options = ServeOptions(data_dir=tmp_path / "data", workers=0, crons=False, studio=False)
    async with running_context(load_config(APP), options) as ctx:
        await ctx.records.run(threads.insert("keep", {}))
        await ctx.records.run(threads.insert("doomed", {}, ttl_minutes=1))
        async with ctx.graphs.graph("steps") as graph:
            for tid in ("keep", "doomed"):
                await graph.ainvoke({"n": 0}, {"configurable": {"thread_id": tid}})
        assert await sweep_once(ctx, 3600) == 0  # not yet expired
        assert await sweep_once(ctx, 3600, now=time.time() + 61) == 1
        assert await ctx.records.read(threads.get("doomed")) is None
        assert await ctx.records.read(threads.get("keep")) is not None
        saver = ctx.storage.saver
        assert await saver.aget_tuple({"configurable": {"thread_id": "doomed"}}) is None
        assert await saver.aget_tuple({"configurable": {"thread_id": "keep"}}) is not None
