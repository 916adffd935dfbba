"""LangGraph's own ``RemoteGraph`` (from PyPI) driving a graph served by stategraph."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

pytest.importorskip("langgraph.pregel.remote")
from langgraph.pregel.remote import RemoteGraph
from langgraph.types import Command

pytestmark = pytest.mark.server

HI = {"messages": [{"role": "user", "content": "hi"}]}


def test_invoke_stream_state_and_resume(server: Any) -> None:
    remote = RemoteGraph("agent", url=server.url)
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    chunks = list(remote.stream(HI, config, stream_mode="updates"))
    assert list(chunks[0]) == ["agent"] and "__interrupt__" in chunks[-1]
    state = remote.get_state(config)
    assert state.next == ("approve",)
    assert state.values["count"] == 1
    assert state.tasks[0].interrupts[0].value == {"question": "approve?"}
    out = remote.invoke(Command(resume="yes"), config)
    assert out["approved"] is True and out["messages"][-1]["content"] == "done"
    history = list(remote.get_state_history(config))
    assert len(history) == 5
    assert history[-1].metadata["source"] == "input"


def test_get_graph_and_update_state(server: Any) -> None:
    remote = RemoteGraph("steps", url=server.url)
    drawn = remote.get_graph()
    assert {"s0", "s4"} <= set(drawn.nodes)
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    assert remote.invoke({"n": 0}, config)["n"] == 5
    remote.update_state(config, {"n": 100})
    assert remote.get_state(config).values["n"] == 100


async def test_async_stream_with_subgraphs(server: Any) -> None:
    remote = RemoteGraph("parent", url=server.url)
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    seen = [
        item
        async for item in remote.astream({"n": 1}, config, stream_mode="updates", subgraphs=True)
    ]
    namespaces = [ns for ns, _ in seen]
    assert any(ns and ns[0].startswith("child:") for ns in namespaces)
    assert seen[-1] == ((), {"child": {"n": 11, "log": ["child"]}})


def test_remote_graph_as_a_node_of_a_local_langgraph_graph(server: Any) -> None:
    """RemoteGraph used inside a LangGraph graph, as LangGraph's docs show it."""
    from langgraph.graph import START, StateGraph
    from typing_extensions import TypedDict

    class S(TypedDict, total=False):
        n: float
        log: list[str]

    remote = RemoteGraph("steps", url=server.url)
    builder = StateGraph(S)
    builder.add_node("remote", remote)
    builder.add_edge(START, "remote")
    out = builder.compile().invoke({"n": 0})
    assert out["n"] == 5 and out["log"] == ["s0", "s1", "s2", "s3", "s4"]
