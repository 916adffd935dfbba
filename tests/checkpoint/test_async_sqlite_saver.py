"""``AsyncSqliteSaver`` specifics: its worker thread, its sync methods, its lifecycle."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from stategraph.checkpoint.base import ChannelVersions, create_checkpoint, empty_checkpoint
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver

T = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}


def make(saver: Any, value: Any) -> tuple[Any, ChannelVersions]:
    checkpoint = empty_checkpoint()
    version = saver.get_next_version(None, None)
    checkpoint["channel_values"] = {"x": value}
    checkpoint["channel_versions"] = {"x": version}
    return checkpoint, {"x": version}


async def test_from_conn_string_roundtrip_and_close(tmp_path: Path) -> None:
    db = str(tmp_path / "a.sqlite")
    async with AsyncSqliteSaver.from_conn_string(db) as saver:
        await saver.setup()
        checkpoint, versions = make(saver, {"a": 1})
        config = await saver.aput(T, checkpoint, {"step": 0}, versions)
        await saver.aput_writes(config, [("x", 2)], "task")
        saved = await saver.aget_tuple(config)
        assert saved is not None
        assert saved.checkpoint["channel_values"] == {"x": {"a": 1}}
        assert saved.pending_writes == [("task", "x", 2)]
        conn = saver.conn
    with pytest.raises(sqlite3.ProgrammingError):
        conn.execute("SELECT 1")
    # Same tables and format as SqliteSaver.
    with SqliteSaver.from_conn_string(db) as sync_saver:
        again = sync_saver.get_tuple(config)
        assert again is not None and again.checkpoint["channel_values"] == {"x": {"a": 1}}


async def test_calls_run_on_one_dedicated_thread(tmp_path: Path) -> None:
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.sqlite")) as saver:
        seen: set[str] = set()
        real = saver.core.get_tuple

        def spy(config: dict[str, Any]) -> Any:
            seen.add(threading.current_thread().name)
            return real(config)

        saver.core.get_tuple = spy  # type: ignore[method-assign]
        await asyncio.gather(*(saver.aget_tuple(T) for _ in range(20)))
        assert len(seen) == 1
        assert next(iter(seen)).startswith("stategraph-sqlite")
        assert threading.current_thread().name not in seen


async def test_concurrent_tasks_lose_nothing(tmp_path: Path) -> None:
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.sqlite")) as saver:

        async def run(i: int) -> None:
            config: dict[str, Any] = {"configurable": {"thread_id": f"t{i}"}}
            parent = empty_checkpoint()
            for step in range(15):
                child = create_checkpoint(parent, None, step)
                version = saver.get_next_version(child["channel_versions"].get("x"), None)
                child["channel_values"]["x"] = step
                child["channel_versions"]["x"] = version
                config = await saver.aput(config, child, {"step": step}, {"x": version})
                await saver.aput_writes(config, [("x", step)], "task")
                parent = child

        await asyncio.gather(*(run(i) for i in range(6)))
        for i in range(6):
            listed = [t async for t in saver.alist({"configurable": {"thread_id": f"t{i}"}})]
            assert [t.checkpoint["channel_values"]["x"] for t in listed] == list(range(14, -1, -1))
            assert [t.pending_writes for t in listed] == [
                [("task", "x", s)] for s in range(14, -1, -1)
            ]
        many = [t async for t in saver.alist(None)]
        assert len(many) == 90
        assert [t async for t in saver.alist(None, limit=70)] == many[:70]


async def test_sync_methods_refuse_inside_event_loop(tmp_path: Path) -> None:
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.sqlite")) as saver:
        checkpoint, versions = make(saver, 1)
        with pytest.raises(RuntimeError, match=r"running event loop.*await saver\.aput"):
            saver.put(T, checkpoint, {}, versions)
        with pytest.raises(RuntimeError, match=r"aget_tuple"):
            saver.get_tuple(T)
        with pytest.raises(RuntimeError, match=r"alist"):
            saver.list(None)
        with pytest.raises(RuntimeError, match=r"aput_writes"):
            saver.put_writes(T, [], "task")
        with pytest.raises(RuntimeError, match=r"adelete_thread"):
            saver.delete_thread("t")
        with pytest.raises(RuntimeError, match=r"aget_tuple"):
            saver.get(T)

        # From a thread without a running loop the sync methods work.
        def sync_use() -> Any:
            config = saver.put(T, checkpoint, {"step": 3}, versions)
            saver.put_writes(config, [("x", 9)], "task")
            return saver.get_tuple(config), [t.config for t in saver.list(None)]

        saved, listed = await asyncio.to_thread(sync_use)
        assert saved.metadata == {"step": 3}
        assert saved.pending_writes == [("task", "x", 9)]
        assert listed == [saved.config]
        assert (await saver.aget(saved.config))["channel_values"] == {"x": 1}  # type: ignore[index]
        await asyncio.to_thread(saver.delete_thread, "t")
        assert await saver.aget_tuple(T) is None


def test_sync_use_without_event_loop(tmp_path: Path) -> None:
    conn = sqlite3.connect(
        str(tmp_path / "a.sqlite"), check_same_thread=False, isolation_level=None
    )
    saver = AsyncSqliteSaver(conn)
    checkpoint, versions = make(saver, "v")
    config = saver.put(T, checkpoint, {}, versions)
    saved = saver.get_tuple(config)
    assert saved is not None and saved.checkpoint["channel_values"] == {"x": "v"}
    saver.serde = saver.core.serde  # the serde property is settable and shared
    assert saver.serde is saver.core.serde
    saver._close()


def test_twins_keep_the_core_signatures_and_kinds() -> None:
    """Each method forwarded to the wrapped ``SqliteSaver`` shows the core method's
    signature; the ``a``-methods are coroutine functions (``alist`` an async generator)."""
    import inspect

    forwarded = [
        "get_tuple", "list", "put", "put_writes", "delete_thread", "get_delta_channel_history",
        "prune", "delete_for_runs", "copy_thread", "sweep", "vacuum", "lease_acquire",
        "lease_enqueue", "lease_dequeue", "lease_renew", "lease_release", "lease_rollback",
    ]  # fmt: skip
    for name in forwarded:
        core = inspect.signature(getattr(SqliteSaver, name))
        for twin in (name, f"a{name}"):
            method = getattr(AsyncSqliteSaver, twin)
            assert method.__name__ == twin
            assert list(inspect.signature(method).parameters) == list(core.parameters)
        assert not inspect.iscoroutinefunction(getattr(AsyncSqliteSaver, name))
        if name == "list":
            assert inspect.isasyncgenfunction(AsyncSqliteSaver.alist)
        else:
            assert inspect.iscoroutinefunction(getattr(AsyncSqliteSaver, f"a{name}"))


async def test_sync_twins_refuse_inside_the_event_loop(tmp_path: Path) -> None:
    conn = sqlite3.connect(str(tmp_path / "r.sqlite"), check_same_thread=False)
    saver = AsyncSqliteSaver(conn)
    try:
        with pytest.raises(RuntimeError, match=r"AsyncSqliteSaver\.put_writes\(\) was called"):
            saver.put_writes(T, [], "task")
        with pytest.raises(RuntimeError, match=r"await saver\.alease_renew"):
            saver.lease_renew(None)  # type: ignore[arg-type]
    finally:
        await asyncio.get_running_loop().run_in_executor(None, saver._close)
