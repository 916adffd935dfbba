"""OpenTelemetry spans of graph runs, checked with the SDK's in-memory exporter."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from typing_extensions import TypedDict

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from stategraph import tracing
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.types import RetryPolicy, interrupt


class State(TypedDict):
    n: int


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.instrument(provider)
    try:
        yield exporter, provider
    finally:
        tracing.uninstrument()


def _by_name(exporter: Any) -> dict[str, Any]:
    return {s.name: s for s in exporter.get_finished_spans()}


def _parent(span: Any) -> Any:
    return span.parent.span_id if span.parent is not None else None


def _graph(inner_tracer: Any = None) -> Any:
    def work(state: State) -> dict[str, Any]:
        if inner_tracer is not None:
            with inner_tracer.start_as_current_span("inside work"):
                pass
        return {"n": state["n"] + 1}

    return (
        StateGraph(State)
        .add_node("work", work)
        .add_edge(START, "work")
        .compile(checkpointer=InMemorySaver())
    )


def test_run_step_task_spans_nest_with_attributes(spans: Any) -> None:
    exporter, provider = spans
    inner = provider.get_tracer("app")
    _graph(inner).invoke({"n": 0}, {"configurable": {"thread_id": "t1"}})
    found = _by_name(exporter)
    run, work, inside = found["graph LangGraph"], found["work"], found["inside work"]
    step = next(
        s
        for name, s in found.items()
        if name.startswith("step ") and _parent(work) == s.context.span_id
    )
    assert _parent(step) == run.context.span_id
    assert _parent(inside) == work.context.span_id  # node's own spans nest under its task
    assert work.attributes["langgraph.node"] == "work"
    assert work.attributes["langgraph.thread_id"] == "t1"
    assert work.attributes["langgraph.task.attempt"] == 1
    assert work.attributes["langgraph.step"] == 1
    assert work.attributes["langgraph.checkpoint_id"]
    assert run.attributes["langgraph.graph.name"] == "LangGraph"
    assert run.attributes["langgraph.checkpoint_id"]
    assert "__start__" not in found


async def test_async_nodes_and_subgraphs_nest(spans: Any) -> None:
    exporter, provider = spans
    inner_tracer = provider.get_tracer("app")

    async def deep(state: State) -> dict[str, Any]:
        await asyncio.sleep(0)
        with inner_tracer.start_as_current_span("inside deep"):
            pass
        return {"n": state["n"] + 1}

    sub = StateGraph(State).add_node("deep", deep).add_edge(START, "deep").compile()
    graph = StateGraph(State).add_node("sub", sub).add_edge(START, "sub").compile()
    await graph.ainvoke({"n": 0})
    found = _by_name(exporter)
    sub_task, deep_task = found["sub"], found["deep"]
    nested_runs = [
        s
        for s in exporter.get_finished_spans()
        if s.name == "graph LangGraph" and _parent(s) == sub_task.context.span_id
    ]
    assert len(nested_runs) == 1
    assert _parent(found["inside deep"]) == deep_task.context.span_id
    assert deep_task.context.trace_id == sub_task.context.trace_id


def test_failures_retries_and_interrupts_are_marked(spans: Any) -> None:
    exporter, _ = spans
    calls = {"n": 0}

    def flaky(state: State) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ConnectionError("once")
        return {"n": interrupt("more?")}

    graph = (
        StateGraph(State)
        .add_node("flaky", flaky, retry_policy=RetryPolicy(initial_interval=0, jitter=False))
        .add_edge(START, "flaky")
        .compile(checkpointer=InMemorySaver())
    )
    graph.invoke({"n": 0}, {"configurable": {"thread_id": "x"}})
    attempts = [s for s in exporter.get_finished_spans() if s.name == "flaky"]
    assert [s.attributes["langgraph.task.attempt"] for s in attempts] == [1, 2]
    assert attempts[0].status.status_code == trace.StatusCode.ERROR
    assert attempts[0].attributes["langgraph.task.retrying"] is True
    assert attempts[1].attributes["langgraph.interrupted"] is True
    run = _by_name(exporter)["graph LangGraph"]
    assert run.attributes["langgraph.interrupted"] is True
    assert run.attributes["langgraph.interrupt.count"] == 1


def test_uninstrumented_runs_make_no_spans() -> None:
    exporter = InMemorySpanExporter()
    _graph().invoke({"n": 0}, {"configurable": {"thread_id": "q"}})
    assert exporter.get_finished_spans() == ()
    assert not tracing.is_instrumented()


def test_the_input_step_makes_no_empty_span(spans: Any) -> None:
    exporter, _ = spans
    _graph().invoke({"n": 0}, {"configurable": {"thread_id": "t-steps"}})
    steps = [s for s in exporter.get_finished_spans() if s.name.startswith("step ")]
    # step 0 runs only the hidden __start__ node: it is not traced at all
    assert [s.name for s in steps] == ["step 1"]
    assert steps[0].attributes["langgraph.step.tasks"] == 1
