"""Graphs and node functions of the executor tests (importable by Ray and Dask workers)."""

from __future__ import annotations

import asyncio
import operator
import os
import signal
import time
from pathlib import Path
from typing import Annotated, Any

from typing_extensions import TypedDict

from stategraph.config import get_config, get_store, get_stream_writer
from stategraph.graph import END, START, StateGraph
from stategraph.runtime import get_runtime
from stategraph.types import Command, Send, interrupt


class FileLog:
    """Counts calls across processes: each call appends a line to a file."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def add(self, line: str) -> None:
        with open(self.path, "a") as f:
            f.write(line + "\n")

    def lines(self) -> list[str]:
        if not os.path.exists(self.path):
            return []
        with open(self.path) as f:
            return f.read().splitlines()


class Fan(TypedDict):
    items: list[int]
    out: Annotated[list[Any], operator.add]


def fan_out(state: Fan) -> list[Send]:
    return [Send("square", {"items": [i], "out": []}) for i in state["items"]]


def square(state: Fan) -> dict[str, Any]:
    n = state["items"][0]
    info = get_runtime().execution_info
    assert info is not None
    return {"out": [(n, n * n, info.task_id, get_config()["configurable"]["thread_id"])]}


def fan_graph(**compile_kwargs: Any) -> Any:
    g = StateGraph(Fan)
    g.add_node("square", square)
    g.add_conditional_edges(START, fan_out, ["square"])
    return g.compile(**compile_kwargs)


class Talk(TypedDict):
    q: str
    log: Annotated[list[str], operator.add]


def chatty(state: Talk) -> dict[str, Any]:
    write = get_stream_writer()
    for i in range(5):
        write({"who": state["q"], "i": i})
    return {"log": [state["q"]]}


def talk_graph() -> Any:
    g = StateGraph(Talk)
    g.add_node("chatty", chatty)
    g.add_conditional_edges(
        START, lambda s: [Send("chatty", {"q": q, "log": []}) for q in ("a", "b", "c")]
    )
    return g.compile()


def ask(state: Talk) -> dict[str, Any]:
    first = interrupt(f"name for {state['q']}?")
    second = interrupt("colour?")
    return {"log": [f"{state['q']}:{first}:{second}"]}


def ask_graph(checkpointer: Any) -> Any:
    g = StateGraph(Talk)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    return g.compile(checkpointer=checkpointer)


def route(state: Talk) -> Command[Any]:
    return Command(update={"log": ["routed"]}, goto="after" if state["q"] == "go" else END)


def after(state: Talk) -> dict[str, Any]:
    return {"log": ["after"]}


def command_graph() -> Any:
    g = StateGraph(Talk)
    g.add_node("route", route, destinations=("after", END))
    g.add_node("after", after)
    g.add_edge(START, "route")
    return g.compile()


class Flaky(TypedDict):
    n: int
    log: Annotated[list[str], operator.add]


def flaky_first_attempt(state: Flaky) -> dict[str, Any]:
    info = get_runtime().execution_info
    assert info is not None
    if info.node_attempt < 3:
        raise ConnectionError(f"attempt {info.node_attempt} failed")
    return {"n": state["n"] + 1, "log": [f"ok on attempt {info.node_attempt}"]}


def make_dies_once(log: FileLog) -> Any:
    def dies_once(state: Flaky) -> dict[str, Any]:
        log.add("dies_once")
        info = get_runtime().execution_info
        assert info is not None
        if info.node_attempt == 1:
            # let the sibling finish first (async runs cancel siblings of a failed task)
            deadline = time.monotonic() + 60
            while "steady" not in log.lines() and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(1.5)
            os.kill(os.getpid(), signal.SIGKILL)
        return {"log": [f"survived on attempt {info.node_attempt}"]}

    return dies_once


def make_steady(log: FileLog) -> Any:
    def steady(state: Flaky) -> dict[str, Any]:
        log.add("steady")
        return {"log": ["steady"]}

    return steady


async def sleepy(state: Flaky) -> dict[str, Any]:
    # far past its 0.5 s limit, short enough not to hold a worker for long if the
    # engine lets a cancelled attempt run on
    await asyncio.sleep(4)
    return {"n": -1}


def store_writer(state: Flaky) -> dict[str, Any]:
    store = get_store()
    assert store is not None
    store.put(("runs",), f"n{state['n']}", {"pid": os.getpid(), "n": state["n"]})
    item = store.get(("runs",), f"n{state['n']}")
    assert item is not None
    return {"log": [f"stored {item.value['n']}"]}


def make_counted(log: FileLog) -> Any:
    def counted(state: Flaky) -> dict[str, Any]:
        log.add(f"counted {state['n']}")
        return {"log": [f"computed {state['n']}"]}

    return counted


def after_kill(state: Flaky) -> dict[str, Any]:
    return {"log": ["resumed"]}


def make_call_for_tests(func: Any) -> Any:
    """The compiled call adapter of ``func`` (what a payload carries)."""
    from stategraph.pregel._call import make_call

    return make_call(func, getattr(func, "__name__", "node"))


async def beating(state: Flaky) -> dict[str, Any]:
    """Runs ~4.5 s, past its 3 s idle limit, but calls heartbeat() every 0.3 s."""
    runtime = get_runtime()
    for _ in range(15):
        await asyncio.sleep(0.3)
        runtime.heartbeat()
    return {"log": ["beat"]}


async def silent(state: Flaky) -> dict[str, Any]:
    await asyncio.sleep(8)
    return {"log": ["silent"]}
