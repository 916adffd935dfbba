"""The low-level API: ``Pregel(nodes=..., channels=...)`` built from ``NodeBuilder`` s.

Expected values were checked black-box against LangGraph 1.2 (``langgraph.pregel``).
"""

from __future__ import annotations

from typing import Any

import pytest

from stategraph.channels import (
    EphemeralValue,
    LastValue,
    LastValueAfterFinish,
    NamedBarrierValue,
    Topic,
)
from stategraph.errors import EmptyInputError, GraphRecursionError
from stategraph.pregel import NodeBuilder, Pregel


def _recorder(calls: list[tuple[str, Any]], name: str, func: Any = None) -> Any:
    def run(value: Any) -> Any:
        calls.append((name, value))
        return value if func is None else func(value)

    return run


# --------------------------------------------------------------------------- NodeBuilder


def test_subscribe_only_passes_bare_value_and_triggers() -> None:
    node = NodeBuilder().subscribe_only("a").do(lambda x: x).write_to("b").build("n")
    assert type(node).__name__ == "PregelNode"
    assert node.name == "n"
    assert node.channels == "a"
    assert node.triggers == ["a"]


def test_subscribe_to_reads_dict_and_read_from_does_not_trigger() -> None:
    node = NodeBuilder().subscribe_to("a", "b").read_from("c").do(lambda x: x).build("n")
    assert node.channels == ["a", "b", "c"]
    assert node.triggers == ["a", "b"]


def test_subscribe_to_read_false_triggers_without_reading() -> None:
    node = NodeBuilder().subscribe_to("a", read=False).read_from("c").build("n")
    assert node.channels == ["c"]
    assert node.triggers == ["a"]


def test_builder_without_subscription_is_rejected_with_node_name() -> None:
    with pytest.raises(ValueError, match="'lonely'"):
        NodeBuilder().do(lambda x: x).write_to("b").build("lonely")


def test_pregel_builds_node_builders_and_names_them() -> None:
    app = Pregel(
        nodes={"n1": NodeBuilder().subscribe_only("a").write_to("b")},
        channels={"a": LastValue(int), "b": LastValue(int)},
        input_channels="a",
        output_channels="b",
    )
    assert type(app.nodes["n1"]).__name__ == "PregelNode"
    assert app.nodes["n1"].name == "n1"
    assert app.trigger_to_nodes == {"a": ["n1"]}
    assert app.invoke(7) == 7


def test_pregel_rejects_undeclared_channel_naming_node_and_channel() -> None:
    with pytest.raises(ValueError) as info:
        Pregel(
            nodes={"n": NodeBuilder().subscribe_only("zz").write_to("b")},
            channels={"a": LastValue(int), "b": LastValue(int)},
            input_channels="a",
            output_channels="b",
        )
    assert "'n'" in str(info.value)
    assert "'zz'" in str(info.value)


def test_several_do_calls_run_in_sequence(runner: Any) -> None:
    node = NodeBuilder().subscribe_only("a").do(lambda x: x + 1).do(lambda x: x * 10)
    app = Pregel(
        nodes={"n": node.write_to("b")},
        channels={"a": LastValue(int), "b": LastValue(int)},
        input_channels="a",
        output_channels="b",
    )
    assert runner.invoke(app, 1) == 20


def test_write_to_mapped_and_constant_values(runner: Any) -> None:
    node = NodeBuilder().subscribe_only("a").do(lambda x: x + 1)
    app = Pregel(
        nodes={"n": node.write_to("b", c=lambda out: out * 100, d="const")},
        channels={k: LastValue(object) for k in "abcd"},
        input_channels="a",
        output_channels=["b", "c", "d"],
    )
    assert runner.invoke(app, 1) == {"b": 2, "c": 200, "d": "const"}


def test_write_to_writes_none_outputs_like_langgraph(runner: Any) -> None:
    # LangGraph's ``write_to("b")`` writes whatever the node returned, ``None`` included;
    # skipping ``None`` needs an explicit ``ChannelWriteEntry(..., skip_none=True)``.
    node = NodeBuilder().subscribe_only("a").do(lambda x: None).write_to("b", c=lambda out: out)
    app = Pregel(
        nodes={"n": node},
        channels={k: LastValue(object) for k in "abc"},
        input_channels="a",
        output_channels=["b", "c"],
    )
    assert runner.invoke(app, 1) == {"b": None, "c": None}


def test_single_string_input_and_output_channels(runner: Any) -> None:
    app = Pregel(
        nodes={"n1": NodeBuilder().subscribe_only("a").do(lambda x: x + x).write_to("b")},
        channels={"a": EphemeralValue(str), "b": LastValue(str)},
        input_channels="a",
        output_channels="b",
    )
    assert runner.invoke(app, "foo") == "foofoo"


def test_empty_input_raises_empty_input_error(runner: Any) -> None:
    app = Pregel(
        nodes={"n": NodeBuilder().subscribe_only("a").write_to("b")},
        channels={"a": LastValue(int), "b": LastValue(int)},
        input_channels=["a"],
        output_channels="b",
    )
    with pytest.raises(EmptyInputError):
        runner.invoke(app, {})
    with pytest.raises(EmptyInputError):
        runner.invoke(app, None)


# --------------------------------------------------------------------------- graphs


def _chain() -> Pregel:
    n1 = NodeBuilder().subscribe_only("a").do(lambda x: x + x).write_to("b")
    n2 = NodeBuilder().subscribe_only("b").do(lambda x: x + x).write_to("c")
    return Pregel(
        nodes={"n1": n1, "n2": n2},
        channels={"a": EphemeralValue(str), "b": LastValue(str), "c": EphemeralValue(str)},
        input_channels=["a"],
        output_channels=["b", "c"],
    )


def test_chain(runner: Any) -> None:
    app = _chain()
    assert runner.invoke(app, {"a": "foo"}) == {"b": "foofoo", "c": "foofoofoofoo"}
    assert runner.stream(app, {"a": "foo"}, stream_mode="updates") == [
        {"n1": {"b": "foofoo"}},
        {"n2": {"c": "foofoofoofoo"}},
    ]


def test_chain_values_stream_skips_input_step(runner: Any) -> None:
    # LangGraph emits a values chunk after each step whose writes touched a stream
    # channel; the input step itself is not emitted for a low-level graph.
    app = _chain()
    assert runner.stream(app, {"a": "foo"}) == [
        {"b": "foofoo"},
        {"b": "foofoo", "c": "foofoofoofoo"},
    ]


def test_values_stream_only_when_stream_channels_change(runner: Any) -> None:
    n1 = NodeBuilder().subscribe_only("a").do(lambda x: x + x).write_to("b")
    n2 = NodeBuilder().subscribe_only("b").do(lambda x: x + x).write_to("c")
    app = Pregel(
        nodes={"n1": n1, "n2": n2},
        channels={"a": LastValue(str), "b": LastValue(str), "c": LastValue(str)},
        input_channels=["a"],
        output_channels=["b"],
        stream_channels=["a", "c"],
    )
    assert runner.stream(app, {"a": "foo"}) == [{"a": "foo", "c": "foofoofoofoo"}]
    assert runner.invoke(app, {"a": "foo"}) == {"b": "foofoo"}


def test_fan_out_fan_in_with_topic(runner: Any) -> None:
    calls: list[tuple[str, Any]] = []
    nodes = {
        f"w{i}": NodeBuilder()
        .subscribe_only("inp")
        .do(_recorder(calls, f"w{i}", lambda x, i=i: x * i))
        for i in (1, 2, 3)
    }
    nodes = {k: v.write_to("t") for k, v in nodes.items()}
    nodes["sum"] = (
        NodeBuilder().subscribe_only("t").do(_recorder(calls, "sum", sum)).write_to("out")
    )
    app = Pregel(
        nodes=nodes,
        channels={"inp": LastValue(int), "t": Topic(int), "out": LastValue(int)},
        input_channels="inp",
        output_channels=["out"],
    )
    assert runner.invoke(app, 5) == {"out": 30}
    # the fan-in node receives the topic's values in task order, once
    assert sorted(calls[:3]) == [("w1", 5), ("w2", 5), ("w3", 5)]
    assert calls[3:] == [("sum", [5, 10, 15])]
    updates = runner.stream(app, 5, stream_mode="updates")
    # parallel tasks report in completion order; the fan-in comes last
    assert sorted(updates[:3], key=lambda u: next(iter(u))) == [
        {"w1": {"t": 5}},
        {"w2": {"t": 10}},
        {"w3": {"t": 15}},
    ]
    assert updates[3:] == [{"sum": {"out": 30}}]


def test_barrier_waits_for_all_names(runner: Any) -> None:
    calls: list[tuple[str, Any]] = []
    nodes = {
        "x": NodeBuilder()
        .subscribe_only("inp")
        .do(_recorder(calls, "x"))
        .write_to("mid", bar=lambda _: "x"),
        "y": NodeBuilder().subscribe_only("mid").do(_recorder(calls, "y")).write_to(bar="y"),
        "join": NodeBuilder()
        .subscribe_to("bar", read=False)
        .read_from("inp", "mid")
        .do(_recorder(calls, "join", lambda d: d["inp"] + d["mid"]))
        .write_to("out"),
    }
    app = Pregel(
        nodes=nodes,
        channels={
            "inp": LastValue(int),
            "mid": LastValue(int),
            "bar": NamedBarrierValue(str, {"x", "y"}),
            "out": LastValue(int),
        },
        input_channels="inp",
        output_channels="out",
    )
    assert runner.invoke(app, 4) == 8
    # join ran once, after both x (step 0) and y (step 1) wrote their names
    assert calls == [("x", 4), ("y", 4), ("join", {"inp": 4, "mid": 4})]
    assert runner.stream(app, 4, stream_mode="updates") == [
        {"x": {"mid": 4, "bar": "x"}},
        {"y": {"bar": "y"}},
        {"join": {"out": 8}},
    ]


def test_cycle_stopped_by_condition(runner: Any) -> None:
    calls: list[list[int]] = []

    def step(xs: list[int]) -> list[int]:
        calls.append(list(xs))
        return [x + 1 for x in xs if x < 5]

    app = Pregel(
        nodes={"inc": NodeBuilder().subscribe_only("t").do(step).write_to("t", "log")},
        channels={"t": Topic(int), "log": Topic(int, accumulate=True)},
        input_channels="t",
        output_channels=["log"],
    )
    assert runner.invoke(app, 1) == {"log": [2, 3, 4, 5]}
    assert calls == [[1], [2], [3], [4], [5]]
    calls.clear()
    assert runner.invoke(app, [1, 3]) == {"log": [2, 4, 3, 5, 4, 5]}
    assert calls == [[1, 3], [2, 4], [3, 5], [4], [5]]


def test_cycle_stopped_by_recursion_limit(runner: Any) -> None:
    calls: list[int] = []

    def inc(x: int) -> int:
        calls.append(x)
        return x + 1

    app = Pregel(
        nodes={"n": NodeBuilder().subscribe_only("a").do(inc).write_to("a")},
        channels={"a": LastValue(int)},
        input_channels="a",
        output_channels="a",
    )
    with pytest.raises(GraphRecursionError) as info:
        runner.invoke(app, 0, {"recursion_limit": 5})
    assert "Recursion limit of 5 reached" in str(info.value)
    assert "recursion_limit" in str(info.value)
    # LangGraph runs the steps 0..recursion_limit before giving up: limit + 1 calls
    assert calls == [0, 1, 2, 3, 4, 5]


def test_node_retriggers_only_when_trigger_version_advances(runner: Any) -> None:
    calls: list[tuple[str, Any]] = []
    nodes = {
        "counter": NodeBuilder()
        .subscribe_only("b")
        .do(_recorder(calls, "counter", lambda x: [x[0] + 1] if x[0] < 3 else []))
        .write_to("b"),
        "once": NodeBuilder().subscribe_only("a").do(_recorder(calls, "once")).write_to("o1"),
        "both": NodeBuilder()
        .subscribe_to("a", "b")
        .do(_recorder(calls, "both", lambda d: d["b"]))
        .write_to("o2"),
        "reader": NodeBuilder()
        .subscribe_to("o1")
        .read_from("b")
        .do(_recorder(calls, "reader", lambda d: d["b"]))
        .write_to("o3"),
    }
    app = Pregel(
        nodes=nodes,
        channels={
            "a": LastValue(str),
            "b": Topic(int),
            "o1": LastValue(str),
            "o2": Topic(int, accumulate=True),
            "o3": LastValue(object),
        },
        input_channels=["a", "b"],
        output_channels=["o1", "o2", "o3"],
    )
    out = runner.invoke(app, {"a": "A", "b": 0})
    assert out == {"o1": "A", "o2": [0, 1, 2, 3], "o3": [1]}
    by_node: dict[str, list[Any]] = {}
    for name, value in calls:
        by_node.setdefault(name, []).append(value)
    # "a" stays available in every step but its version never advances after the input
    assert by_node["once"] == ["A"]
    # "both" runs each time "b" advances, seeing "a" unchanged
    assert by_node["both"] == [
        {"a": "A", "b": [0]},
        {"a": "A", "b": [1]},
        {"a": "A", "b": [2]},
        {"a": "A", "b": [3]},
    ]
    assert by_node["counter"] == [[0], [1], [2], [3]]
    # "reader" is triggered by o1 only (once); changes of "b" it reads do not trigger it
    assert by_node["reader"] == [{"o1": "A", "b": [1]}]


def test_last_value_after_finish_is_delivered_when_graph_is_done(runner: Any) -> None:
    calls: list[tuple[str, Any]] = []
    nodes = {
        "first": NodeBuilder().subscribe_only("inp").do(lambda x: x * 2).write_to("late", "mid"),
        "second": NodeBuilder().subscribe_only("mid").do(_recorder(calls, "second")).write_to("m2"),
        "final": NodeBuilder().subscribe_only("late").do(_recorder(calls, "final")).write_to("out"),
    }
    app = Pregel(
        nodes=nodes,
        channels={
            "inp": LastValue(int),
            "mid": LastValue(int),
            "m2": LastValue(int),
            "late": LastValueAfterFinish(int),
            "out": LastValue(int),
        },
        input_channels="inp",
        output_channels=["out"],
    )
    assert runner.invoke(app, 3) == {"out": 6}
    # "final" runs only after everything else stopped
    assert calls == [("second", 6), ("final", 6)]


# --------------------------------------------------------------------------- run API on a low-level graph


def test_batch_and_with_config_on_low_level_graph(runner: Any) -> None:
    app = _chain()
    assert runner.batch(app, [{"a": "x"}, {"a": "yz"}]) == [
        {"b": "xx", "c": "xxxx"},
        {"b": "yzyz", "c": "yzyzyzyz"},
    ]
    bound = app.with_config(recursion_limit=1)
    with pytest.raises(GraphRecursionError):
        runner.invoke(bound, {"a": "x"})
    assert runner.invoke(app, {"a": "x"}) == {"b": "xx", "c": "xxxx"}


def test_output_keys_on_low_level_graph(runner: Any) -> None:
    app = _chain()
    assert runner.invoke(app, {"a": "x"}, output_keys="c") == "xxxx"
    assert runner.invoke(app, {"a": "x"}, output_keys=["b"]) == {"b": "xx"}


def test_tasks_stream_on_low_level_graph(runner: Any) -> None:
    chunks = runner.stream(_chain(), {"a": "foo"}, stream_mode="tasks")
    assert [(c["name"], "input" in c) for c in chunks] == [
        ("n1", True),
        ("n1", False),
        ("n2", True),
        ("n2", False),
    ]
    assert chunks[0]["input"] == "foo"
    assert chunks[0]["triggers"] == ("a",)
    assert chunks[1]["result"] == {"b": "foofoo"}
    assert chunks[3]["result"] == {"c": "foofoofoofoo"}
    assert chunks[0]["id"] == chunks[1]["id"]


def test_debug_stream_on_low_level_graph_without_checkpointer(runner: Any) -> None:
    chunks = runner.stream(_chain(), {"a": "foo"}, stream_mode="debug")
    assert [(c["type"], c["step"]) for c in chunks] == [
        ("task", 0),
        ("task_result", 0),
        ("task", 1),
        ("task_result", 1),
    ]
    assert chunks[1]["payload"]["result"] == {"b": "foofoo"}


def test_checkpoints_stream_on_low_level_graph(runner: Any) -> None:
    from stategraph.checkpoint.memory import InMemorySaver

    n1 = NodeBuilder().subscribe_only("a").do(lambda x: x + 1).write_to("b")
    app = Pregel(
        nodes={"n1": n1},
        channels={"a": LastValue(int), "b": LastValue(int)},
        input_channels="a",
        output_channels="b",
        checkpointer=InMemorySaver(),
    )
    chunks = runner.stream(app, 1, {"configurable": {"thread_id": "t"}}, stream_mode="checkpoints")
    assert [(c["metadata"]["step"], c["next"], c["values"]) for c in chunks] == [
        (-1, ["n1"], {"a": 1}),
        (0, [], {"a": 1, "b": 2}),
    ]
