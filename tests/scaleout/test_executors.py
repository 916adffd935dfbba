"""Graphs whose tasks run on an executor: threads, a real local Ray and a real Dask cluster.

Each test marked ``executors`` runs on the three and must give the results a run on
the caller's threads gives: same state, same checkpoints, the task ids the loop
computed, interrupts and resume values, stream chunks in order per task, retries.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from stategraph.cache.memory import InMemoryCache
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.errors import NodeTimeoutError
from stategraph.executors import (
    StoreUnreachableError,
    TaskPayload,
    ThreadExecutor,
    WorkerLostError,
)
from stategraph.graph import START, StateGraph
from stategraph.runtime import DEFAULT_RUNTIME
from stategraph.store.memory import InMemoryStore
from stategraph.store.sqlite import SqliteStore
from stategraph.types import CachePolicy, Command, RetryPolicy, TimeoutPolicy

from . import _nodes as n

pytestmark = pytest.mark.timeout(300)


def invoke(graph: Any, inp: Any, config: Any, mode: str, **kw: Any) -> Any:
    if mode == "async":
        return asyncio.run(graph.ainvoke(inp, config, **kw))
    return graph.invoke(inp, config, **kw)


def stream(graph: Any, inp: Any, config: Any, mode: str, **kw: Any) -> list[Any]:
    if mode == "async":

        async def collect() -> list[Any]:
            return [c async for c in graph.astream(inp, config, **kw)]

        return asyncio.run(collect())
    return list(graph.stream(inp, config, **kw))


def cfg(executor: Any, thread: str = "t", **extra: Any) -> dict[str, Any]:
    config: dict[str, Any] = {"configurable": {"thread_id": thread}, **extra}
    if executor is not None:
        config["executor"] = executor
    return config


MODES = pytest.mark.parametrize("mode", ["sync", "async"])


# ---------------------------------------------------------------- fan-out, checkpoints
@pytest.mark.executors
@MODES
def test_send_fan_out_gives_the_threads_result_and_the_loops_task_ids(
    executor: Any, mode: str
) -> None:
    saver = InMemorySaver()
    graph = n.fan_graph(checkpointer=saver)
    chunks = stream(
        graph,
        {"items": [1, 2, 3, 4], "out": []},
        cfg(executor),
        mode,
        stream_mode=["tasks", "values"],
    )
    final = [c for m, c in chunks if m == "values"][-1]
    assert sorted((a, b) for a, b, _, _ in final["out"]) == [(1, 1), (2, 4), (3, 9), (4, 16)]
    assert {t for *_, t in final["out"]} == {"t"}
    started = {
        c["id"] for m, c in chunks if m == "tasks" and "input" in c and c["name"] == "square"
    }
    assert {tid for _, _, tid, _ in final["out"]} == started
    # the same checkpoints as a run on threads: steps, sources, values (sorted per step)
    ref_saver = InMemorySaver()
    ref = n.fan_graph(checkpointer=ref_saver)
    invoke(ref, {"items": [1, 2, 3, 4], "out": []}, cfg(None), mode)

    def history(g: Any) -> list[Any]:
        return [
            (
                s.metadata["step"],
                s.metadata["source"],
                s.next,
                sorted((a, b) for a, b, *_ in s.values.get("out", [])),
            )
            for s in g.get_state_history({"configurable": {"thread_id": "t"}})
        ]

    assert history(graph) == history(ref)


@pytest.mark.executors
@MODES
def test_compile_executor_and_config_executor(executor: Any, mode: str) -> None:
    graph = n.fan_graph(executor=executor) if executor is not None else n.fan_graph()
    out = invoke(graph, {"items": [5, 6], "out": []}, {"configurable": {"thread_id": "c"}}, mode)
    assert sorted(x[:2] for x in out["out"]) == [(5, 25), (6, 36)]
    # a run's config["executor"] wins over the graph's: here threads
    local = invoke(
        graph,
        {"items": [7], "out": []},
        {"configurable": {"thread_id": "c"}, "executor": ThreadExecutor()},
        mode,
    )
    assert [x[:2] for x in local["out"]] == [(7, 49)]


# ---------------------------------------------------------------- streaming
@pytest.mark.executors
@MODES
def test_custom_chunks_reach_the_stream_in_order_before_the_tasks_update(
    executor: Any, mode: str
) -> None:
    chunks = stream(
        n.talk_graph(), {"q": "", "log": []}, cfg(executor), mode, stream_mode=["custom", "updates"]
    )
    for who in "abc":
        mine = [c for m, c in chunks if m == "custom" and c["who"] == who]
        assert [c["i"] for c in mine] == [0, 1, 2, 3, 4]
        last_custom = max(i for i, (m, c) in enumerate(chunks) if m == "custom" and c["who"] == who)
        update = next(
            i
            for i, (m, c) in enumerate(chunks)
            if m == "updates" and c.get("chatty", {}).get("log") == [who]
        )
        assert last_custom < update
    assert len(chunks) == 18


# ---------------------------------------------------------------- interrupts, Command
@pytest.mark.executors
@MODES
def test_interrupt_and_resume_values_inside_a_remote_task(executor: Any, mode: str) -> None:
    saver = InMemorySaver()
    graph = n.ask_graph(saver)
    config = cfg(executor)
    first = invoke(graph, {"q": "x", "log": []}, config, mode)
    assert [i.value for i in first["__interrupt__"]] == ["name for x?"]
    second = invoke(graph, Command(resume="Ada"), config, mode)
    assert [i.value for i in second["__interrupt__"]] == ["colour?"]
    iid = second["__interrupt__"][0].id
    done = invoke(graph, Command(resume={iid: "green"}), config, mode)
    assert done == {"q": "x", "log": ["x:Ada:green"]}
    assert graph.get_state(config).next == ()


@pytest.mark.executors
@MODES
def test_command_from_a_remote_node(executor: Any, mode: str) -> None:
    graph = n.command_graph()
    assert invoke(graph, {"q": "go", "log": []}, cfg(executor), mode)["log"] == ["routed", "after"]
    assert invoke(graph, {"q": "stop", "log": []}, cfg(executor), mode)["log"] == ["routed"]


# ---------------------------------------------------------------- retries, worker loss
@pytest.mark.executors
@MODES
def test_retry_policy_retries_a_remote_node(executor: Any, mode: str) -> None:
    g = StateGraph(n.Flaky)
    g.add_node(
        "flaky",
        n.flaky_first_attempt,
        retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False),
    )
    g.add_edge(START, "flaky")
    out = invoke(g.compile(), {"n": 1, "log": []}, cfg(executor), mode)
    assert out == {"n": 2, "log": ["ok on attempt 3"]}


def _full_cluster(engine: str, request: pytest.FixtureRequest) -> Any:
    """The executor, once its cluster has both workers (a killed one is replaced)."""
    executor = request.getfixturevalue(f"{engine}_executor")
    if engine == "dask":
        _two_dask_workers(executor.client)
    return executor


def _two_dask_workers(client: Any) -> None:
    """Wait until both workers of the session's cluster are registered.

    A killed worker's nanny starts a new process; on a loaded machine that can take long,
    and a nanny whose restart failed never brings one. After a minute the worker that
    is not registered is replaced: ``scale(1)`` drops the name the scheduler does not
    know (dask retires unregistered workers first), ``scale(2)`` starts a fresh nanny.
    """
    from distributed.exceptions import WorkerStartTimeoutError

    try:
        client.wait_for_workers(2, timeout=60)
        return
    except WorkerStartTimeoutError:
        pass
    cluster = client.cluster
    cluster.scale(1)
    cluster.scale(2)
    client.wait_for_workers(2, timeout=180)


def _killer_graph(tmp_path: Path, policy: Any, saver: Any) -> tuple[Any, n.FileLog]:
    log = n.FileLog(tmp_path / "calls.log")
    g = StateGraph(n.Flaky)
    g.add_node("dies_once", n.make_dies_once(log), retry_policy=policy)
    g.add_node("steady", n.make_steady(log))
    g.add_edge(START, "dies_once")
    g.add_edge(START, "steady")
    return g.compile(checkpointer=saver), log


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["ray", "dask"])
@MODES
def test_a_killed_worker_is_retried_per_policy(
    engine: str, mode: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    executor = _full_cluster(engine, request)
    policy = RetryPolicy(retry_on=WorkerLostError, initial_interval=0.01, jitter=False)
    graph, log = _killer_graph(tmp_path, policy, InMemorySaver())
    out = invoke(graph, {"n": 0, "log": []}, cfg(executor), mode)
    assert sorted(out["log"]) == ["steady", "survived on attempt 2"]
    assert sorted(log.lines()) == ["dies_once", "dies_once", "steady"]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["ray", "dask"])
@MODES
def test_a_killed_worker_without_retry_fails_naming_node_and_worker_and_keeps_progress(
    engine: str, mode: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    executor = _full_cluster(engine, request)
    with SqliteSaver.from_conn_string(str(tmp_path / "cp.db")) as saver:
        graph, log = _killer_graph(tmp_path, None, saver)
        config = cfg(executor)
        with pytest.raises(WorkerLostError) as info:
            invoke(graph, {"n": 0, "log": []}, config, mode)
        assert "node 'dies_once'" in str(info.value)
        assert info.value.node == "dies_once"
        # the worker is named: which process, on which machine
        worker = info.value.worker
        assert worker.startswith(f"{engine.capitalize()} worker "), worker
        assert re.search(r"pid \d+", worker), worker
        if engine == "ray":
            assert re.search(r"on node [0-9a-f]{12} ", worker), worker
        else:
            assert re.search(r"tcp://[\d.]+:\d+", worker), worker
        assert worker in str(info.value)
        # the sibling's writes were saved: resuming runs only the failed task (which
        # now sees attempt 1 again, so use threads for it: no process to kill there)
        state = graph.get_state(config)
        assert state.next == ("dies_once",)
        assert sorted(log.lines()) == ["dies_once", "steady"]
    with SqliteSaver.from_conn_string(str(tmp_path / "cp.db")) as saver:
        g = StateGraph(n.Flaky)
        g.add_node("dies_once", n.after_kill)
        g.add_node("steady", n.make_steady(log))
        g.add_edge(START, "dies_once")
        g.add_edge(START, "steady")
        out = invoke(g.compile(checkpointer=saver), None, cfg(executor), mode)
    assert sorted(out["log"]) == ["resumed", "steady"]
    assert sorted(log.lines()) == ["dies_once", "steady"]


# ---------------------------------------------------------------- timeouts, cache, store
@pytest.mark.slow
@pytest.mark.executors
def test_idle_timeout_sees_the_heartbeats_of_a_remote_node(executor: Any) -> None:
    g = StateGraph(n.Flaky)
    # the idle clock starts when the task is handed over: leave room for a loaded cluster
    g.add_node("beating", n.beating, timeout=TimeoutPolicy(idle_timeout=3.0))
    g.add_node("silent", n.silent, timeout=TimeoutPolicy(idle_timeout=3.0))
    g.add_conditional_edges(START, lambda s: "beating" if s["n"] else "silent")
    graph = g.compile()
    assert invoke(graph, {"n": 1, "log": []}, cfg(executor), "async")["log"] == ["beat"]
    with pytest.raises(NodeTimeoutError) as info:
        invoke(graph, {"n": 0, "log": []}, cfg(executor), "async")
    assert "silent" in str(info.value) and "idle" in str(info.value)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["ray", "dask"])
def test_run_timeout_of_a_remote_node(engine: str, request: pytest.FixtureRequest) -> None:
    # timeouts apply to async nodes, which run under ainvoke/astream
    executor = request.getfixturevalue(f"{engine}_executor")
    mode = "async"
    g = StateGraph(n.Flaky)
    g.add_node("sleepy", n.sleepy, timeout=TimeoutPolicy(run_timeout=0.5))
    g.add_edge(START, "sleepy")
    with pytest.raises(NodeTimeoutError) as info:
        invoke(g.compile(), {"n": 0, "log": []}, cfg(executor), mode)
    assert "sleepy" in str(info.value)


@pytest.mark.executors
@MODES
def test_node_cache_with_a_remote_executor(executor: Any, mode: str, tmp_path: Path) -> None:
    log = n.FileLog(tmp_path / "cache.log")
    g = StateGraph(n.Flaky)
    g.add_node("counted", n.make_counted(log), cache_policy=CachePolicy())
    g.add_edge(START, "counted")
    graph = g.compile(cache=InMemoryCache())
    assert invoke(graph, {"n": 3, "log": []}, cfg(executor), mode)["log"] == ["computed 3"]
    assert invoke(graph, {"n": 3, "log": []}, cfg(executor), mode)["log"] == ["computed 3"]
    assert invoke(graph, {"n": 4, "log": []}, cfg(executor), mode)["log"] == ["computed 4"]
    assert log.lines() == ["counted 3", "counted 4"]


@pytest.mark.executors
@MODES
def test_a_sqlite_store_is_reopened_on_the_worker(executor: Any, mode: str, tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = SqliteStore(str(path))
    try:
        g = StateGraph(n.Flaky)
        g.add_node("store_writer", n.store_writer)
        g.add_edge(START, "store_writer")
        out = invoke(g.compile(store=store), {"n": 8, "log": []}, cfg(executor), mode)
        assert out["log"] == ["stored 8"]
        item = store.get(("runs",), "n8")
        assert item is not None and item.value["n"] == 8
    finally:
        store.close()


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["ray", "dask"])
def test_an_in_memory_store_used_remotely_gets_a_clear_error(
    engine: str, request: pytest.FixtureRequest
) -> None:
    executor = request.getfixturevalue(f"{engine}_executor")
    g = StateGraph(n.Flaky)
    g.add_node("store_writer", n.store_writer)
    g.add_edge(START, "store_writer")
    with pytest.raises(StoreUnreachableError) as info:
        g.compile(store=InMemoryStore()).invoke({"n": 1, "log": []}, cfg(executor))
    text = str(info.value)
    assert "InMemoryStore" in text and "memory of the process" in text
    assert f"{engine.capitalize()} worker" in text


# ---------------------------------------------------------------- bad input
def test_an_object_that_is_not_an_executor_is_rejected_before_the_run() -> None:
    saver = InMemorySaver()
    graph = n.fan_graph(checkpointer=saver)
    with pytest.raises(TypeError, match=r'config\["executor"\] must be a TaskExecutor'):
        graph.invoke({"items": [1], "out": []}, cfg("ray"))
    assert list(saver.list(None)) == []
    with pytest.raises(TypeError, match=r"compile\(executor=\.\.\.\) must be a TaskExecutor"):
        n.fan_graph(executor=object())
    with pytest.raises(ValueError, match=r"max_workers"):
        ThreadExecutor(max_workers=0)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["ray", "dask"])
def test_an_unpicklable_input_is_named(engine: str, request: pytest.FixtureRequest) -> None:
    executor = request.getfixturevalue(f"{engine}_executor")
    g = StateGraph(n.Flaky)
    g.add_node("counted", n.make_counted(n.FileLog(Path("/nonexistent/x"))))
    g.add_edge(START, "counted")
    conn = sqlite3.connect(":memory:")
    with pytest.raises(
        TypeError, match=r"Node 'counted' cannot be sent to the .* cluster: its input"
    ):
        g.compile().invoke({"n": conn, "log": []}, cfg(executor))  # type: ignore[dict-item]


def test_thread_executor_max_workers_bounds_a_step() -> None:
    graph = n.fan_graph()
    out = graph.invoke({"items": list(range(6)), "out": []}, cfg(ThreadExecutor(max_workers=2)))
    assert sorted(x[1] for x in out["out"]) == [0, 1, 4, 9, 16, 25]


def test_thread_executor_runs_a_payload_as_a_worker_does() -> None:
    chunks: list[Any] = []
    payload = TaskPayload(
        task_id="t1",
        node="chatty",
        call=n.make_call_for_tests(n.chatty),
        input={"q": "z", "log": []},
        config={"configurable": {"thread_id": "p"}},
        runtime=DEFAULT_RUNTIME,
        scratchpad=None,
        checkpoint_ns="chatty:t1",
        streams=True,
    )
    with ThreadExecutor() as executor:
        result = executor.gather([executor.submit(payload, chunks.append)])[0]
    assert result.error is None and result.output == {"log": ["z"]}
    assert result.emitted == 5 and [c["i"] for c in chunks] == [0, 1, 2, 3, 4]
