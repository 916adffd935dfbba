"""Helpers of the differential HITL regression tests (stategraph only).

The expected values in these tests were recorded from LangGraph 1.2.24 running the
same code with the import prefix changed (``tools/differential_hitl/verify_tests.py``
re-runs them against LangGraph).
"""

from __future__ import annotations

import asyncio
import operator
from collections import Counter
from collections.abc import Callable
from typing import Annotated, Any

from typing_extensions import TypedDict

from stategraph.types import interrupt


class Runner:
    """Runs graph APIs either synchronously or through their async twins."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.is_async = mode == "async"

    def __repr__(self) -> str:
        return f"Runner({self.mode})"

    def invoke(self, graph: Any, inp: Any, config: Any, **kw: Any) -> Any:
        """``graph.invoke`` or ``graph.ainvoke``."""
        if self.is_async:
            return asyncio.run(graph.ainvoke(inp, config, **kw))
        return graph.invoke(inp, config, **kw)

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

    def update_state(self, graph: Any, config: Any, values: Any, as_node: Any = None) -> Any:
        """``graph.update_state`` or ``graph.aupdate_state``."""
        if self.is_async:
            return asyncio.run(graph.aupdate_state(config, values, as_node=as_node))
        return graph.update_state(config, values, as_node=as_node)

    def bulk_update_state(self, graph: Any, config: Any, supersteps: Any) -> Any:
        """``graph.bulk_update_state`` or ``graph.abulk_update_state``."""
        if self.is_async:
            return asyncio.run(graph.abulk_update_state(config, supersteps))
        return graph.bulk_update_state(config, supersteps)


def cfg(thread: str = "t") -> dict[str, Any]:
    """A run config for ``thread``."""
    return {"configurable": {"thread_id": thread}}


class Log(TypedDict, total=False):
    """An append-only ``log`` and a last-value ``last``."""

    log: Annotated[list[str], operator.add]
    last: str


def step(name: str, runs: Counter[str] | None = None) -> Callable[[Log], dict[str, Any]]:
    """A node appending ``name`` to the log (counted in ``runs``)."""

    def node(state: Log) -> dict[str, Any]:
        if runs is not None:
            runs[name] += 1
        return {"log": [name]}

    node.__name__ = name
    return node


def asking(
    name: str, *questions: str, runs: Counter[str] | None = None
) -> Callable[[Log], dict[str, Any]]:
    """A node asking each of ``questions`` with ``interrupt()`` and logging the answers."""

    def node(state: Log) -> dict[str, Any]:
        if runs is not None:
            runs[name] += 1
        answers = [interrupt(q) for q in questions]
        return {"log": [f"{name}=" + ",".join(repr(a) for a in answers)]}

    node.__name__ = name
    return node


def shape(snapshots: list[Any]) -> list[tuple[Any, Any, tuple[str, ...]]]:
    """``(source, step, next)`` of each snapshot."""
    return [(s.metadata["source"], s.metadata["step"], s.next) for s in snapshots]


def pending(result: dict[str, Any]) -> list[Any]:
    """The interrupt values of an ``invoke`` result."""
    return [i.value for i in result.get("__interrupt__", [])]
