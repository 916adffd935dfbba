"""A graph run inside a ``@task`` call nests under the call, as LangGraph 1.2 nests it
(checked black-box): with ``subgraphs=True`` its chunks carry the namespace
``("<entrypoint>:<id>", "<task>:<call task id>")``, the k-th graph of the call appends
``k``, a retried call goes on counting, and in ``astream_events`` the graph's run is a
child of the call's run, tagged ``seq:step:1``."""

from __future__ import annotations

import asyncio
from typing import Any

from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.func import entrypoint, task
from stategraph.graph import START, StateGraph
from stategraph.types import Command, RetryPolicy, interrupt


class _State(TypedDict):
    x: str


def _shout(state: _State) -> dict[str, str]:
    return {"x": state["x"] + "!"}


def _ask(state: _State) -> dict[str, str]:
    return {"x": state["x"] + interrupt("more?")}


def _graph(node: Any, name: str = "inner") -> Any:
    builder = StateGraph(_State)
    builder.add_node(node.__name__.strip("_"), node)
    builder.add_edge(START, node.__name__.strip("_"))
    return builder.compile(name=name)


def _starts(chunks: list[tuple[Any, str, Any]]) -> dict[str, str]:
    """Task name -> id, from the ``tasks`` start payloads of the root namespace."""
    return {p["name"]: p["id"] for ns, mode, p in chunks if mode == "tasks" and "input" in p}


def _update_namespaces(chunks: list[tuple[Any, str, Any]]) -> list[tuple[tuple[str, ...], Any]]:
    return [(ns, p) for ns, mode, p in chunks if mode == "updates"]


def test_graphs_in_a_sync_task_get_the_calls_namespace() -> None:
    inner = _graph(_shout)

    @task
    def run_graph(text: str) -> str:
        first = inner.invoke({"x": text})["x"]
        return first + inner.invoke({"x": text})["x"]

    @entrypoint()
    def wf(text: str) -> str:
        return run_graph(text).result() + inner.invoke({"x": "direct"})["x"]

    chunks = list(wf.stream("hi", subgraphs=True, stream_mode=["updates", "tasks"]))
    ids = _starts([c for c in chunks if c[0] == ()])
    wf_ns = f"wf:{ids['wf']}"
    call_ns = f"run_graph:{ids['run_graph']}"
    assert _update_namespaces(chunks) == [
        ((wf_ns, call_ns), {"shout": {"x": "hi!"}}),
        ((wf_ns, call_ns, "1"), {"shout": {"x": "hi!"}}),
        ((), {"run_graph": "hi!hi!"}),
        # the entrypoint's own graph does not share the call's namespace
        ((wf_ns,), {"shout": {"x": "direct!"}}),
        ((), {"wf": "hi!hi!direct!"}),
    ]


def test_graph_in_an_async_task_gets_the_calls_namespace() -> None:
    inner = _graph(_shout)

    @task
    async def run_graph(text: str) -> str:
        return (await inner.ainvoke({"x": text}))["x"]

    @entrypoint()
    async def wf(text: str) -> str:
        return await run_graph(text)

    async def collect() -> list[Any]:
        return [c async for c in wf.astream("a", subgraphs=True, stream_mode=["updates", "tasks"])]

    chunks = asyncio.run(collect())
    ids = _starts([c for c in chunks if c[0] == ()])
    assert _update_namespaces(chunks) == [
        ((f"wf:{ids['wf']}", f"run_graph:{ids['run_graph']}"), {"shout": {"x": "a!"}}),
        ((), {"run_graph": "a!"}),
        ((), {"wf": "a!"}),
    ]


def test_retried_call_numbers_its_graphs_on_and_resume_finds_the_graph() -> None:
    inner = _graph(_shout)
    asking = _graph(_ask)
    failures = [ValueError("flaky")]

    @task(retry_policy=RetryPolicy(max_attempts=2, initial_interval=0.01, retry_on=ValueError))
    def flaky(text: str) -> str:
        out = inner.invoke({"x": text})["x"]
        if failures:
            raise failures.pop()
        return out

    @task
    def ask_user(text: str) -> str:
        return asking.invoke({"x": text})["x"]

    @entrypoint(checkpointer=InMemorySaver())
    def wf(text: str) -> str:
        return flaky(text).result() + ask_user(text).result()

    config: Any = {"configurable": {"thread_id": "t"}}
    chunks = list(wf.stream("hi", config, subgraphs=True, stream_mode=["updates", "tasks"]))
    ids = _starts([c for c in chunks if c[0] == ()])
    wf_ns, flaky_ns = f"wf:{ids['wf']}", f"flaky:{ids['flaky']}"
    ask_ns = f"ask_user:{ids['ask_user']}"
    updates = _update_namespaces(chunks)
    # the retry's graph is the call's second one (LangGraph numbers across attempts)
    assert [ns for ns, _ in updates[:2]] == [(wf_ns, flaky_ns), (wf_ns, flaky_ns, "1")]
    assert updates[3][0] == (wf_ns, ask_ns)
    assert "__interrupt__" in updates[3][1]
    # the graph's state is saved under the call's namespace, where the resume finds it
    saver = wf.checkpointer
    assert any(
        t.config["configurable"]["checkpoint_ns"] == f"{wf_ns}|{ask_ns}" for t in saver.list(None)
    )
    resumed = list(wf.stream(Command(resume="?"), config, subgraphs=True, stream_mode="updates"))
    assert resumed == [
        ((wf_ns, ask_ns), {"ask": {"x": "hi?"}}),
        ((), {"ask_user": "hi?"}),
        ((), {"wf": "hi!hi?"}),
    ]


def test_graph_in_task_is_a_child_run_of_the_call_in_events() -> None:
    inner = _graph(_shout)

    @task
    def run_graph(text: str) -> str:
        return inner.invoke({"x": text})["x"]

    @entrypoint()
    def wf(text: str) -> str:
        return run_graph(text).result()

    async def collect() -> list[dict[str, Any]]:
        return [e async for e in wf.astream_events("hi", version="v2")]

    events = asyncio.run(collect())
    starts = {e["name"]: e for e in events if e["event"] == "on_chain_start"}
    call_run = starts["run_graph"]["run_id"]
    graph = starts["inner"]
    assert graph["parent_ids"][-1] == call_run
    assert graph["tags"] == ["seq:step:1"]
    ns = starts["run_graph"]["metadata"]["langgraph_checkpoint_ns"]
    assert graph["metadata"]["checkpoint_ns"] == ns
    assert starts["shout"]["parent_ids"][-1] == graph["run_id"]
    # the graph runs with invoke: as in LangGraph, its node's output is not streamed
    streamed = [e["name"] for e in events if e["event"] == "on_chain_stream"]
    assert "shout" not in streamed
    assert "run_graph" in streamed


def test_graph_invoked_by_a_node_is_its_first_step_in_events() -> None:
    inner = _graph(_shout)

    def outer(state: _State) -> dict[str, str]:
        return inner.invoke(state)

    async def outer_async(state: _State) -> dict[str, str]:
        return await inner.ainvoke(state)

    for node in (outer, outer_async):
        builder = StateGraph(_State)
        builder.add_node("outer", node)
        builder.add_edge(START, "outer")
        app = builder.compile()

        async def collect(app: Any = app) -> list[dict[str, Any]]:
            return [e async for e in app.astream_events({"x": "a"}, version="v2")]

        events = asyncio.run(collect())
        graph = next(e for e in events if e["event"] == "on_chain_start" and e["name"] == "inner")
        assert graph["tags"] == ["seq:step:1"]
        streamed = [e["name"] for e in events if e["event"] == "on_chain_stream"]
        # only an async (ainvoke) run streams its nodes' outputs, as in LangGraph
        assert ("shout" in streamed) is (node is outer_async)
