"""The sync shell runs the first task of a parallel step on the caller's thread (the
others on the step pool) only when nothing the caller owes depends on it being free."""

from __future__ import annotations

import operator
import threading
from typing import Annotated, Any, TypedDict

import pytest

from stategraph.config import get_stream_writer
from stategraph.graph import START, StateGraph


class _State(TypedDict):
    seen: Annotated[list[str], operator.add]


def _three(threads: dict[str, threading.Thread], *, fail_first: bool = False) -> Any:
    """START fans out to a, b, c; each records the thread it ran on."""

    # b and c wait for each other: they must be running at the same time, on two pool
    # threads (a timing-free check, also on a loaded machine)
    both = threading.Barrier(2, timeout=30)

    def node(name: str) -> Any:
        def run(state: _State) -> dict[str, Any]:
            threads[name] = threading.current_thread()
            if name == "a" and fail_first:
                raise ValueError("a failed")
            if name != "a":
                both.wait()
            return {"seen": [name]}

        return run

    builder = StateGraph(_State)
    for name in ("a", "b", "c"):
        builder.add_node(name, node(name))
        builder.add_edge(START, name)
    return builder.compile()


def _on_caller(threads: dict[str, threading.Thread]) -> list[str]:
    return sorted(n for n, t in threads.items() if t is threading.main_thread())


def test_the_caller_runs_the_first_task_and_the_pool_the_others() -> None:
    threads: dict[str, threading.Thread] = {}
    out = _three(threads).invoke({"seen": []})
    assert sorted(out["seen"]) == ["a", "b", "c"]
    assert _on_caller(threads) == ["a"]
    assert threads["b"] is not threads["c"]


def test_with_values_streamed_the_caller_still_runs_one() -> None:
    threads: dict[str, threading.Thread] = {}
    chunks = list(_three(threads).stream({"seen": []}, stream_mode="values"))
    assert chunks[0] == {"seen": []}
    assert sorted(chunks[1]["seen"]) == ["a", "b", "c"]
    assert _on_caller(threads) == ["a"]


def test_with_updates_streamed_every_task_runs_on_the_pool() -> None:
    # the update of a task that ends first reaches the consumer at once: the caller
    # must not be inside a task then
    threads: dict[str, threading.Thread] = {}
    chunks = list(_three(threads).stream({"seen": []}, stream_mode="updates"))
    assert sorted(next(iter(c)) for c in chunks) == ["a", "b", "c"]
    assert _on_caller(threads) == []


def test_a_failure_of_the_callers_task_waits_for_its_running_siblings() -> None:
    threads: dict[str, threading.Thread] = {}
    with pytest.raises(ValueError, match="a failed"):
        _three(threads, fail_first=True).invoke({"seen": []})
    # b and c were already running on the pool: they finished before the run stopped
    assert sorted(threads) == ["a", "b", "c"]
    assert _on_caller(threads) == ["a"]


def test_with_a_step_timeout_every_task_runs_on_the_pool() -> None:
    threads: dict[str, threading.Thread] = {}
    graph = _three(threads)
    graph.step_timeout = 5.0
    graph.invoke({"seen": []})
    assert _on_caller(threads) == []


def test_when_tasks_wait_for_a_slot_every_task_runs_on_the_pool() -> None:
    threads: dict[str, threading.Thread] = {}
    _three(threads).invoke({"seen": []}, {"max_concurrency": 2})
    assert sorted(threads) == ["a", "b", "c"]
    assert _on_caller(threads) == []


def test_with_live_chunks_every_task_runs_on_the_pool() -> None:
    threads: dict[str, threading.Thread] = {}

    def talk(state: _State) -> dict[str, Any]:
        threads["talk"] = threading.current_thread()
        get_stream_writer()("hello")
        return {"seen": ["talk"]}

    def quiet(state: _State) -> dict[str, Any]:
        threads["quiet"] = threading.current_thread()
        return {"seen": ["quiet"]}

    builder = StateGraph(_State)
    builder.add_node("talk", talk)
    builder.add_node("quiet", quiet)
    builder.add_edge(START, "talk")
    builder.add_edge(START, "quiet")
    chunks = list(builder.compile().stream({"seen": []}, stream_mode="custom"))
    assert chunks == ["hello"]
    assert _on_caller(threads) == []
