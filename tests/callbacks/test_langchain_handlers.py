"""Real LangChain handlers in config["callbacks"] (runs only where langchain-core is installed)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from typing_extensions import TypedDict

pytest.importorskip("langchain_core")

from langchain_core.callbacks import BaseCallbackHandler, CallbackManager
from langchain_core.tracers.base import BaseTracer

from stategraph.callbacks import GraphCallbackHandler, GraphInterruptEvent
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.types import TracePolicy, interrupt


class State(TypedDict):
    n: int


class RecordingTracer(BaseTracer):
    """A LangChain tracer that keeps the runs it completes (like LangSmith's)."""

    def __init__(self) -> None:
        super().__init__()
        self.finished: list[Any] = []

    def _persist_run(self, run: Any) -> None:
        # LangChain calls this once per finished root run, with its tree of child runs
        self.finished.append(run)


def _graph(policy: TracePolicy | None = None) -> Any:
    def inc(state: State) -> dict[str, Any]:
        return {"n": state["n"] + 1}

    sub = (
        StateGraph(State).add_node("inc", inc, trace_policy=policy).add_edge(START, "inc").compile()
    )
    return StateGraph(State).add_node("sub", sub).add_edge(START, "sub").compile()


def test_a_langchain_tracer_builds_the_run_tree() -> None:
    tracer = RecordingTracer()
    assert _graph().invoke({"n": 1}, {"callbacks": [tracer], "run_name": "job"}) == {"n": 2}
    (root,) = tracer.finished
    assert root.name == "job" and root.run_type == "chain"
    assert root.outputs == {"n": 2}
    (node,) = root.child_runs
    assert node.name == "sub" and "graph:step:1" in node.tags
    (subgraph,) = node.child_runs
    assert subgraph.name == "LangGraph"
    (inner,) = subgraph.child_runs
    assert inner.name == "inc" and inner.inputs == {"n": 1} and inner.outputs == {"n": 2}
    assert inner.extra["metadata"]["langgraph_node"] == "inc"


def test_trace_policy_reaches_langchain_tracers_only() -> None:
    tracer = RecordingTracer()
    seen: list[Any] = []

    class Plain(BaseCallbackHandler):
        def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
            if kwargs.get("name") == "inc":
                seen.append(inputs)

    policy = TracePolicy(process_inputs=lambda _: {"hidden": True})
    _graph(policy).invoke({"n": 1}, {"callbacks": [tracer, Plain()]})
    (root,) = tracer.finished
    inner = root.child_runs[0].child_runs[0].child_runs[0]
    assert inner.inputs == {"hidden": True}
    assert seen == [{"n": 1}]


def test_a_langchain_callback_manager_is_accepted() -> None:
    class Lifecycle(GraphCallbackHandler):
        def __init__(self) -> None:
            self.events: list[GraphInterruptEvent] = []

        def on_interrupt(self, event: GraphInterruptEvent) -> None:
            self.events.append(event)

    def ask(state: State) -> dict[str, Any]:
        return {"n": interrupt("n?")}

    graph = (
        StateGraph(State)
        .add_node("ask", ask)
        .add_edge(START, "ask")
        .compile(checkpointer=InMemorySaver())
    )
    handler = Lifecycle()
    tracer = RecordingTracer()
    manager = CallbackManager.configure(inheritable_callbacks=[tracer])
    manager.add_handler(handler)
    out = graph.invoke({"n": 0}, {"configurable": {"thread_id": "m"}, "callbacks": manager})
    assert "__interrupt__" in out
    assert len(handler.events) == 1 and handler.events[0].checkpoint_ns == ()
    assert [r.name for r in tracer.finished] == ["LangGraph"]


def test_async_langchain_handler_methods_are_awaited() -> None:
    from langchain_core.callbacks import AsyncCallbackHandler

    names: list[str] = []

    class AsyncNames(AsyncCallbackHandler):
        async def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
            names.append(kwargs["name"])

    asyncio.run(_graph().ainvoke({"n": 0}, {"callbacks": [AsyncNames()]}))
    assert names == ["LangGraph", "sub", "LangGraph", "inc"]
