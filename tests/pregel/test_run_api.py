"""The public run API: invoke/stream/batch (sync and async), stream modes, config access.

Expected chunks were checked black-box against LangGraph 1.2.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import operator
import threading
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.config import RunnableConfig, get_config, get_stream_writer
from stategraph.errors import GraphRecursionError
from stategraph.graph import END, START, StateGraph
from stategraph.runtime import Runtime, get_runtime
from stategraph.types import StreamWriter

THREAD = {"configurable": {"thread_id": "t1"}}
STREAM_MODES = ["values", "updates", "custom", "debug", "tasks", "checkpoints"]


class State(TypedDict):
    x: int
    log: Annotated[list[str], operator.add]


@dataclass
class Ctx:
    user: str


def _abc(checkpointer: Any = None) -> Any:
    """START -> a -> b -> c -> END, each adding to x and logging its name."""
    g = StateGraph(State)
    g.add_node("a", lambda s: {"x": s["x"] + 1, "log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("c", lambda s: {"x": s["x"] * 10, "log": ["c"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return g.compile(checkpointer=checkpointer)


def _single(node: Any, **compile_kwargs: Any) -> Any:
    g = StateGraph(State, context_schema=Ctx)
    g.add_node("node", node)
    g.add_edge(START, "node")
    return g.compile(**compile_kwargs)


# --------------------------------------------------------------------------- invoke / stream


def test_invoke_returns_final_state(runner: Any) -> None:
    assert runner.invoke(_abc(), {"x": 1, "log": []}) == {"x": 20, "log": ["a", "b", "c"]}


def test_stream_values_starts_with_the_input_state(runner: Any) -> None:
    assert runner.stream(_abc(), {"x": 1, "log": []}, stream_mode="values") == [
        {"x": 1, "log": []},
        {"x": 2, "log": ["a"]},
        {"x": 2, "log": ["a", "b"]},
        {"x": 20, "log": ["a", "b", "c"]},
    ]


def test_stream_updates_is_the_default_mode_of_state_graphs(runner: Any) -> None:
    expected = [
        {"a": {"x": 2, "log": ["a"]}},
        {"b": {"log": ["b"]}},
        {"c": {"x": 20, "log": ["c"]}},
    ]
    assert runner.stream(_abc(), {"x": 1, "log": []}) == expected
    assert runner.stream(_abc(), {"x": 1, "log": []}, stream_mode="updates") == expected


def test_stream_list_of_modes_yields_mode_chunk_pairs(runner: Any) -> None:
    chunks = runner.stream(_abc(), {"x": 1, "log": []}, stream_mode=["updates", "values"])
    assert chunks == [
        ("values", {"x": 1, "log": []}),
        ("updates", {"a": {"x": 2, "log": ["a"]}}),
        ("values", {"x": 2, "log": ["a"]}),
        ("updates", {"b": {"log": ["b"]}}),
        ("values", {"x": 2, "log": ["a", "b"]}),
        ("updates", {"c": {"x": 20, "log": ["c"]}}),
        ("values", {"x": 20, "log": ["a", "b", "c"]}),
    ]


def test_stream_tasks_mode(runner: Any) -> None:
    chunks = runner.stream(_abc(), {"x": 1, "log": []}, stream_mode="tasks")
    # hidden nodes (the graph's __start__) are not shown
    assert [c["name"] for c in chunks] == ["a", "a", "b", "b", "c", "c"]
    start, result = chunks[0], chunks[1]
    assert set(start) == {"id", "name", "input", "triggers"}
    assert start["input"] == {"x": 1, "log": []}
    assert start["triggers"] == ("branch:to:a",)
    assert result == {
        "id": start["id"],
        "name": "a",
        "error": None,
        "result": {"x": 2, "log": ["a"]},
        "interrupts": [],
    }
    assert len({c["id"] for c in chunks}) == 3


def test_stream_checkpoints_mode(runner: Any) -> None:
    app = _abc(InMemorySaver())
    chunks = runner.stream(app, {"x": 1, "log": []}, THREAD, stream_mode="checkpoints")
    assert [(c["metadata"]["source"], c["metadata"]["step"]) for c in chunks] == [
        ("input", -1),
        ("loop", 0),
        ("loop", 1),
        ("loop", 2),
        ("loop", 3),
    ]
    assert [c["next"] for c in chunks] == [["__start__"], ["a"], ["b"], ["c"], []]
    assert [c["values"] for c in chunks] == [
        {"log": []},
        {"x": 1, "log": []},
        {"x": 2, "log": ["a"]},
        {"x": 2, "log": ["a", "b"]},
        {"x": 20, "log": ["a", "b", "c"]},
    ]
    assert chunks[0]["parent_config"] is None
    for prev, cur in itertools.pairwise(chunks):
        assert cur["parent_config"] == prev["config"]
    last = runner.get_state(app, THREAD)
    assert (
        chunks[-1]["config"]["configurable"]["checkpoint_id"]
        == last.config["configurable"]["checkpoint_id"]
    )
    # each checkpoint announces the tasks of its next step
    assert [[t["name"] for t in c["tasks"]] for c in chunks] == [
        ["__start__"],
        ["a"],
        ["b"],
        ["c"],
        [],
    ]
    assert set(chunks[1]["tasks"][0]) == {"id", "name", "interrupts", "state"}


def test_stream_debug_mode_with_checkpointer(runner: Any) -> None:
    app = _abc(InMemorySaver())
    chunks = runner.stream(app, {"x": 1, "log": []}, THREAD, stream_mode="debug")
    assert [(c["type"], c["step"]) for c in chunks] == [
        ("checkpoint", -1),
        ("checkpoint", 0),
        ("task", 1),
        ("task_result", 1),
        ("checkpoint", 1),
        ("task", 2),
        ("task_result", 2),
        ("checkpoint", 2),
        ("task", 3),
        ("task_result", 3),
        ("checkpoint", 3),
    ]
    for chunk in chunks:
        assert set(chunk) == {"step", "timestamp", "type", "payload"}
    assert chunks[2]["payload"]["name"] == "a"
    assert chunks[3]["payload"]["result"] == {"x": 2, "log": ["a"]}


def test_stream_debug_mode_without_checkpointer_has_no_checkpoint_events(runner: Any) -> None:
    chunks = runner.stream(_abc(), {"x": 1, "log": []}, stream_mode="debug")
    assert [(c["type"], c["step"]) for c in chunks] == [
        ("task", 1),
        ("task_result", 1),
        ("task", 2),
        ("task_result", 2),
        ("task", 3),
        ("task_result", 3),
    ]


@pytest.mark.executors
def test_stream_custom_mode_from_sync_node_and_its_threads(runner: Any) -> None:
    def node(s: State) -> dict[str, Any]:
        writer = get_stream_writer()
        writer({"step": "start"})

        def in_thread() -> None:
            get_stream_writer()("from-thread")

        t = threading.Thread(target=contextvars.copy_context().run, args=(in_thread,))
        t.start()
        t.join()
        writer("end")
        return {"x": 1}

    app = _single(node)
    assert runner.stream(app, {"x": 0}, stream_mode="custom") == [
        {"step": "start"},
        "from-thread",
        "end",
    ]
    assert runner.stream(app, {"x": 0}, stream_mode=["custom", "updates"]) == [
        ("custom", {"step": "start"}),
        ("custom", "from-thread"),
        ("custom", "end"),
        ("updates", {"node": {"x": 1}}),
    ]


async def test_stream_custom_mode_from_async_node() -> None:
    async def node(s: State, *, writer: StreamWriter) -> dict[str, Any]:
        get_stream_writer()("via-get")
        writer("via-param")
        await asyncio.sleep(0)
        return {"x": 1}

    app = _single(node)
    chunks = [c async for c in app.astream({"x": 0}, stream_mode=["custom", "values"])]
    assert chunks == [
        ("values", {"x": 0, "log": []}),
        ("custom", "via-get"),
        ("custom", "via-param"),
        ("values", {"x": 1, "log": []}),
    ]


@pytest.mark.executors
def test_stream_writer_is_a_no_op_when_custom_is_not_requested(runner: Any) -> None:
    def node(s: State) -> dict[str, Any]:
        get_stream_writer()("ignored")
        return {"x": 1}

    assert runner.stream(_single(node), {"x": 0}, stream_mode="updates") == [{"node": {"x": 1}}]
    assert runner.invoke(_single(node), {"x": 0}) == {"x": 1, "log": []}


def test_unknown_stream_mode_is_rejected(runner: Any) -> None:
    with pytest.raises(ValueError, match="nonsense"):
        runner.stream(_abc(), {"x": 1}, stream_mode="nonsense")


def test_all_stream_modes_at_once(runner: Any) -> None:
    app = _abc(InMemorySaver())
    chunks = runner.stream(app, {"x": 1, "log": []}, THREAD, stream_mode=STREAM_MODES)
    modes = {mode for mode, _ in chunks}
    assert modes == {"values", "updates", "debug", "tasks", "checkpoints"}
    assert [c for m, c in chunks if m == "updates"] == [
        {"a": {"x": 2, "log": ["a"]}},
        {"b": {"log": ["b"]}},
        {"c": {"x": 20, "log": ["c"]}},
    ]
    assert len([c for m, c in chunks if m == "checkpoints"]) == 5


# --------------------------------------------------------------------------- output_keys


def test_output_keys(runner: Any) -> None:
    app = _abc()
    assert runner.invoke(app, {"x": 1, "log": []}, output_keys="x") == 20
    assert runner.invoke(app, {"x": 1, "log": []}, output_keys=["log"]) == {"log": ["a", "b", "c"]}


# --------------------------------------------------------------------------- context / config


def test_context_reaches_nodes_through_runtime(runner: Any) -> None:
    def node(s: State, runtime: Runtime[Ctx]) -> dict[str, Any]:
        return {"log": [f"{runtime.context.user}/{get_runtime().context.user}"]}

    out = runner.invoke(_single(node), {"x": 0}, context=Ctx("ann"))
    assert out == {"x": 0, "log": ["ann/ann"]}


def test_get_config_inside_node(runner: Any) -> None:
    seen: dict[str, Any] = {}

    def node(s: State) -> dict[str, Any]:
        cfg = get_config()
        seen["configurable"] = cfg["configurable"]
        seen["metadata"] = cfg["metadata"]
        seen["tags"] = cfg["tags"]
        seen["recursion_limit"] = cfg["recursion_limit"]
        return {"x": 1}

    config = {
        "configurable": {"thread_id": "T", "user": "u"},
        "tags": ["t1"],
        "metadata": {"m": 1},
        "recursion_limit": 9,
    }
    runner.invoke(_single(node), {"x": 0}, config)
    conf = seen["configurable"]
    assert conf["thread_id"] == "T"
    assert conf["user"] == "u"
    assert conf["checkpoint_ns"].startswith("node:")
    ns = conf["checkpoint_ns"]
    assert seen["metadata"] == {
        "m": 1,
        "thread_id": "T",
        "langgraph_step": 1,
        "langgraph_node": "node",
        "langgraph_triggers": ("branch:to:node",),
        "langgraph_path": ("__pregel_pull", "node"),
        "langgraph_checkpoint_ns": ns,
    }
    assert seen["tags"] == ["t1"]
    assert seen["recursion_limit"] == 9


async def test_get_config_and_runtime_in_async_node_and_spawned_thread() -> None:
    seen: dict[str, Any] = {}

    async def node(s: State) -> dict[str, Any]:
        seen["node"] = get_config()["metadata"]["langgraph_node"]
        seen["user"] = get_runtime().context.user

        def in_thread() -> None:
            seen["thread_tid"] = get_config()["configurable"]["thread_id"]
            seen["thread_user"] = get_runtime().context.user

        t = threading.Thread(target=contextvars.copy_context().run, args=(in_thread,))
        t.start()
        t.join()
        return {"x": 1}

    app = _single(node)
    await app.ainvoke({"x": 0}, {"configurable": {"thread_id": "T"}}, context=Ctx("bo"))
    assert seen == {"node": "node", "user": "bo", "thread_tid": "T", "thread_user": "bo"}


def test_get_config_inside_thread_spawned_by_sync_node(runner: Any) -> None:
    seen: dict[str, Any] = {}

    def node(s: State) -> dict[str, Any]:
        def in_thread() -> None:
            seen["node"] = get_config()["metadata"]["langgraph_node"]
            seen["user"] = get_runtime().context.user

        t = threading.Thread(target=contextvars.copy_context().run, args=(in_thread,))
        t.start()
        t.join()
        return {"x": 1}

    runner.invoke(_single(node), {"x": 0}, context=Ctx("cy"))
    assert seen == {"node": "node", "user": "cy"}


@pytest.mark.parametrize("func", [get_config, get_stream_writer, get_runtime])
def test_accessors_outside_a_node_raise_runtime_error(func: Any) -> None:
    with pytest.raises(RuntimeError):
        func()


# --------------------------------------------------------------------------- batch / with_config


def test_batch_keeps_input_order(runner: Any) -> None:
    app = _abc()
    assert runner.batch(app, [{"x": 1, "log": []}, {"x": 5, "log": []}]) == [
        {"x": 20, "log": ["a", "b", "c"]},
        {"x": 60, "log": ["a", "b", "c"]},
    ]
    assert runner.batch(app, []) == []


def test_batch_with_one_config_per_input(runner: Any) -> None:
    app = _abc(InMemorySaver())
    configs = [{"configurable": {"thread_id": "b1"}}, {"configurable": {"thread_id": "b2"}}]
    assert runner.batch(app, [{"x": 1, "log": []}, {"x": 2, "log": []}], configs) == [
        {"x": 20, "log": ["a", "b", "c"]},
        {"x": 30, "log": ["a", "b", "c"]},
    ]
    assert runner.get_state(app, configs[0]).values["x"] == 20
    assert runner.get_state(app, configs[1]).values["x"] == 30


def test_batch_return_exceptions(runner: Any) -> None:
    def node(s: State) -> dict[str, Any]:
        if s["x"] == 2:
            raise ValueError("two")
        return {"x": s["x"] * 10}

    app = _single(node)
    out = runner.batch(app, [{"x": 1}, {"x": 2}, {"x": 3}], return_exceptions=True)
    assert out[0] == {"x": 10, "log": []}
    assert isinstance(out[1], ValueError)
    assert str(out[1]) == "two"
    assert out[2] == {"x": 30, "log": []}
    with pytest.raises(ValueError, match="two"):
        runner.batch(app, [{"x": 1}, {"x": 2}])


def test_batch_passes_context(runner: Any) -> None:
    def node(s: State, runtime: Runtime[Ctx]) -> dict[str, Any]:
        return {"log": [runtime.context.user]}

    out = runner.batch(_single(node), [{"x": 1}, {"x": 2}], context=Ctx("zed"))
    assert out == [{"x": 1, "log": ["zed"]}, {"x": 2, "log": ["zed"]}]


def test_with_config_merges_into_every_run(runner: Any) -> None:
    seen: list[Any] = []

    def node(s: State) -> dict[str, Any]:
        cfg = get_config()
        seen.append(
            (cfg["configurable"]["thread_id"], cfg.get("tags", []), cfg["metadata"].get("m"))
        )
        return {"x": 1}

    app = _single(node)
    bound = app.with_config(configurable={"thread_id": "W"}, tags=["w"])
    runner.invoke(bound, {"x": 0})
    runner.invoke(bound.with_config({"metadata": {"m": 2}}), {"x": 0})
    assert seen == [("W", ["w"], None), ("W", ["w"], 2)]
    # the original graph is unchanged
    runner.invoke(app, {"x": 0}, {"configurable": {"thread_id": "plain"}})
    assert seen[-1] == ("plain", [], None)


def test_with_config_recursion_limit(runner: Any) -> None:
    with pytest.raises(GraphRecursionError):
        runner.invoke(_abc().with_config(recursion_limit=2), {"x": 1, "log": []})
    assert runner.invoke(_abc().with_config(recursion_limit=4), {"x": 1, "log": []})["x"] == 20


def test_checkpointer_requires_thread_id(runner: Any) -> None:
    with pytest.raises(ValueError, match="thread_id"):
        runner.invoke(_abc(InMemorySaver()), {"x": 1, "log": []})


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_node_config_names_the_run_durability(runner: Any, durability: str) -> None:
    seen: list[str] = []

    def node(s: State, config: RunnableConfig) -> dict[str, Any]:
        seen.append(config["configurable"]["__pregel_durability"])
        seen.append(get_config()["configurable"]["__pregel_durability"])
        return {"x": s["x"] + 1}

    app = _single(node, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": f"durability-{durability}"}}
    assert runner.invoke(app, {"x": 0}, cfg, durability=durability)["x"] == 1
    assert seen == [durability, durability]
    # the key stays out of what is saved
    saved = runner.get_state(app, cfg)
    assert "__pregel_durability" not in saved.config["configurable"]
    assert "__pregel_durability" not in saved.metadata
