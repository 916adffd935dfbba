"""Shared harness for the persistence integration tests.

``Harness`` runs a compiled graph against one saver kind in one calling mode:

* ``("memory", "sync")`` / ``("sqlite", "sync")``: ``invoke``, ``get_state`` ...
* ``("memory", "async")`` / ``("sqlite", "async")`` / ``("aiosqlite", "async")``:
  ``ainvoke``, ``aget_state`` ... driven on one private event loop per test, so the
  tests themselves stay plain functions.

``SpySaver`` wraps any saver, records every ``put``/``put_writes`` (sync or async) and
can raise :class:`Crash` at the k-th one to simulate the process dying there.
"""

from __future__ import annotations

import asyncio
import contextlib
import operator
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from stategraph.graph import END, START, StateGraph
from stategraph.types import StateSnapshot, StateUpdate

COMBOS = [
    pytest.param(("memory", "sync"), id="memory-sync"),
    pytest.param(("sqlite", "sync"), id="sqlite-sync"),
    pytest.param(("memory", "async"), id="memory-async"),
    pytest.param(("sqlite", "async"), id="sqlite-async"),
    pytest.param(("aiosqlite", "async"), id="aiosqlite-async"),
]
DURABILITIES = ["sync", "async", "exit"]


def cfg(thread_id: str, **extra: Any) -> dict[str, Any]:
    """A run config naming ``thread_id`` (plus other configurable keys)."""
    return {"configurable": {"thread_id": thread_id, **extra}}


def cp_id(config: dict[str, Any] | None) -> str | None:
    """The ``checkpoint_id`` a config names (``None`` if it names none)."""
    if config is None:
        return None
    return config["configurable"].get("checkpoint_id")


def shape(history: Sequence[StateSnapshot]) -> list[tuple[str, int, tuple[str, ...]]]:
    """``(source, step, next)`` of each snapshot, in the given order."""
    return [(s.metadata["source"], s.metadata["step"], s.next) for s in history]  # type: ignore[index]


# ---------------------------------------------------------------------- graphs


class LogState(TypedDict):
    """A reducer channel (``log``) and a plain last-value channel (``last``)."""

    log: Annotated[list[str], operator.add]
    last: str


class Runs:
    """Thread-safe count of node executions."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: dict[str, int] = {}
        self.order: list[str] = []

    def hit(self, name: str) -> None:
        with self._lock:
            self.counts[name] = self.counts.get(name, 0) + 1
            self.order.append(name)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self.counts)

    def clear(self) -> None:
        with self._lock:
            self.counts.clear()
            self.order.clear()


def logging_node(name: str, runs: Runs) -> Callable[[LogState], dict[str, Any]]:
    """A node that appends its name to ``log`` and sets ``last``."""

    def node(state: LogState) -> dict[str, Any]:
        runs.hit(name)
        return {"log": [name], "last": name}

    node.__name__ = name
    return node


def chain_builder(runs: Runs, names: Sequence[str] = ("a", "b", "c")) -> StateGraph:
    """START -> names[0] -> ... -> names[-1] -> END over :class:`LogState`."""
    builder = StateGraph(LogState)
    for name in names:
        builder.add_node(name, logging_node(name, runs))
    builder.add_edge(START, names[0])
    for left, right in pairwise(names):
        builder.add_edge(left, right)
    builder.add_edge(names[-1], END)
    return builder


# ---------------------------------------------------------------------- spy saver


class Crash(BaseException):
    """Simulated process death at a saver call (not an ``Exception``: nothing may
    catch it as an ordinary failure)."""


@dataclass
class Call:
    """One recorded saver call."""

    method: str  # "put" or "put_writes"
    parent_id: str | None  # put: parent checkpoint id; put_writes: owning checkpoint id
    checkpoint_id: str | None = None  # put only
    source: str | None = None
    step: int | None = None
    task_id: str | None = None
    channels: tuple[str, ...] = ()
    values: list[tuple[str, Any]] = field(default_factory=list)
    thread: str = ""


class SpySaver(BaseCheckpointSaver[str]):
    """Delegates to ``inner``; records each ``put``/``put_writes`` *after* it succeeded.

    ``crash_at=k`` raises ``error`` (default :class:`Crash`) instead of performing the
    k-th call (1-based) and every call after it (a dead process saves nothing more);
    with ``only_once=True`` only the k-th call fails (a transient error). ``on_call`` runs after
    each successful call with the recorded :class:`Call`.
    """

    def __init__(
        self,
        inner: BaseCheckpointSaver[Any],
        *,
        crash_at: int | None = None,
        on_call: Callable[[Call], None] | None = None,
        error: type[BaseException] = Crash,
        only_once: bool = False,
    ) -> None:
        self.inner = inner
        self.crash_at = crash_at
        self.error = error
        self.only_once = only_once
        self.on_call = on_call
        self.calls: list[Call] = []
        self.attempts = 0
        self.crashed = False
        self._lock = threading.Lock()

    # serde is the inner saver's, so compile() registers schema types on it
    @property  # type: ignore[override]
    def serde(self) -> Any:
        return self.inner.serde

    @serde.setter
    def serde(self, value: Any) -> None:
        self.inner.serde = value

    def _gate(self) -> None:
        with self._lock:
            self.attempts += 1
            if self.only_once:
                if self.attempts == self.crash_at:
                    raise self.error(f"simulated failure of saver call {self.attempts}")
                return
            if self.crashed or (self.crash_at is not None and self.attempts >= self.crash_at):
                self.crashed = True
                raise self.error(f"simulated crash at saver call {self.attempts}")

    def _record(self, call: Call) -> None:
        call.thread = threading.current_thread().name
        with self._lock:
            self.calls.append(call)
        if self.on_call is not None:
            self.on_call(call)

    @staticmethod
    def _put_call(
        config: dict[str, Any], checkpoint: Checkpoint, metadata: CheckpointMetadata
    ) -> Call:
        return Call(
            "put",
            config["configurable"].get("checkpoint_id"),
            checkpoint["id"],
            metadata.get("source"),
            metadata.get("step"),
        )

    @staticmethod
    def _writes_call(
        config: dict[str, Any], writes: Sequence[tuple[str, Any]], task_id: str
    ) -> Call:
        return Call(
            "put_writes",
            config["configurable"].get("checkpoint_id"),
            task_id=task_id,
            channels=tuple(c for c, _ in writes),
            values=list(writes),
        )

    # -- sync
    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        return self.inner.get_tuple(config)

    def list(self, config: dict[str, Any] | None, **kwargs: Any) -> Iterator[CheckpointTuple]:
        return self.inner.list(config, **kwargs)

    def put(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        self._gate()
        out = self.inner.put(config, checkpoint, metadata, new_versions)
        self._record(self._put_call(config, checkpoint, metadata))
        return out

    def put_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._gate()
        self.inner.put_writes(config, writes, task_id, task_path)
        self._record(self._writes_call(config, writes, task_id))

    def delete_thread(self, thread_id: str) -> None:
        self.inner.delete_thread(thread_id)

    # -- async
    async def aget_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        return await self.inner.aget_tuple(config)

    async def alist(self, config: dict[str, Any] | None, **kwargs: Any) -> Any:
        async for item in self.inner.alist(config, **kwargs):
            yield item

    async def aput(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        self._gate()
        out = await self.inner.aput(config, checkpoint, metadata, new_versions)
        self._record(self._put_call(config, checkpoint, metadata))
        return out

    async def aput_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._gate()
        await self.inner.aput_writes(config, writes, task_id, task_path)
        self._record(self._writes_call(config, writes, task_id))

    async def adelete_thread(self, thread_id: str) -> None:
        await self.inner.adelete_thread(thread_id)

    def get_next_version(self, current: Any, channel: None) -> str:
        return self.inner.get_next_version(current, channel)


# ---------------------------------------------------------------------- harness


class Harness:
    """One saver kind in one calling mode (see the module docstring)."""

    def __init__(self, kind: str, mode: str, tmp_path: Path) -> None:
        self.kind = kind
        self.mode = mode
        self.db = str(tmp_path / "checkpoints.sqlite")
        self.loop: asyncio.AbstractEventLoop | None = (
            asyncio.new_event_loop() if mode == "async" else None
        )
        self._stack = contextlib.ExitStack()
        self._async_cms: list[Any] = []
        self.saver = self.new_saver()

    def __repr__(self) -> str:
        return f"Harness({self.kind}, {self.mode})"

    # -- savers
    def new_saver(self) -> BaseCheckpointSaver[Any]:
        """A saver on this harness's storage: the same ``InMemorySaver``, or a new
        connection to the same SQLite file (as a restarted process would open)."""
        if self.kind == "memory":
            existing = getattr(self, "saver", None)
            return existing if existing is not None else InMemorySaver()
        if self.kind == "sqlite":
            return self._stack.enter_context(SqliteSaver.from_conn_string(self.db))
        cm = AsyncSqliteSaver.from_conn_string(self.db)
        saver = self.await_(cm.__aenter__())
        self._async_cms.append(cm)
        return saver

    def close(self) -> None:
        """Close every saver this harness opened, then its event loop."""
        try:
            for cm in reversed(self._async_cms):
                self.await_(cm.__aexit__(None, None, None))
            self._stack.close()
        finally:
            if self.loop is not None:
                self.loop.close()

    def await_(self, coro: Any) -> Any:
        """Run ``coro`` to completion on this harness's event loop."""
        assert self.loop is not None, "await_ needs an async harness"
        return self.loop.run_until_complete(coro)

    # -- run API
    def invoke(self, graph: Any, inp: Any, config: dict[str, Any], **kw: Any) -> Any:
        if self.mode == "async":
            return self.await_(graph.ainvoke(inp, config, **kw))
        return graph.invoke(inp, config, **kw)

    def stream(self, graph: Any, inp: Any, config: dict[str, Any], **kw: Any) -> list[Any]:
        if self.mode == "async":

            async def collect() -> list[Any]:
                return [chunk async for chunk in graph.astream(inp, config, **kw)]

            return self.await_(collect())
        return list(graph.stream(inp, config, **kw))

    # -- state API
    def get_state(self, graph: Any, config: dict[str, Any], **kw: Any) -> StateSnapshot:
        if self.mode == "async":
            return self.await_(graph.aget_state(config, **kw))
        return graph.get_state(config, **kw)

    def history(self, graph: Any, config: dict[str, Any], **kw: Any) -> list[StateSnapshot]:
        if self.mode == "async":

            async def collect() -> list[StateSnapshot]:
                return [s async for s in graph.aget_state_history(config, **kw)]

            return self.await_(collect())
        return list(graph.get_state_history(config, **kw))

    def update_state(
        self, graph: Any, config: dict[str, Any], values: Any, as_node: str | None = None
    ) -> dict[str, Any]:
        if self.mode == "async":
            return self.await_(graph.aupdate_state(config, values, as_node=as_node))
        return graph.update_state(config, values, as_node=as_node)

    def bulk_update_state(
        self, graph: Any, config: dict[str, Any], supersteps: Sequence[Sequence[StateUpdate]]
    ) -> dict[str, Any]:
        if self.mode == "async":
            return self.await_(graph.abulk_update_state(config, supersteps))
        return graph.bulk_update_state(config, supersteps)

    def get_tuple(self, saver: Any, config: dict[str, Any]) -> CheckpointTuple | None:
        if self.mode == "async":
            return self.await_(saver.aget_tuple(config))
        return saver.get_tuple(config)


def sqlite_integrity(path: str) -> str:
    """``PRAGMA integrity_check`` of the SQLite file at ``path``."""
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()
