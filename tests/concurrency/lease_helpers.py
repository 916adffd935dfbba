"""Shared pieces of the thread-lease tests: the graph, the savers, the checks.

The graph records every run: the input ``m`` is appended to ``log``, then node ``a``
appends ``"a:m"`` and node ``b`` appends ``"b:m"``. A run that completed therefore
leaves ``[m, "a:m", "b:m"]`` in a row; one stopped at a step boundary leaves ``[m]`` or
``[m, "a:m"]``; a rejected or rolled-back run leaves nothing.
"""

from __future__ import annotations

import operator
import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise
from typing import Annotated, Any

from typing_extensions import TypedDict

from stategraph.graph import END, START, StateGraph

PG_URL = os.environ.get("STATEGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


class State(TypedDict):
    inbox: str
    log: Annotated[list[str], operator.add]


def build(saver: Any, delay: float = 0.02, *, use_async: bool = False) -> Any:
    """``START -> a -> b -> END``; each node sleeps ``delay`` seconds."""

    def make(name: str) -> Any:
        if use_async:
            import asyncio

            async def anode(state: State) -> dict[str, Any]:
                await asyncio.sleep(delay)
                return {"log": [f"{name}:{state['inbox']}"]}

            return anode

        def node(state: State) -> dict[str, Any]:
            time.sleep(delay)
            return {"log": [f"{name}:{state['inbox']}"]}

        return node

    builder = StateGraph(State)
    builder.add_node("a", make("a"))
    builder.add_node("b", make("b"))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", END)
    return builder.compile(checkpointer=saver)


def run_input(msg: str) -> dict[str, Any]:
    """The input of the run whose message is ``msg``."""
    return {"inbox": msg, "log": [msg]}


class PgSchema:
    """A fresh PostgreSQL schema, first on the ``search_path`` of :attr:`conninfo`."""

    def __init__(self) -> None:
        import psycopg

        self.name = f"sg_lease_{uuid.uuid4().hex}"
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            admin.execute(f"CREATE SCHEMA {self.name}")
        self.conninfo = psycopg.conninfo.make_conninfo(
            PG_URL, options=f"-c search_path={self.name}"
        )

    def drop(self) -> None:
        """Drop the schema and everything in it."""
        import psycopg

        with psycopg.connect(PG_URL, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA IF EXISTS {self.name} CASCADE")


@contextmanager
def open_sync_saver(kind: str, target: str) -> Iterator[Any]:
    """A sync saver of ``kind`` (``memory``/``sqlite``/``postgres``) on ``target``."""
    if kind == "memory":
        from stategraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
    elif kind == "sqlite":
        from stategraph.checkpoint.sqlite import SqliteSaver

        with SqliteSaver.from_conn_string(target) as saver:
            yield saver
    else:
        from psycopg_pool import ConnectionPool

        from stategraph.checkpoint.postgres import PostgresSaver

        pool = ConnectionPool(
            target, min_size=1, max_size=8, kwargs={"autocommit": True}, open=True
        )
        try:
            yield PostgresSaver(pool)
        finally:
            pool.close()


def segments(log: list[str]) -> dict[str, list[str]]:
    """``log`` cut into runs: message -> what that run left (``[m, "a:m", ...]``)."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for item in log:
        if item.startswith(("a:", "b:")):
            assert current is not None, f"a node's entry before any input: {log}"
            assert item[2:] == current, f"entries of two runs interleave: {log}"
            out[current].append(item)
        else:
            assert item not in out, f"input {item!r} appears twice (a fork?): {log}"
            current = item
            out[item] = [item]
    return out


def check_outcomes(
    strategy: str, outcomes: dict[str, tuple[str, Any]], final_log: list[str]
) -> dict[str, int]:
    """Assert the invariants of a contended thread; returns the count per status.

    ``outcomes[msg] = (status, value)``: ``("ok", result log)``, ``("busy", None)``,
    ``("preempted", None)`` or ``("lost", None)`` (``LeaseLostError``: only when the
    machine stalls a run for longer than its lease).
    """
    runs = segments(final_log)
    counts: dict[str, int] = {}
    for msg, (status, value) in outcomes.items():
        counts[status] = counts.get(status, 0) + 1
        if status == "ok":
            assert runs.get(msg) == [msg, f"a:{msg}", f"b:{msg}"], (msg, final_log)
            # the result is exactly the thread as this run left it: a prefix of the end
            assert value == final_log[: len(value)], (msg, value, final_log)
            assert value[-3:] == [msg, f"a:{msg}", f"b:{msg}"]
        elif status == "busy":
            assert msg not in runs, f"a rejected run left {runs[msg]}"
        elif status == "lost":
            # the machine stalled the run past its lease: it failed with LeaseLostError,
            # and what it saved before is a clean prefix of its run
            left = runs.get(msg)
            assert left in (None, [msg], [msg, f"a:{msg}"], [msg, f"a:{msg}", f"b:{msg}"])
        elif status == "preempted":
            if strategy == "rollback":
                assert msg not in runs, f"a rolled-back run left {runs[msg]}"
            else:
                # its input was saved; it stopped at a step boundary
                left = runs.get(msg)
                assert left in ([msg], [msg, f"a:{msg}"], [msg, f"a:{msg}", f"b:{msg}"]), (
                    msg,
                    left,
                    final_log,
                    outcomes,
                )
        else:
            raise AssertionError(f"{msg}: unexpected outcome {status}: {value}")
    # nothing in the thread comes from anywhere else
    assert set(runs) <= set(outcomes), set(runs) - set(outcomes)
    return counts


def check_linear_history(saver: Any, thread_id: str) -> int:
    """Every checkpoint of the thread's root namespace descends from the previous one
    (no fork); returns how many there are."""
    items = list(saver.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}))
    ids = [t.config["configurable"]["checkpoint_id"] for t in items]
    for newer, older in pairwise(items):
        parent = newer.parent_config
        assert (
            parent is not None
            and parent["configurable"]["checkpoint_id"]
            == (older.config["configurable"]["checkpoint_id"])
        ), f"fork: {ids}"
    if items:
        assert items[-1].parent_config is None
    return len(items)
