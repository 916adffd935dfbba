"""Small API details a ported LangGraph app relies on: deprecated spellings that still
work (with LangGraph's warning classes), config keys given at the top level, and clear
errors for arguments and inputs that cannot be right."""

from __future__ import annotations

import importlib
import operator
import sys
from typing import Annotated, Any

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from stategraph.channels import LastValue
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.errors import InvalidUpdateError, NodeInterrupt
from stategraph.func import entrypoint, task
from stategraph.graph import END, START, StateGraph
from stategraph.pregel import NodeBuilder, Pregel
from stategraph.types import GraphOutput, Interrupt, RetryPolicy
from stategraph.warnings import (
    LangGraphDeprecatedSinceV05,
    LangGraphDeprecatedSinceV10,
    LangGraphDeprecatedSinceV11,
    LangGraphDeprecationWarning,
)


class Counter(TypedDict):
    n: int
    seen: Annotated[list[str], operator.add]


def _bump(state: Counter) -> dict[str, Any]:
    return {"n": state["n"] + 1, "seen": ["bump"]}


def _graph(**compile_kwargs: Any) -> Any:
    builder = StateGraph(Counter)
    builder.add_node("bump", _bump)
    builder.add_edge(START, "bump")
    return builder.compile(**compile_kwargs)


def test_warning_classes_say_when_the_spelling_goes_away() -> None:
    warning = LangGraphDeprecatedSinceV10("`x` is deprecated")
    assert isinstance(warning, LangGraphDeprecationWarning)
    assert isinstance(warning, DeprecationWarning)
    assert (warning.since, warning.expected_removal) == ((1, 0), (2, 0))
    assert str(warning) == "`x` is deprecated. Deprecated in LangGraph V1.0 to be removed in V2.0."
    assert LangGraphDeprecatedSinceV05("y").since == (0, 5)
    assert LangGraphDeprecatedSinceV11("z").expected_removal == (3, 0)


def test_unknown_run_arguments_raise_naming_them() -> None:
    graph = _graph()
    with pytest.raises(TypeError, match="'bogus_option'"):
        graph.invoke({"n": 0}, bogus_option=True)
    with pytest.raises(TypeError, match="'strem_mode'"):
        list(graph.stream({"n": 0}, strem_mode="values"))
    # the arguments invoke passes on to stream are accepted
    assert graph.invoke({"n": 0}, debug=False, subgraphs=False)["n"] == 1


async def test_unknown_run_arguments_raise_in_async_too() -> None:
    graph = _graph()
    with pytest.raises(TypeError, match="'bogus_option'"):
        await graph.ainvoke({"n": 0}, bogus_option=True)
    with pytest.raises(TypeError, match="'bogus_option'"):
        async for _ in graph.astream({"n": 0}, bogus_option=True):
            pass


def test_checkpoint_during_is_the_old_spelling_of_durability() -> None:
    saver = InMemorySaver()
    graph = _graph(checkpointer=saver)
    with pytest.warns(LangGraphDeprecatedSinceV10, match="durability"):
        graph.invoke({"n": 0}, {"configurable": {"thread_id": "t"}}, checkpoint_during=False)
    # durability "exit": only the final checkpoint of the run is saved
    assert len(list(saver.list({"configurable": {"thread_id": "t"}}))) == 1


def test_top_level_config_keys_go_to_configurable() -> None:
    graph = _graph(checkpointer=InMemorySaver())
    assert graph.invoke({"n": 1, "seen": []}, {"thread_id": "top"}) == {"n": 2, "seen": ["bump"]}
    state = graph.get_state({"thread_id": "top"})
    assert state.values == {"n": 2, "seen": ["bump"]}
    assert state.config["configurable"]["thread_id"] == "top"
    graph.update_state({"thread_id": "top"}, {"seen": ["manual"]})
    assert graph.get_state({"configurable": {"thread_id": "top"}}).values["seen"] == [
        "bump",
        "manual",
    ]


def test_an_input_that_is_not_a_dict_is_reported_as_the_input() -> None:
    with pytest.raises(InvalidUpdateError, match="Expected dict, got 'hello'"):
        _graph().invoke("hello")


def test_copy_takes_a_mapping_of_attributes() -> None:
    graph = _graph()
    renamed = graph.copy(update={"name": "renamed"})
    assert renamed.name == "renamed"
    assert graph.name == "LangGraph"
    assert not hasattr(renamed, "update") or callable(renamed.update)
    assert graph.copy(name="kw").name == "kw"


def test_a_node_that_is_not_callable_is_rejected_when_added() -> None:
    builder = StateGraph(Counter)
    with pytest.raises(TypeError, match=r"'bad'.*int"):
        builder.add_node("bad", 42)
    assert "bad" not in builder.nodes


def test_old_argument_names_warn_and_still_work() -> None:
    policy = RetryPolicy(max_attempts=2)
    builder = StateGraph(Counter)
    with pytest.warns(LangGraphDeprecatedSinceV05, match="`retry` is deprecated"):
        builder.add_node("bump", _bump, retry=policy)
    assert builder.nodes["bump"].retry_policy is policy
    with pytest.warns(LangGraphDeprecatedSinceV05, match="`input` is deprecated"):
        builder.add_node("other", _bump, input=Counter)
    with pytest.warns(LangGraphDeprecatedSinceV05, match="`input` is deprecated"):
        StateGraph(Counter, input=Counter)
    with pytest.warns(LangGraphDeprecatedSinceV05, match="`output` is deprecated"):
        StateGraph(Counter, output=Counter)
    with pytest.warns(LangGraphDeprecatedSinceV10, match="`config_schema` is deprecated"):
        assert StateGraph(Counter, config_schema=Counter).context_schema is Counter
    with pytest.raises(TypeError, match="nonsense"):
        builder.add_node("third", _bump, nonsense=1)


def test_task_and_entrypoint_accept_the_old_retry_name() -> None:
    with pytest.warns(LangGraphDeprecatedSinceV05, match="`retry` is deprecated"):

        @task(retry=RetryPolicy())
        def double(x: int) -> int:
            return x * 2

    with pytest.warns(LangGraphDeprecatedSinceV05, match="`retry` is deprecated"):

        @entrypoint(retry=RetryPolicy())
        def run(x: int) -> int:
            return double(x).result()

    assert run.invoke(4) == 8
    with pytest.warns(LangGraphDeprecatedSinceV10, match="`config_schema` is deprecated"):

        @entrypoint(config_schema=Counter)
        def other(x: int) -> int:
            return x

    assert other.context_schema is Counter


def test_pregel_config_type_is_the_old_context_schema() -> None:
    with pytest.warns(LangGraphDeprecatedSinceV10, match="`config_type` is deprecated"):
        graph = Pregel(
            nodes={"one": NodeBuilder().subscribe_only("a").write_to("b")},
            channels={"a": LastValue(int), "b": LastValue(int)},
            input_channels="a",
            output_channels="b",
            config_type=Counter,
        )
    assert graph.context_schema is Counter


def test_waiting_edge_to_end() -> None:
    builder = StateGraph(Counter)
    builder.add_node("left", lambda s: {"seen": ["left"]})
    builder.add_node("right", lambda s: {"seen": ["right"]})
    builder.add_edge(START, "left")
    builder.add_edge(START, "right")
    builder.add_edge(["left", "right"], END)
    assert builder.compile().invoke({"n": 0, "seen": []}) == {"n": 0, "seen": ["left", "right"]}


def test_deprecated_names_and_accessors() -> None:
    with pytest.warns(LangGraphDeprecatedSinceV10, match="`interrupt_id` is deprecated"):
        assert Interrupt("q", id="abc").interrupt_id == "abc"
    with pytest.warns(LangGraphDeprecatedSinceV10, match="NodeInterrupt is deprecated"):
        assert NodeInterrupt("stop").interrupts[0].value == "stop"
    output = GraphOutput(value={"k": 1}, interrupts=(Interrupt("q", id="i"),))
    with pytest.warns(LangGraphDeprecatedSinceV11, match=r"result\[key\]"):
        assert output["k"] == 1
    with pytest.warns(LangGraphDeprecatedSinceV11, match=r"result\[key\]"):
        assert output["__interrupt__"] == output.interrupts
    with pytest.warns(LangGraphDeprecatedSinceV11, match="key in result"):
        assert "k" in output
    with pytest.warns(LangGraphDeprecatedSinceV10, match="Importing Send"):
        from stategraph.constants import Send
    from stategraph.types import Send as TypesSend

    assert Send is TypesSend
    sys.modules.pop("stategraph.pregel.types", None)
    with pytest.warns(LangGraphDeprecatedSinceV10, match="stategraph.pregel.types"):
        legacy = importlib.import_module("stategraph.pregel.types")
    assert legacy.RetryPolicy is RetryPolicy


def test_message_graph_is_a_deprecated_list_of_messages_graph() -> None:
    from stategraph.graph.message import MessageGraph

    with pytest.warns(LangGraphDeprecatedSinceV10, match="MessageGraph is deprecated"):
        builder = MessageGraph()
    builder.add_node("reply", lambda messages: [("ai", f"{len(messages)} so far")])
    builder.add_edge(START, "reply")
    out = builder.compile().invoke([("user", "hi")])
    assert [(m.type, m.content) for m in out] == [("human", "hi"), ("ai", "1 so far")]


def test_a_compiled_graph_is_still_a_valid_node() -> None:
    inner = _graph()
    builder = StateGraph(Counter)
    builder.add_node("inner", inner)
    builder.add_edge(START, "inner")
    assert builder.compile().invoke({"n": 1, "seen": []}) == {"n": 2, "seen": ["bump"]}


def test_batch_as_completed_yields_each_index_once() -> None:
    graph = _graph()
    inputs = [{"n": i, "seen": []} for i in range(4)]
    done = dict(graph.batch_as_completed(inputs))
    assert done == {i: {"n": i + 1, "seen": ["bump"]} for i in range(4)}
    failing = dict(graph.batch_as_completed([{"n": 0}, "bad"], return_exceptions=True))
    assert isinstance(failing[1], InvalidUpdateError)


async def test_abatch_as_completed_and_aget_graph() -> None:
    graph = _graph()
    got = {i: out async for i, out in graph.abatch_as_completed([{"n": 1}, {"n": 5}])}
    assert got == {0: {"n": 2, "seen": ["bump"]}, 1: {"n": 6, "seen": ["bump"]}}
    drawn = await graph.aget_graph()
    assert set(drawn.nodes) == set(graph.get_graph().nodes)


def test_keyword_only_value_types() -> None:
    from stategraph.types import CachePolicy, Overwrite, TimeoutPolicy

    with pytest.raises(TypeError):
        CachePolicy(lambda x: "k")  # type: ignore[misc]
    with pytest.raises(TypeError):
        TimeoutPolicy(1.0)  # type: ignore[misc]
    assert CachePolicy(ttl=5).ttl == 5
    assert Overwrite([1]).type == "__overwrite__"
    with pytest.raises(TypeError):
        entrypoint.final(1, 2)  # type: ignore[misc]


def test_a_dict_context_becomes_the_context_schema() -> None:
    import dataclasses

    from pydantic import BaseModel, ValidationError

    from stategraph.runtime import Runtime

    @dataclasses.dataclass
    class Who:
        user: str
        level: int = 1

    class WhoModel(BaseModel):
        user: str

    def node(state: Counter, runtime: Runtime[Any]) -> dict[str, Any]:
        return {"seen": [f"{type(runtime.context).__name__}:{runtime.context.user}"]}

    for schema in (Who, WhoModel):
        builder = StateGraph(Counter, context_schema=schema)
        builder.add_node("node", node)
        builder.add_edge(START, "node")
        graph = builder.compile()
        out = graph.invoke({"n": 0, "seen": []}, context={"user": "ann"})
        assert out["seen"] == [f"{schema.__name__}:ann"]
    with pytest.raises(TypeError, match="Who"):
        _with_context(Who).invoke({"n": 0}, context={"nobody": 1})
    with pytest.raises(ValidationError):
        _with_context(WhoModel).invoke({"n": 0}, context={"nobody": 1})


def _with_context(schema: Any) -> Any:
    builder = StateGraph(Counter, context_schema=schema)
    builder.add_node("bump", _bump)
    builder.add_edge(START, "bump")
    return builder.compile()


def test_pregel_map_runs_a_graph_on_each_item_inside_a_node() -> None:
    from stategraph.channels import Topic

    inner = Pregel(
        nodes={"inc": NodeBuilder().subscribe_only("x").do(lambda v: v + 1).write_to("y")},
        channels={"x": LastValue(int), "y": LastValue(int)},
        input_channels="x",
        output_channels="y",
    )
    outer = Pregel(
        nodes={
            "split": NodeBuilder().subscribe_only("x").do(lambda v: [v, v * 10]).write_to("parts"),
            "each": NodeBuilder().subscribe_only("parts").do(inner.map()).write_to("mapped"),
            "total": NodeBuilder().subscribe_only("mapped").do(sum).write_to("y"),
        },
        channels={
            "x": LastValue(int),
            "parts": Topic(int),
            "mapped": LastValue(list),
            "y": LastValue(int),
        },
        input_channels="x",
        output_channels="y",
    )
    assert inner.map()([1, 2]) == [2, 3]
    assert outer.invoke(2) == 3 + 21
    outer.checkpointer = InMemorySaver()
    assert outer.invoke(2, {"configurable": {"thread_id": "m"}}) == 24


def test_pregel_node_copy_replaces_attributes() -> None:
    graph = _graph()
    node = graph.nodes["bump"]
    tagged = node.copy({"tags": ["t"]})
    assert tagged.tags == ["t"]
    assert node.tags == []
    assert tagged.triggers == node.triggers
    with pytest.raises(ValueError, match="nope"):
        node.copy({"nope": 1})


def test_bare_entrypoint_final_annotation_means_any_output() -> None:
    @entrypoint()
    def keep(value: int, *, previous: Any = None) -> entrypoint.final:  # type: ignore[type-arg]
        return entrypoint.final(value="out", save=value)

    assert keep.get_output_jsonschema() == {"title": "LangGraphOutput"}
    assert keep.invoke(1) == "out"


class Inner(BaseModel):
    depth: int


class Research(BaseModel):
    query: str
    inner: Inner
    docs: Annotated[list[str], operator.add]


class Ask(BaseModel):
    text: str


def test_pydantic_input_may_leave_out_required_reducer_keys() -> None:
    builder = StateGraph(Research)
    builder.add_node("find", lambda s: {"docs": [f"{s.query}:{s.inner.depth}"]})
    builder.add_edge(START, "find")
    out = builder.compile().invoke({"query": "q", "inner": {"depth": 2}})
    # the reducer key starts empty; the nested model is stored as it was given
    assert out == {"query": "q", "inner": {"depth": 2}, "docs": ["q:2"]}


def test_dataclass_input_may_leave_out_reducer_keys() -> None:
    import dataclasses

    @dataclasses.dataclass
    class Notes:
        title: str
        lines: Annotated[list[str], operator.add]

    builder = StateGraph(Notes)
    builder.add_node("write", lambda s: {"lines": [s.title.upper()]})
    builder.add_edge(START, "write")
    assert builder.compile().invoke({"title": "t"}) == {"title": "t", "lines": ["T"]}


async def test_aupdate_state_awaits_async_routing_functions() -> None:
    async def route(state: Counter) -> str:
        return "b" if state["n"] > 5 else END

    builder = StateGraph(Counter)
    builder.add_node("a", _bump)
    builder.add_node("b", _bump)
    builder.add_edge(START, "a")
    builder.add_conditional_edges("a", route, ["b", END])
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "r"}}
    await graph.ainvoke({"n": 0, "seen": []}, config)
    await graph.aupdate_state(config, {"n": 10}, as_node="a")
    assert (await graph.aget_state(config)).next == ("b",)
    with pytest.raises(TypeError, match="aupdate_state"):
        graph.update_state(config, {"n": 10}, as_node="a")


def test_entrypoint_input_model_survives_a_resume() -> None:
    from stategraph.types import Command, interrupt

    @entrypoint(checkpointer=InMemorySaver())
    def ask(question: Ask) -> str:
        answer = interrupt("answer?")
        assert isinstance(question, Ask)
        return f"{question.text}={answer}"

    config = {"configurable": {"thread_id": "e"}}
    ask.invoke(Ask(text="q"), config)
    assert ask.invoke(Command(resume="a"), config) == "q=a"


def test_builder_node_spec_exposes_its_action() -> None:
    class Counting:
        def __init__(self) -> None:
            self.calls = 0

        def __call__(self, state: Counter) -> dict[str, Any]:
            self.calls += 1
            return {"n": state["n"] + 1}

    builder = StateGraph(Counter)
    builder.add_node("count", Counting())
    builder.add_edge(START, "count")
    builder.compile().invoke({"n": 0, "seen": []})
    assert builder.nodes["count"].runnable.func.calls == 1
    assert builder.nodes["count"].runnable.name == "count"


def test_send_tasks_have_langgraph_paths() -> None:
    from stategraph.types import Send

    builder = StateGraph(Counter)
    builder.add_node("fan", lambda s: {})
    builder.add_node("work", lambda s: {"seen": [str(s["n"])]})
    builder.add_edge(START, "fan")
    builder.add_conditional_edges("fan", lambda s: [Send("work", {"n": i}) for i in range(2)])
    graph = builder.compile(checkpointer=InMemorySaver(), interrupt_before=["work"])
    config = {"configurable": {"thread_id": "p"}}
    graph.invoke({"n": 0, "seen": []}, config)
    paths = [t.path for t in graph.get_state(config).tasks]
    assert paths == [("__pregel_push", 0, False), ("__pregel_push", 1, False)]


def test_config_parameter_with_another_annotation_warns() -> None:
    import warnings

    from stategraph.config import RunnableConfig

    def typed_dict(state: Counter, config: dict[str, Any]) -> dict[str, Any]:
        return {"n": len(config)}

    def good(state: Counter, config: RunnableConfig) -> dict[str, Any]:
        return {}

    def optional(state: Counter, config: RunnableConfig | None = None) -> dict[str, Any]:
        return {}

    def untyped(state, config):  # type: ignore[no-untyped-def]
        return {}

    builder = StateGraph(Counter)
    with pytest.warns(UserWarning, match="should be typed as 'RunnableConfig'.*not 'dict"):
        builder.add_node("typed_dict", typed_dict)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        builder.add_node("good", good)
        builder.add_node("optional", optional)
        builder.add_node("untyped", untyped)
    builder.add_edge(START, "typed_dict")
    # the node still gets the config
    assert builder.compile().invoke({"n": 0, "seen": []})["n"] > 0
