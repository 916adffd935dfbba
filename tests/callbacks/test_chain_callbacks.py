"""config["callbacks"]: LangChain-protocol handlers and graph lifecycle handlers."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from typing_extensions import TypedDict

from stategraph.callbacks import (
    BaseCallbackHandler,
    GraphCallbackHandler,
    GraphInterruptEvent,
    GraphResumeEvent,
    _GraphCallbackManager,
    dispatch_custom_event,
    get_sync_graph_callback_manager_for_config,
)
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, StateGraph
from stategraph.types import Command, TracePolicy, interrupt


class State(TypedDict):
    answer: str | None


class Log(GraphCallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.ids: dict[Any, str] = {}

    def _name(self, run_id: Any) -> str:
        return self.ids.get(run_id, "?")

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: Any, **kw: Any) -> None:
        self.ids[run_id] = kw["name"]
        parent = self._name(kw["parent_run_id"]) if kw.get("parent_run_id") else None
        self.events.append(("start", kw["name"], parent, tuple(kw["tags"]), inputs))
        self.last_metadata = kw["metadata"]

    def on_chain_end(self, outputs: Any, *, run_id: Any, **kw: Any) -> None:
        self.events.append(("end", self._name(run_id), outputs))

    def on_chain_error(self, error: BaseException, *, run_id: Any, **kw: Any) -> None:
        self.events.append(("error", self._name(run_id), type(error).__name__))

    def on_interrupt(self, event: GraphInterruptEvent) -> None:
        self.events.append(("interrupt", event.status, event.checkpoint_ns, len(event.interrupts)))
        self.interrupt_event = event

    def on_resume(self, event: GraphResumeEvent) -> None:
        self.events.append(("resume", event.status, event.checkpoint_ns))

    def on_custom_event(self, name: str, data: Any, *, run_id: Any, **kw: Any) -> None:
        self.events.append(("custom", name, data, self._name(run_id)))


def _ask() -> Any:
    def ask(state: State) -> dict[str, Any]:
        return {"answer": interrupt("value?")}

    return StateGraph(State).add_node("ask", ask).add_edge(START, "ask")


def test_graph_and_nodes_are_chain_runs_with_langgraph_tags_and_metadata() -> None:
    def pre(state: State) -> dict[str, Any]:
        return {"answer": "pre"}

    graph = (
        StateGraph(State).add_node("pre", pre).add_edge(START, "pre").add_edge("pre", END).compile()
    )
    log = Log()
    out = graph.invoke(
        {"answer": None},
        {"callbacks": [log], "tags": ["mine"], "metadata": {"user": 7}, "run_name": "Job"},
    )
    assert out == {"answer": "pre"}
    assert log.events == [
        ("start", "Job", None, ("mine",), {"answer": None}),
        ("start", "pre", "Job", ("graph:step:1", "mine"), {"answer": None}),
        ("end", "pre", {"answer": "pre"}),
        ("end", "Job", {"answer": "pre"}),
    ]
    # metadata of the node run: the config's, LangGraph's keys, the integration marker
    meta = log.last_metadata
    assert meta["user"] == 7 and meta["ls_integration"] == "langgraph"
    assert meta["langgraph_node"] == "pre" and meta["langgraph_step"] == 1
    assert meta["langgraph_triggers"] == ("branch:to:pre",)
    assert meta["langgraph_path"] == ("__pregel_pull", "pre")
    assert meta["langgraph_checkpoint_ns"].startswith("pre:")


def test_subgraph_interrupt_and_resume_reach_graph_handlers() -> None:
    sub = _ask().compile()
    graph = (
        StateGraph(State)
        .add_node("sub", sub)
        .add_edge(START, "sub")
        .compile(checkpointer=InMemorySaver())
    )
    log = Log()
    config = {"configurable": {"thread_id": "1"}, "callbacks": [log]}
    graph.invoke({"answer": None}, config)
    names = [(e[0], e[1]) for e in log.events]
    assert names == [
        ("start", "LangGraph"),
        ("start", "sub"),
        ("start", "LangGraph"),
        ("start", "ask"),
        ("error", "ask"),
        ("error", "LangGraph"),
        ("error", "sub"),
        ("interrupt", "pending"),
        ("end", "LangGraph"),
    ]
    # the subgraph is the node's first step
    assert log.events[2][2:4] == ("sub", ("seq:step:1",))
    assert log.events[7] == ("interrupt", "pending", (), 1)
    assert (
        log.interrupt_event.checkpoint_id
        == graph.get_state(config).config["configurable"]["checkpoint_id"]
    )
    log.events.clear()
    assert graph.invoke(Command(resume="yes"), config) == {"answer": "yes"}
    resumes = [e for e in log.events if e[0] == "resume"]
    assert resumes[0] == ("resume", "pending", ())
    assert resumes[1][2][0].startswith("sub:") and len(resumes) == 2


def test_breakpoint_pause_has_its_status_and_no_interrupts() -> None:
    def step(state: State) -> dict[str, Any]:
        return {}

    graph = (
        StateGraph(State)
        .add_node("a", step)
        .add_node("b", step)
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=InMemorySaver(), interrupt_after=["a"])
    )
    log = Log()
    graph.invoke({"answer": None}, {"configurable": {"thread_id": "b"}, "callbacks": [log]})
    assert ("interrupt", "interrupt_after", (), 0) in log.events


class Raising(GraphCallbackHandler):
    def __init__(self, raise_error: bool = False) -> None:
        self.raise_error = raise_error

    def on_interrupt(self, event: GraphInterruptEvent) -> None:
        raise ValueError("handler broke")


def test_a_raising_handler_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = Log()
    config = {"configurable": {"thread_id": "r"}, "callbacks": [Raising(), log]}
    with caplog.at_level(logging.WARNING, logger="stategraph.observe"):
        out = _ask().compile(checkpointer=InMemorySaver()).invoke({"answer": None}, config)
    assert "__interrupt__" in out
    assert ("interrupt", "pending", (), 1) in log.events
    assert any("handler broke" in str(r.exc_info) for r in caplog.records)


def test_raise_error_handlers_fail_the_run() -> None:
    config = {"configurable": {"thread_id": "r2"}, "callbacks": [Raising(raise_error=True)]}
    with pytest.raises(ValueError, match="handler broke"):
        _ask().compile(checkpointer=InMemorySaver()).invoke({"answer": None}, config)


class AsyncLog(GraphCallbackHandler):
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def on_interrupt(self, event: GraphInterruptEvent) -> None:
        self.seen.append("interrupt")

    async def on_resume(self, event: GraphResumeEvent) -> None:
        self.seen.append("resume")


async def test_coroutine_handlers_are_awaited() -> None:
    handler = AsyncLog()
    graph = _ask().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "a"}, "callbacks": [handler]}
    await graph.ainvoke({"answer": None}, config)
    assert await graph.ainvoke(Command(resume="v"), config) == {"answer": "v"}
    assert handler.seen == ["interrupt", "resume"]


def test_plain_handlers_do_not_get_lifecycle_events() -> None:
    class Plain(BaseCallbackHandler):
        def __init__(self) -> None:
            self.names: list[str] = []

        def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
            self.names.append(kw["name"])

        def on_interrupt(self, event: Any) -> None:  # not a graph handler: never called
            raise AssertionError("plain handler got a lifecycle event")

    plain = Plain()
    config = {"configurable": {"thread_id": "p"}, "callbacks": [plain]}
    _ask().compile(checkpointer=InMemorySaver()).invoke({"answer": None}, config)
    assert plain.names == ["LangGraph", "ask"]


def test_routing_functions_and_custom_events_nest_under_their_node() -> None:
    class S(TypedDict):
        n: int

    def work(state: S) -> dict[str, Any]:
        dispatch_custom_event("progress", {"pct": 50})
        return {"n": state["n"] + 1}

    def route(state: S) -> str:
        return END

    graph = (
        StateGraph(S)
        .add_node("work", work)
        .add_edge(START, "work")
        .add_conditional_edges("work", route)
        .compile()
    )
    log = Log()
    graph.invoke({"n": 0}, {"callbacks": [log]})
    assert log.events == [
        ("start", "LangGraph", None, (), {"n": 0}),
        ("start", "work", "LangGraph", ("graph:step:1",), {"n": 0}),
        ("custom", "progress", {"pct": 50}, "work"),
        ("start", "route", "work", ("seq:step:3",), {"n": 1}),
        ("end", "route", "__end__"),
        ("end", "work", {"n": 1}),
        ("end", "LangGraph", {"n": 1}),
    ]


def test_dispatch_custom_event_outside_a_run_is_a_clear_error() -> None:
    with pytest.raises(RuntimeError, match="inside a node"):
        dispatch_custom_event("x", 1)


def test_failing_node_reports_chain_errors() -> None:
    def broken(state: State) -> dict[str, Any]:
        raise KeyError("gone")

    graph = StateGraph(State).add_node("broken", broken).add_edge(START, "broken").compile()
    log = Log()
    with pytest.raises(KeyError):
        graph.invoke({"answer": None}, {"callbacks": [log]})
    assert log.events[-2:] == [("error", "broken", "KeyError"), ("error", "LangGraph", "KeyError")]


class Tracer(BaseCallbackHandler):
    """Looks like a LangChain tracer (its class hierarchy has a BaseTracer)."""

    def __init__(self) -> None:
        self.records: dict[str, list[Any]] = {}
        self.names: dict[Any, str] = {}

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: Any, **kw: Any) -> None:
        self.names[run_id] = kw["name"]
        self.records.setdefault(kw["name"], []).append(inputs)

    def on_chain_end(self, outputs: Any, *, run_id: Any, **kw: Any) -> None:
        self.records[self.names[run_id]].append(outputs)


class BaseTracer(Tracer):
    pass


class FakeTracer(BaseTracer):
    pass


def _policy_graph(policy: TracePolicy) -> Any:
    def inc(state: dict[str, Any]) -> dict[str, Any]:
        return {"n": state["n"] + 1}

    class S(TypedDict):
        n: int

    return StateGraph(S).add_node("inc", inc, trace_policy=policy).add_edge(START, "inc").compile()


def test_trace_policy_changes_what_tracers_record_only() -> None:
    policy = TracePolicy(process_inputs=lambda x: "in-hidden", process_outputs=lambda x: "out")
    tracer, plain = FakeTracer(), Tracer()
    assert _policy_graph(policy).invoke({"n": 1}, {"callbacks": [tracer, plain]}) == {"n": 2}
    assert tracer.records["inc"] == ["in-hidden", "out"]
    assert plain.records["inc"] == [{"n": 1}, {"n": 2}]


def test_a_raising_trace_policy_records_the_real_values() -> None:
    def boom(value: Any) -> Any:
        raise RuntimeError("processor failed")

    tracer = FakeTracer()
    graph = _policy_graph(TracePolicy(process_inputs=boom))
    assert graph.invoke({"n": 1}, {"callbacks": [tracer]}) == {"n": 2}
    assert graph.invoke({"n": 1}) == {"n": 2}
    assert tracer.records["inc"] == [{"n": 1}, {"n": 2}]


def test_trace_policy_must_be_a_trace_policy() -> None:
    with pytest.raises(TypeError, match="TracePolicy"):
        StateGraph(State).add_node("a", lambda s: s, trace_policy=lambda x: x)  # type: ignore[arg-type]


def test_bad_callbacks_value_is_a_clear_error() -> None:
    graph = _ask().compile()
    with pytest.raises(TypeError, match="callbacks"):
        graph.invoke({"answer": None}, {"callbacks": [object()]})


def test_managers_accept_any_handler_and_dispatch_to_graph_handlers() -> None:
    manager = _GraphCallbackManager()
    plain = BaseCallbackHandler()
    manager.add_handler(plain, inherit=True)
    assert plain in manager.handlers
    log = Log()
    manager = get_sync_graph_callback_manager_for_config({"callbacks": [plain, log]})
    assert manager.handlers == [log]
    manager.on_resume(GraphResumeEvent(None, "pending", "c", ()))
    assert log.events == [("resume", "pending", ())]
