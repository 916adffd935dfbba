"""Error handlers: a node's fallback that runs, in the same step, once the node failed for good."""

from __future__ import annotations

import operator
import threading
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.errors import GraphInterrupt, NodeError
from stategraph.graph import END, START, StateGraph
from stategraph.runtime import Runtime
from stategraph.types import Command, RetryPolicy, interrupt


class Log(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    pick: str


def _broken(state: Log) -> Log:
    raise KeyError("inventory offline")


async def _abroken(state: Log) -> Log:
    raise KeyError("inventory offline")


def _fallback(state: Log, error: NodeError) -> Log:
    return {"log": [f"fallback for {error.node}: {type(error.error).__name__}"]}


async def _afallback(state: Log, error: NodeError) -> Log:
    return {"log": [f"fallback for {error.node}: {type(error.error).__name__}"]}


def _one_node(node: Any, handler: Any, **compile_kw: Any) -> Any:
    return (
        StateGraph(Log)
        .add_node("lookup", node, error_handler=handler)
        .add_edge(START, "lookup")
        .compile(**compile_kw)
    )


def test_handler_output_replaces_the_failed_node_output() -> None:
    assert _one_node(_broken, _fallback).invoke({"log": []}) == {
        "log": ["fallback for lookup: KeyError"]
    }


async def test_handler_output_replaces_the_failed_node_output_async() -> None:
    assert await _one_node(_abroken, _afallback).ainvoke({"log": []}) == {
        "log": ["fallback for lookup: KeyError"]
    }


@pytest.mark.parametrize("is_async", [False, True])
async def test_handler_runs_after_the_retries_are_used_up(is_async: bool) -> None:
    calls: list[int] = []
    seen: list[NodeError] = []

    def flaky(state: Log) -> Log:
        calls.append(1)
        raise ValueError(f"attempt {len(calls)}")

    async def aflaky(state: Log) -> Log:
        return flaky(state)

    def handler(state: Log, error: NodeError) -> Log:
        seen.append(error)
        return {"log": ["recovered"]}

    graph = (
        StateGraph(Log)
        .add_node(
            "flaky",
            aflaky if is_async else flaky,
            retry_policy=RetryPolicy(
                max_attempts=3, initial_interval=0, jitter=False, retry_on=ValueError
            ),
            error_handler=handler,
        )
        .add_edge(START, "flaky")
        .compile()
    )
    out = await graph.ainvoke({"log": []}) if is_async else graph.invoke({"log": []})
    assert out == {"log": ["recovered"]}
    assert len(calls) == 3
    assert [e.node for e in seen] == ["flaky"]
    assert isinstance(seen[0].error, ValueError) and str(seen[0].error) == "attempt 3"


def test_handler_can_route_with_a_command_and_skips_the_failed_node_edges() -> None:
    def handler(state: Log) -> Command[Any]:
        return Command(update={"log": ["handled"]}, goto="apology")

    graph = (
        StateGraph(Log)
        .add_node("lookup", _broken, error_handler=handler)
        .add_node("normal_path", lambda s: {"log": ["normal"]})
        .add_node("apology", lambda s: {"log": ["sorry"]})
        .add_edge(START, "lookup")
        .add_edge("lookup", "normal_path")
        .add_edge("apology", END)
        .compile()
    )
    assert graph.invoke({"log": []}) == {"log": ["handled", "sorry"]}


def test_a_failing_handler_fails_the_run_with_its_own_error() -> None:
    def handler(state: Log, error: NodeError) -> Log:
        raise RuntimeError("fallback broke too")

    with pytest.raises(RuntimeError, match="fallback broke too"):
        _one_node(_broken, handler).invoke({"log": []})


def test_handler_receives_config_and_runtime() -> None:
    seen: dict[str, Any] = {}

    def handler(state: Log, error: NodeError, config: dict[str, Any]) -> Log:
        seen["thread"] = config["configurable"]["thread_id"]
        return {"log": ["ok"]}

    def handler_rt(state: Log, runtime: Runtime[Any], *, error: NodeError) -> Log:
        seen["node"] = error.node
        seen["has_info"] = runtime.execution_info is not None
        return {"log": ["ok"]}

    cfg = {"configurable": {"thread_id": "t-h"}}
    _one_node(_broken, handler, checkpointer=InMemorySaver()).invoke({"log": []}, cfg)
    _one_node(_broken, handler_rt).invoke({"log": []})
    assert seen == {"thread": "t-h", "node": "lookup", "has_info": True}


def test_handler_of_a_subgraph_node_sees_the_inner_failure() -> None:
    inner = StateGraph(Log).add_node("deep", _broken).add_edge(START, "deep").compile()
    graph = (
        StateGraph(Log)
        .add_node("inner", inner, error_handler=_fallback)
        .add_edge(START, "inner")
        .compile()
    )
    assert graph.invoke({"log": []}) == {"log": ["fallback for inner: KeyError"]}


@pytest.mark.parametrize("is_async", [False, True])
async def test_siblings_keep_running_and_all_writes_apply(is_async: bool) -> None:
    graph = (
        StateGraph(Log)
        .add_node("lookup", _abroken if is_async else _broken, error_handler=_fallback)
        .add_node("sibling", lambda s: {"log": ["sibling"]})
        .add_edge(START, "lookup")
        .add_edge(START, "sibling")
        .compile()
    )
    out = await graph.ainvoke({"log": []}) if is_async else graph.invoke({"log": []})
    # writes apply in task-path order: the handler sorts right after the node it handles
    assert out == {"log": ["fallback for lookup: KeyError", "sibling"]}


def test_interrupts_are_never_handled() -> None:
    def asks(state: Log) -> Log:
        return {"log": [interrupt("approve?")]}

    graph = (
        StateGraph(Log)
        .add_node("asks", asks, error_handler=_fallback)
        .add_node("other", lambda s: {"log": ["other"]})
        .add_edge(START, "asks")
        .add_edge(START, "other")
        .compile(checkpointer=InMemorySaver())
    )
    cfg = {"configurable": {"thread_id": "hitl"}}
    out = graph.invoke({"log": []}, cfg)
    assert [i.value for i in out["__interrupt__"]] == ["approve?"]
    assert graph.invoke(Command(resume="yes"), cfg) == {"log": ["yes", "other"]}


def test_parent_commands_pass_through_handlers() -> None:
    def escalate(state: Log) -> Command[Any]:
        return Command(graph=Command.PARENT, update={"log": ["escalated"]}, goto="after")

    inner = StateGraph(Log).add_node("escalate", escalate).add_edge(START, "escalate").compile()
    graph = (
        StateGraph(Log)
        .add_node("inner", inner, error_handler=_fallback)
        .add_node("after", lambda s: {"log": ["after"]})
        .add_edge(START, "inner")
        .compile()
    )
    assert graph.invoke({"log": []}) == {"log": ["escalated", "after"]}


def test_set_node_defaults_applies_to_nodes_without_their_own() -> None:
    def own(state: Log, error: NodeError) -> Log:
        return {"log": [f"own:{error.node}"]}

    def default(state: Log, error: NodeError) -> Log:
        return {"log": [f"default:{error.node}"]}

    def route(state: Log) -> str:
        return state["pick"]

    graph = (
        StateGraph(Log)
        .add_node("a", _broken, error_handler=own)
        .add_node("b", _broken)
        .add_conditional_edges(START, route, ["a", "b"])
        .set_node_defaults(error_handler=default)  # after add_node: still applies
        .compile()
    )
    assert graph.invoke({"pick": "a", "log": []})["log"] == ["own:a"]
    assert graph.invoke({"pick": "b", "log": []})["log"] == ["default:b"]


def test_default_handler_never_catches_a_failing_handler() -> None:
    def own(state: Log, error: NodeError) -> Log:
        raise RuntimeError("own handler failed")

    graph = (
        StateGraph(Log)
        .set_node_defaults(error_handler=_fallback)
        .add_node("a", _broken, error_handler=own)
        .add_edge(START, "a")
        .compile()
    )
    with pytest.raises(RuntimeError, match="own handler failed"):
        graph.invoke({"log": []})


def test_set_node_defaults_retry_policy_and_per_node_override() -> None:
    attempts = {"a": 0, "b": 0}

    def flaky(name: str) -> Any:
        def node(state: Log) -> Log:
            attempts[name] += 1
            if attempts[name] < 3:
                raise ValueError("not yet")
            return {"log": [name]}

        return node

    fast = RetryPolicy(max_attempts=3, initial_interval=0, jitter=False, retry_on=ValueError)
    graph = (
        StateGraph(Log)
        .set_node_defaults(retry_policy=fast)
        .add_node("a", flaky("a"))
        .add_node("b", flaky("b"), retry_policy=RetryPolicy(max_attempts=1))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile()
    )
    with pytest.raises(ValueError, match="not yet"):
        graph.invoke({"log": []})
    assert attempts == {"a": 3, "b": 1}


def test_name_clash_with_the_default_handler_node_is_rejected_at_compile() -> None:
    builder = (
        StateGraph(Log)
        .set_node_defaults(error_handler=_fallback)
        .add_node("__default_error_handler__", lambda s: {})
        .add_edge(START, "__default_error_handler__")
    )
    with pytest.raises(ValueError, match="__default_error_handler__"):
        builder.compile()


def test_bad_handlers_are_rejected_when_added() -> None:
    with pytest.raises(TypeError, match="error_handler of node 'x'"):
        StateGraph(Log).add_node("x", _broken, error_handler=42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="set_node_defaults"):
        StateGraph(Log).set_node_defaults(error_handler="nope")  # type: ignore[arg-type]


def test_crashed_handler_runs_again_on_resume_and_the_node_does_not() -> None:
    runs = {"node": 0, "handler": 0}
    errors: list[Any] = []

    def node(state: Log) -> Log:
        runs["node"] += 1
        raise ValueError("db down")

    def handler(state: Log, error: NodeError) -> Log:
        runs["handler"] += 1
        errors.append(error.error)
        if runs["handler"] == 1:
            raise RuntimeError("handler crashed")
        return {"log": ["recovered"]}

    saver = InMemorySaver()
    graph = _one_node(node, handler, checkpointer=saver)
    cfg = {"configurable": {"thread_id": "crash"}}
    with pytest.raises(RuntimeError, match="handler crashed"):
        graph.invoke({"log": []}, cfg)
    state = graph.get_state(cfg)
    assert state.next == ("lookup",)
    assert state.tasks[0].error == "ValueError('db down')"

    assert graph.invoke(None, cfg) == {"log": ["recovered"]}
    assert runs == {"node": 1, "handler": 2}
    # the first time the handler got the exception; after the restart, its saved text
    assert isinstance(errors[0], ValueError)
    assert errors[1] == "ValueError('db down')"


async def test_concurrent_handlers_start_while_siblings_still_run() -> None:
    started = threading.Event()

    def fails_fast(state: Log) -> Log:
        raise ValueError("fast")

    def waits_for_handler(state: Log) -> Log:
        assert started.wait(5), "the handler did not start while this node ran"
        return {"log": ["slow sibling"]}

    def handler(state: Log, error: NodeError) -> Log:
        started.set()
        return {"log": ["handled"]}

    graph = (
        StateGraph(Log)
        .add_node("fast", fails_fast, error_handler=handler)
        .add_node("slow", waits_for_handler)
        .add_edge(START, "fast")
        .add_edge(START, "slow")
        .compile()
    )
    assert graph.invoke({"log": []}) == {"log": ["handled", "slow sibling"]}
    started.clear()
    assert await graph.ainvoke({"log": []}) == {"log": ["handled", "slow sibling"]}


def test_handler_may_interrupt_and_be_resumed() -> None:
    def handler(state: Log, error: NodeError) -> Log:
        return {"log": [f"human says {interrupt('what now?')}"]}

    graph = _one_node(_broken, handler, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "ask"}}
    out = graph.invoke({"log": []}, cfg)
    assert [i.value for i in out["__interrupt__"]] == ["what now?"]
    assert graph.invoke(Command(resume="retry later"), cfg) == {"log": ["human says retry later"]}


def test_tasks_stream_reports_the_failure_then_the_handler() -> None:
    graph = _one_node(_broken, _fallback)
    chunks = list(graph.stream({"log": []}, stream_mode="tasks"))
    results = [c for c in chunks if "result" in c]
    assert [(c["name"], type(c["error"]).__name__) for c in results] == [
        ("lookup", "KeyError"),
        ("__error_handler__lookup", "NoneType"),
    ]
    assert results[1]["result"] == {"log": ["fallback for lookup: KeyError"]}


def test_a_graph_interrupt_raised_by_hand_is_not_handled() -> None:
    def raises(state: Log) -> Log:
        raise GraphInterrupt(())

    graph = _one_node(raises, _fallback, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "gi"}}
    graph.invoke({"log": []}, cfg)
    # the run stopped with the node pending, like a breakpoint; no handler ran
    state = graph.get_state(cfg)
    assert state.next == ("lookup",) and state.values == {"log": []}


def test_low_level_node_naming_an_unknown_handler_is_rejected() -> None:
    from stategraph.channels import EphemeralValue, LastValue
    from stategraph.pregel import NodeBuilder, Pregel

    node = NodeBuilder().subscribe_only("a").do(lambda x: x).write_to("b").build()
    node.error_handler = "missing"
    with pytest.raises(ValueError, match="names 'missing' as its error handler"):
        Pregel(
            nodes={"n": node},
            channels={"a": EphemeralValue(Any), "b": LastValue(Any)},
            input_channels="a",
            output_channels="b",
        )
