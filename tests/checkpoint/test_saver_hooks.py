"""BaseCheckpointSaver's implementation hooks: ``list``/``put``/``put_writes`` and their
``a`` twins call ``_list``/``_put``/``_put_writes`` (``_alist``/``_aput``/``_aput_writes``),
and a saver that overrides the public methods instead (LangGraph's way) still works."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import pytest

from stategraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    Config,
    Filter,
    Writes,
    empty_checkpoint,
)


def _config(thread_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id is not None:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


class HookSaver(BaseCheckpointSaver[int]):
    """Implements the sync hooks only, recording the thread each one ran on (``_list``:
    where its items are read)."""

    def __init__(self) -> None:
        super().__init__()
        self.saved: list[CheckpointTuple] = []
        self.writes: list[tuple[str, str, tuple[tuple[str, Any], ...]]] = []
        self.threads: list[str] = []

    def _list(
        self, config: Config | None, filter: Filter, before: Config | None, limit: int | None
    ) -> Iterator[CheckpointTuple]:
        self.threads.append(threading.current_thread().name)
        items = [
            t
            for t in reversed(self.saved)
            if filter is None or filter.items() <= t.metadata.items()
        ]
        yield from items[:limit] if limit is not None else items

    def _put(
        self, config: Config, checkpoint: Checkpoint, meta: CheckpointMetadata, new: ChannelVersions
    ) -> dict[str, Any]:
        self.threads.append(threading.current_thread().name)
        saved = _config(config["configurable"]["thread_id"], checkpoint["id"])
        self.saved.append(CheckpointTuple(saved, checkpoint, meta, None, []))
        return saved

    def _put_writes(self, config: Config, writes: Writes, task_id: str, task_path: str) -> None:
        self.threads.append(threading.current_thread().name)
        self.writes.append((task_id, task_path, tuple(writes)))


def test_sync_methods_call_the_hooks() -> None:
    saver = HookSaver()
    first = empty_checkpoint()
    done = saver.put(_config("t"), first, {"step": 1}, {})
    assert done == _config("t", first["id"])
    saver.put_writes(done, [("a", 1), ("b", 2)], "task-1", "~path")
    assert saver.writes == [("task-1", "~path", (("a", 1), ("b", 2)))]
    saver.put_writes(done, [("c", 3)], "task-2")
    assert saver.writes[-1] == ("task-2", "", (("c", 3),))
    second = empty_checkpoint()
    saver.put(done, second, {"step": 2}, {})
    assert [t.checkpoint["id"] for t in saver.list(None)] == [second["id"], first["id"]]
    assert [t.metadata for t in saver.list(None, filter={"step": 1})] == [{"step": 1}]
    assert [t.checkpoint["id"] for t in saver.list(None, limit=1)] == [second["id"]]


def test_async_twins_run_the_sync_hooks_on_a_worker_thread() -> None:
    saver = HookSaver()

    async def main() -> tuple[dict[str, Any], list[str]]:
        done = await saver.aput(_config("t"), empty_checkpoint(), {"step": 1}, {})
        await saver.aput_writes(done, [("a", 1)], "task-1")
        listed = [t.config async for t in saver.alist(_config("t"), filter={"step": 1})]
        return done, [c["configurable"]["checkpoint_id"] for c in listed]

    done, listed = asyncio.run(main())
    assert listed == [done["configurable"]["checkpoint_id"]]
    assert saver.writes == [("task-1", "", (("a", 1),))]
    assert len(saver.threads) == 3
    assert threading.main_thread().name not in saver.threads


class PublicSaver(BaseCheckpointSaver[int]):
    """Overrides the public methods, as a LangGraph saver does: the hooks stay unused."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def list(
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        self.calls.append(f"list:{limit}")
        return iter(())

    def put(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        self.calls.append("put")
        return _config("t", checkpoint["id"])

    def put_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.calls.append(f"put_writes:{task_id}")


def test_public_overrides_serve_the_async_twins() -> None:
    saver = PublicSaver()

    async def main() -> None:
        await saver.aput(_config("t"), empty_checkpoint(), {}, {})
        await saver.aput_writes(_config("t", "x"), [], "task-9")
        assert [t async for t in saver.alist(None, limit=5)] == []

    asyncio.run(main())
    assert saver.calls == ["put", "put_writes:task-9", "list:5"]


class AsyncHookSaver(BaseCheckpointSaver[int]):
    """Implements the async hooks only."""

    async def _alist(
        self, config: Config | None, filter: Filter, before: Config | None, limit: int | None
    ) -> AsyncIterator[CheckpointTuple]:
        for _ in ():
            yield _

    async def _aput(
        self, config: Config, checkpoint: Checkpoint, meta: CheckpointMetadata, new: ChannelVersions
    ) -> dict[str, Any]:
        return _config("t", checkpoint["id"])


def test_async_only_hooks_make_the_sync_methods_say_so() -> None:
    saver = AsyncHookSaver()
    checkpoint = empty_checkpoint()
    assert asyncio.run(saver.aput(_config("t"), checkpoint, {}, {})) == _config(
        "t", checkpoint["id"]
    )
    with pytest.raises(NotImplementedError, match=r"async-only: call `await saver\.aput"):
        saver.put(_config("t"), checkpoint, {}, {})
    with pytest.raises(NotImplementedError, match=r"async-only: call `await saver\.alist"):
        saver.list(None)
    with pytest.raises(NotImplementedError, match=r"must implement put_writes\(\) or aput_writes"):
        saver.put_writes(_config("t", "x"), [], "task")

    async def writes() -> None:
        await saver.aput_writes(_config("t", "x"), [], "task")

    with pytest.raises(NotImplementedError, match=r"must implement put_writes\(\) or aput_writes"):
        asyncio.run(writes())
