"""Shared helpers for the human-in-the-loop tests: a sync/async runner and small graphs."""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from tests.executor_fixtures import shared_list, with_executor
from typing_extensions import TypedDict
from xxhash import xxh3_128_hexdigest

from stategraph.graph import START, StateGraph


class Runner:
    """Runs graph APIs either synchronously or through their async twins.

    The async variant drives ``ainvoke``/``astream``/``aget_state`` with ``asyncio.run``
    so one test body checks both shells.
    """

    def __init__(self, mode: str, executor: Any = None) -> None:
        self.mode = mode
        self.is_async = mode == "async"
        # tests marked ``executors``: every run gets it as config["executor"]
        self.executor = executor

    def log(self) -> list[Any]:
        """A list for the test's nodes to record calls in (shared with remote workers)."""
        return shared_list(self.executor)

    def __repr__(self) -> str:
        return f"Runner({self.mode})"

    def invoke(self, graph: Any, inp: Any, config: Any = None, **kw: Any) -> Any:
        """``graph.invoke`` or ``graph.ainvoke``."""
        config = with_executor(config, self.executor)
        if self.is_async:
            return asyncio.run(graph.ainvoke(inp, config, **kw))
        return graph.invoke(inp, config, **kw)

    def stream(self, graph: Any, inp: Any, config: Any = None, **kw: Any) -> list[Any]:
        """All chunks of ``graph.stream`` or ``graph.astream``."""
        config = with_executor(config, self.executor)
        if self.is_async:

            async def collect() -> list[Any]:
                return [c async for c in graph.astream(inp, config, **kw)]

            return asyncio.run(collect())
        return list(graph.stream(inp, config, **kw))

    def get_state(self, graph: Any, config: Any, **kw: Any) -> Any:
        """``graph.get_state`` or ``graph.aget_state``."""
        if self.is_async:
            return asyncio.run(graph.aget_state(config, **kw))
        return graph.get_state(config, **kw)

    def history(self, graph: Any, config: Any) -> list[Any]:
        """All snapshots of ``get_state_history`` (newest first)."""
        if self.is_async:

            async def collect() -> list[Any]:
                return [s async for s in graph.aget_state_history(config)]

            return asyncio.run(collect())
        return list(graph.get_state_history(config))


def cfg(thread: str, **extra: Any) -> dict[str, Any]:
    """A run config for ``thread``."""
    return {"configurable": {"thread_id": thread, **extra}}


def xxh(text: str) -> str:
    """xxh3-128 hex digest of ``text`` (how interrupt ids are derived)."""
    return xxh3_128_hexdigest(text.encode())


def shape(snapshots: Sequence[Any]) -> list[tuple[str, int, tuple[str, ...]]]:
    """``(source, step, next)`` of each snapshot: the shape of a history."""
    return [(s.metadata["source"], s.metadata["step"], s.next) for s in snapshots]


class LogState(TypedDict, total=False):
    """State with one append-only list: ``log``."""

    log: Annotated[list[str], operator.add]


def recorder(
    name: str, calls: list[str], *, ask: bool = False
) -> Callable[[LogState], dict[str, list[str]]]:
    """A node that records its run in ``calls`` and appends to ``log``.

    With ``ask=True`` it calls ``interrupt(f"{name}?")`` and logs ``name=answer``.
    """
    from stategraph.types import interrupt

    def node(state: LogState) -> dict[str, list[str]]:
        calls.append(name)
        if ask:
            return {"log": [f"{name}={interrupt(name + '?')}"]}
        return {"log": [name]}

    node.__name__ = name
    return node


def fan_out(
    spec: Sequence[tuple[str, bool]], calls: list[str], *, join: str | None = "j"
) -> StateGraph:
    """``START`` fans out to each ``(name, asks)`` node; all of them join into ``join``."""
    builder = StateGraph(LogState)
    for name, asks in spec:
        builder.add_node(name, recorder(name, calls, ask=asks))
        builder.add_edge(START, name)
    if join is not None:
        builder.add_node(join, recorder(join, calls))
        builder.add_edge([name for name, _ in spec], join)
    return builder


def chain(
    names: Sequence[str],
    calls: list[str],
    *,
    ask: str | None = None,
    nodes: dict[str, Any] | None = None,
) -> StateGraph:
    """A linear graph ``START -> names[0] -> ... -> names[-1]``.

    ``ask`` names the node that interrupts; ``nodes`` replaces some nodes (e.g. by a
    compiled subgraph).
    """
    builder = StateGraph(LogState)
    prev = START
    for name in names:
        action = (nodes or {}).get(name) or recorder(name, calls, ask=name == ask)
        builder.add_node(name, action)
        builder.add_edge(prev, name)
        prev = name
    return builder
