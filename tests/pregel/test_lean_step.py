"""The lean path of a step: one changed channel, one task run inline, no saver.

A step whose only changed channel triggers several nodes runs each of them once;
a one-task step runs inline (no pool) and still isolates the node's context
variables; a run without a saver numbers its steps as before.
"""

from __future__ import annotations

import contextvars
import itertools
from typing import Any

from typing_extensions import TypedDict

from stategraph.channels import LastValue, Topic
from stategraph.config import RunnableConfig
from stategraph.graph import END, START, StateGraph
from stategraph.pregel import NodeBuilder, Pregel

_VAR: contextvars.ContextVar[str] = contextvars.ContextVar("lean_step_var", default="unset")


def _fan_out_graph(calls: list[str]) -> Pregel:
    def node(name: str, out: str) -> Any:
        def run(value: Any) -> Any:
            calls.append(name)
            return f"{name}:{value}"

        return NodeBuilder().subscribe_only(out).do(run)

    return Pregel(
        nodes={
            # one channel ("mid") changed by step 0 triggers three nodes in step 1
            "first": NodeBuilder().subscribe_only("a").do(lambda v: v * 2).write_to("mid"),
            "z": node("z", "mid").write_to("out"),
            "m": node("m", "mid").write_to("out"),
            "b": node("b", "mid").write_to("out"),
        },
        channels={"a": LastValue(int), "mid": LastValue(int), "out": Topic(str)},
        input_channels="a",
        output_channels="out",
    )


def test_one_changed_channel_runs_each_of_its_nodes_once() -> None:
    calls: list[str] = []
    app = _fan_out_graph(calls)
    out = app.invoke(5)
    # every subscriber of the one changed channel ran once, in step 1; writes are
    # applied in the order of the task paths (by node name)
    assert sorted(calls) == ["b", "m", "z"]
    assert out == ["b:10", "m:10", "z:10"]


def test_one_changed_channel_steps_stream_in_order() -> None:
    calls: list[str] = []
    app = _fan_out_graph(calls)
    chunks = list(app.stream(3, stream_mode="updates"))
    assert chunks[0] == {"first": {"mid": 6}}
    later = sorted((k, v["out"]) for chunk in chunks[1:] for k, v in chunk.items())
    assert later == [("b", "b:6"), ("m", "m:6"), ("z", "z:6")]


class _S(TypedDict):
    seen: list[str]


def test_inline_task_keeps_its_context_variables_to_itself() -> None:
    def setter(state: _S) -> dict[str, Any]:
        _VAR.set("set by setter")
        return {"seen": [*state["seen"], _VAR.get()]}

    def reader(state: _S) -> dict[str, Any]:
        return {"seen": [*state["seen"], _VAR.get()]}

    builder = StateGraph(_S)
    builder.add_node("setter", setter)
    builder.add_node("reader", reader)
    builder.add_edge(START, "setter")
    builder.add_edge("setter", "reader")
    builder.add_edge("reader", END)
    out = builder.compile().invoke({"seen": []})
    # each one-task step ran inline, in a copy of the caller's context
    assert out == {"seen": ["set by setter", "unset"]}
    assert _VAR.get() == "unset"


def test_chain_without_saver_counts_its_steps() -> None:
    steps: list[int] = []

    def node(state: _S, config: RunnableConfig) -> dict[str, Any]:
        steps.append(config["metadata"]["langgraph_step"])
        return {"seen": [*state["seen"], "x"]}

    builder = StateGraph(_S)
    names = [f"n{i}" for i in range(5)]
    for name in names:
        builder.add_node(name, node)
    builder.add_edge(START, names[0])
    for left, right in itertools.pairwise(names):
        builder.add_edge(left, right)
    builder.add_edge(names[-1], END)
    out = builder.compile().invoke({"seen": []})
    assert out == {"seen": ["x"] * 5}
    assert steps == [1, 2, 3, 4, 5]
