"""``add_node`` callables and signatures, and what a node may return."""

import asyncio
import dataclasses
import functools
import operator
import warnings
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from stategraph.errors import ErrorCode, InvalidUpdateError
from stategraph.graph import END, START, StateGraph
from stategraph.runtime import Runtime
from stategraph.store.memory import InMemoryStore
from stategraph.types import Command


class LogState(TypedDict):
    log: Annotated[list, operator.add]


class ABState(TypedDict):
    a: int
    b: int
    log: Annotated[list, operator.add]


@dataclasses.dataclass
class Ctx:
    user: str


# --------------------------------------------------------------------------- callables


def with_config(state, config):
    configurable = config["configurable"]
    return {"log": [f"cfg:{configurable.get('k')}:{config['metadata'].get('langgraph_node')}"]}


def with_runtime(state, runtime: Runtime[Ctx]):
    return {"log": [f"rt:{runtime.context.user}"]}


def with_keywords(state, *, writer, store, config, runtime):
    writer({"custom": 1})
    store.put(("ns",), "k", {"v": 1})
    value = store.get(("ns",), "k").value
    return {"log": [f"kw:{value['v']}:{runtime.context.user}:{config['configurable'].get('k')}"]}


class CallableObject:
    def __call__(self, state):
        return {"log": ["obj"]}


def partial_target(state, *, suffix):
    return {"log": [f"partial:{suffix}"]}


def _signatures_graph() -> Any:
    builder = StateGraph(LogState, context_schema=Ctx)
    builder.add_sequence(
        [
            ("c", with_config),
            ("r", with_runtime),
            ("kw", with_keywords),
            ("o", CallableObject()),
            ("p", functools.partial(partial_target, suffix="x")),
            ("l", lambda s: {"log": [f"lambda:{len(s['log'])}"]}),
        ]
    )
    builder.add_edge(START, "c")
    return builder.compile(store=InMemoryStore())


def test_node_signatures_and_callable_kinds(run):
    graph = _signatures_graph()
    result = run.invoke(graph, {"log": []}, {"configurable": {"k": "v"}}, context=Ctx(user="u"))
    assert result == {
        "log": ["cfg:v:c", "rt:u", "kw:1:u:v", "obj", "partial:x", "lambda:5"],
    }


def test_writer_keyword_feeds_custom_stream(run):
    graph = _signatures_graph()
    chunks = run.stream(
        graph,
        {"log": []},
        {"configurable": {"k": "v"}},
        context=Ctx(user="u"),
        stream_mode="custom",
    )
    assert chunks == [{"custom": 1}]


async def async_node(state):
    await asyncio.sleep(0)
    return {"log": ["async"]}


class AsyncCallable:
    async def __call__(self, state):
        await asyncio.sleep(0)
        return {"log": ["async-obj"]}


async def async_partial_target(state, *, tag):
    return {"log": [f"async-partial:{tag}"]}


async def test_async_nodes_run_under_ainvoke_and_astream():
    builder = StateGraph(LogState)
    builder.add_node(async_node)
    builder.add_node("obj", AsyncCallable())
    builder.add_node("part", functools.partial(async_partial_target, tag="t"))
    builder.add_node("sync", lambda s: {"log": ["sync"]})
    builder.add_edge(START, "async_node")
    builder.add_edge("async_node", "obj")
    builder.add_edge("obj", "part")
    builder.add_edge("part", "sync")
    graph = builder.compile()
    assert list(builder.nodes) == ["async_node", "obj", "part", "sync"]
    assert await graph.ainvoke({"log": []}) == {
        "log": ["async", "async-obj", "async-partial:t", "sync"]
    }
    chunks = [c async for c in graph.astream({"log": []}, stream_mode="updates")]
    assert chunks == [
        {"async_node": {"log": ["async"]}},
        {"obj": {"log": ["async-obj"]}},
        {"part": {"log": ["async-partial:t"]}},
        {"sync": {"log": ["sync"]}},
    ]


def test_async_node_under_sync_invoke_names_the_node():
    builder = StateGraph(LogState)
    builder.add_node("slow_one", async_node)
    builder.add_edge(START, "slow_one")
    with pytest.raises(TypeError, match="slow_one"):
        builder.compile().invoke({"log": []})


def test_add_node_infers_name_from_function():
    def my_step(state):
        return None

    builder = StateGraph(LogState)
    builder.add_node(my_step)
    assert list(builder.nodes) == ["my_step"]


def test_add_node_infers_name_from_callable_object_class():
    # LangGraph names a nameless callable object after its class
    builder = StateGraph(LogState)
    builder.add_node(CallableObject())
    assert list(builder.nodes) == ["CallableObject"]


def test_add_node_metadata_reaches_config(run):
    seen: list[Any] = []

    def node(state, config):
        seen.append(config["metadata"].get("team"))
        return None

    builder = StateGraph(LogState)
    builder.add_node("n", node, metadata={"team": "blue"})
    builder.add_edge(START, "n")
    run.invoke(builder.compile(), {"log": []})
    assert seen == ["blue"]


# --------------------------------------------------------------------------- returns


def _single(schema: Any, fn: Any, **compile_kwargs: Any) -> Any:
    builder = StateGraph(schema)
    builder.add_node("n", fn)
    builder.add_node("z", lambda s: {"b": 5})
    builder.add_edge(START, "n")
    return builder.compile(**compile_kwargs)


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        ({"a": 1}, {"a": 1, "log": []}),
        (None, {"a": 0, "log": []}),
        (Command(update={"a": 1, "log": ["q"]}), {"a": 1, "log": ["q"]}),
        ([Command(update={"a": 1}), Command(update={"b": 2})], {"a": 1, "b": 2, "log": []}),
        ([Command(update={"a": 1}, goto="z")], {"a": 1, "b": 5, "log": []}),
        ([Command(update={"log": ["c"]}), {"a": 3, "log": ["d"]}], {"a": 3, "log": ["c", "d"]}),
    ],
    ids=["dict", "none", "command", "commands", "command-goto", "command-and-dict"],
)
def test_valid_return_values(run, returned, expected):
    graph = _single(ABState, lambda s: returned)
    assert run.invoke(graph, {"a": 0}) == expected


@pytest.mark.parametrize(
    ("returned", "type_name"),
    [(42, "int"), ("x", "str"), ([1], "list"), (({"a": 1},), "tuple"), ({1, 2}, "set")],
)
def test_invalid_return_value(run, returned, type_name):
    graph = _single(ABState, lambda s: returned)
    with pytest.raises(InvalidUpdateError) as info:
        run.invoke(graph, {"a": 0})
    message = str(info.value)
    assert "'n'" in message
    assert type_name in message
    assert ErrorCode.INVALID_GRAPH_NODE_RETURN_VALUE.docs_url in message


@dataclasses.dataclass
class DCState:
    a: int = 0
    b: str = "x"
    log: Annotated[list, operator.add] = dataclasses.field(default_factory=list)


class PMState(BaseModel):
    a: int = 0
    b: str = "x"
    log: Annotated[list, operator.add] = Field(default_factory=list)


def _object_return_graph(schema: Any, fn: Any) -> Any:
    builder = StateGraph(schema)
    builder.add_node("m", lambda s: {"b": "y", "log": ["m"]})
    builder.add_node("n", fn)
    builder.add_edge(START, "m")
    builder.add_edge("m", "n")
    return builder.compile()


def test_return_dataclass_instance_writes_its_fields(run):
    graph = _object_return_graph(DCState, lambda s: DCState(a=s.a + 10))
    # every field of a dataclass is set: b goes back to its default, log gets []
    assert run.invoke(graph, {"a": 1}) == {"a": 11, "b": "x", "log": ["m"]}


def test_return_pydantic_instance_writes_its_fields_with_defaults(run):
    graph = _object_return_graph(PMState, lambda s: PMState(a=s.a + 10))
    # as in LangGraph: every field that is not None is written, defaults included (b
    # goes back to "x"; the default_factory's [] adds nothing to log)
    assert run.invoke(graph, {"a": 1}) == {"a": 11, "b": "x", "log": ["m"]}


def test_return_pydantic_instance_skips_fields_left_none(run):
    class Partial(BaseModel):
        a: int | None = None
        b: str | None = None
        log: Annotated[list, operator.add] = Field(default_factory=list)

    graph = _object_return_graph(Partial, lambda s: Partial(a=5))
    assert run.invoke(graph, {"a": 1}) == {"a": 5, "b": "y", "log": ["m"]}


def test_nested_model_mutated_in_place_is_written(run):
    class Inner(BaseModel):
        depth: int = 0

    class Outer(BaseModel):
        inner: Inner = Field(default_factory=Inner)
        count: int = 0

    def mutate(state: Outer) -> Outer:
        state.inner.depth = 3
        state.count = 1
        return state

    builder = StateGraph(Outer)
    builder.add_node("mutate", mutate)
    builder.add_edge(START, "mutate")
    assert run.invoke(builder.compile(), {"count": 0}) == {"inner": Inner(depth=3), "count": 1}


def test_return_pydantic_copy_writes_all_its_fields(run):
    graph = _object_return_graph(PMState, lambda s: s.model_copy(update={"a": 99}))
    assert run.invoke(graph, {"a": 1}) == {"a": 99, "b": "y", "log": ["m", "m"]}


def test_updates_stream_for_a_list_of_commands_and_dicts(run):
    class State(TypedDict):
        log: Annotated[list, operator.add]
        t: Annotated[list, operator.add]
        other: str

    def mixed(state):
        return [Command(update={"log": ["c1"]}), {"log": ["d"], "other": "z"}]

    builder = StateGraph(State)
    builder.add_node("m", mixed)
    builder.add_edge(START, "m")
    graph = builder.compile()
    assert run.invoke(graph, {"log": []}) == {"log": ["c1", "d"], "t": [], "other": "z"}
    # two writes to the same key in one task: LangGraph lists the writes one by one
    assert run.stream(graph, {"log": []}, stream_mode="updates") == [
        {"m": [{"log": ["c1"]}, {"log": ["d"]}, {"other": "z"}]}
    ]


# --------------------------------------------------------------------------- unknown keys


def test_unknown_key_is_dropped_with_a_warning(run):
    graph = _single(ABState, lambda s: {"a": 1, "zzz": 2})
    with pytest.warns(UserWarning) as record:
        result = run.invoke(graph, {"a": 0})
    assert result == {"a": 1, "log": []}
    messages = [str(w.message) for w in record if "zzz" in str(w.message)]
    assert len(messages) == 1
    assert "'n'" in messages[0]
    assert "'zzz'" in messages[0]


def test_unknown_key_in_command_update_warns(run):
    graph = _single(ABState, lambda s: Command(update={"nope": 1, "b": 4}))
    with pytest.warns(UserWarning, match=r"'n'.*'nope'"):
        result = run.invoke(graph, {"a": 0})
    assert result == {"a": 0, "b": 4, "log": []}


def test_known_keys_do_not_warn(run):
    graph = _single(ABState, lambda s: {"a": 1, "b": 2})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run.invoke(graph, {"a": 0}) == {"a": 1, "b": 2, "log": []}


def test_strict_compile_rejects_unknown_key(run):
    graph = _single(ABState, lambda s: {"a": 1, "zzz": 2}, strict=True)
    with pytest.raises(InvalidUpdateError) as info:
        run.invoke(graph, {"a": 0})
    message = str(info.value)
    assert "'n'" in message
    assert "'zzz'" in message


def test_key_declared_only_by_a_node_schema_is_known(run):
    class Extra(TypedDict):
        scratch: str

    def writer(state):
        return {"scratch": "s", "a": 1}

    def reader(state: Extra):
        return {"b": len(state["scratch"])}

    builder = StateGraph(ABState)
    builder.add_node("writer", writer)
    builder.add_node("reader", reader)
    builder.add_edge(START, "writer")
    builder.add_edge("writer", "reader")
    builder.add_edge("reader", END)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = run.invoke(builder.compile(), {"a": 0})
    assert result == {"a": 1, "b": 1, "log": []}


# --------------------------------------------------------------------------- node input types and options


class PIn(BaseModel):
    x: int


@dataclasses.dataclass
class DIn:
    x: int


class XState(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def pydantic_node(state: PIn):
    return {"log": [type(state).__name__, state.x]}


def dataclass_node(state: DIn):
    return {"log": [type(state).__name__, state.x]}


def runtime_by_name(state, runtime):
    return {"log": [type(runtime).__name__]}


def test_node_schema_kinds_from_first_parameter(run):
    builder = StateGraph(XState)
    builder.add_node("p", pydantic_node)
    builder.add_node("d", dataclass_node)
    builder.add_node("r", runtime_by_name)
    builder.add_edge(START, "p")
    builder.add_edge("p", "d")
    builder.add_edge("d", "r")
    result = run.invoke(builder.compile(), {"x": 3, "log": []})
    assert result == {"x": 3, "log": ["PIn", 3, "DIn", 3, "Runtime"]}


def test_explicit_input_schema_overrides_annotation(run):
    seen: list[Any] = []

    def node(state: XState):
        seen.append(state)
        return None

    builder = StateGraph(XState)
    builder.add_node("n", node, input_schema=DIn)
    builder.add_edge(START, "n")
    run.invoke(builder.compile(), {"x": 4, "log": ["l"]})
    assert seen == [DIn(x=4)]


def test_cache_policy_skips_repeated_work(run):
    from stategraph.cache.memory import InMemoryCache
    from stategraph.types import CachePolicy

    calls: list[int] = []

    def slow(state):
        calls.append(state["x"])
        return {"log": [state["x"] * 2]}

    builder = StateGraph(XState)
    builder.add_node("slow", slow, cache_policy=CachePolicy())
    builder.add_edge(START, "slow")
    graph = builder.compile(cache=InMemoryCache())
    assert run.invoke(graph, {"x": 1}) == {"x": 1, "log": [2]}
    assert run.invoke(graph, {"x": 1}) == {"x": 1, "log": [2]}
    assert run.invoke(graph, {"x": 2}) == {"x": 2, "log": [4]}
    assert calls == [1, 2]
    assert run.stream(graph, {"x": 1}, stream_mode="updates") == [
        {"slow": {"log": [2]}, "__metadata__": {"cached": True}}
    ]
