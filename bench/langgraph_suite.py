"""LangGraph's own benchmark workloads, as re-created in ``../shared/langgraph-bench``.

Kept in sync with ``workloads.py`` there (same names, same graphs, same inputs), so
``python -m bench --instructions`` measures exactly what the side-by-side comparison
(``compare.py``) times. Written against the public API only, looked up by importlib, so
the same code runs on ``stategraph`` and on ``langgraph``.
"""

import atexit
import operator
import os
import random
import shutil
import sqlite3
import string
import tempfile
import uuid
from dataclasses import dataclass, field
from functools import partial
from importlib import import_module
from typing import Annotated, Any, Optional, TypedDict

RECURSION_LIMIT = 1_000_000_000


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def _graph_mod(lib: str):
    return import_module(f"{lib}.graph")


def make_checkpointer(lib: str, kind: Optional[str]):
    """None, "memory" (InMemorySaver) or "sqlite" (SqliteSaver, temp file)."""
    if kind is None:
        return None
    if kind == "memory":
        return import_module(f"{lib}.checkpoint.memory").InMemorySaver()
    if kind == "sqlite":
        saver_cls = import_module(f"{lib}.checkpoint.sqlite").SqliteSaver
        tmpdir = tempfile.mkdtemp(prefix="graphbench-sqlite-")
        atexit.register(shutil.rmtree, tmpdir, True)  # runs after conn.close
        conn = sqlite3.connect(os.path.join(tmpdir, "checkpoints.sqlite"), check_same_thread=False)
        atexit.register(conn.close)
        return saver_cls(conn)
    raise ValueError(f"unknown checkpointer kind {kind!r}")


def new_config() -> dict:
    return {
        "recursion_limit": RECURSION_LIMIT,
        "configurable": {"thread_id": uuid.uuid4().hex},
    }


def fresh_config(config: dict) -> dict:
    """Copy of ``config`` with a new thread_id (one thread per timed run)."""
    out = dict(config)
    out["configurable"] = {**config.get("configurable", {}), "thread_id": uuid.uuid4().hex}
    return out


def _asyncify(fn, name: Optional[str] = None):
    """Wrap a one-argument sync callable into an ``async def`` with one arg."""

    async def node(state):
        return fn(state)

    node.__name__ = name or getattr(fn, "__name__", "node")
    node.__qualname__ = node.__name__
    return node


def _nested_payload(outer: int, inner: int) -> dict:
    """A dict of dicts of 25-element lists, like LangGraph's wide-state input."""
    return {
        str(i) * 10: {
            str(j) * 10: ["hi?" * 10, True, 1, 6327816386138, None] * 5 for j in range(inner)
        }
        for i in range(outer)
    }


def _tool_calls(msg: Any) -> list:
    if isinstance(msg, dict):
        return msg.get("tool_calls") or []
    return getattr(msg, "tool_calls", None) or []


# --------------------------------------------------------------------------
# sequential: a chain of N no-op nodes over MessagesState
# --------------------------------------------------------------------------


def _sequential(lib: str, n_nodes: int, checkpointer: Optional[str], aio: bool):
    g = _graph_mod(lib)
    builder = g.StateGraph(g.MessagesState)

    if aio:

        async def noop(state):
            return None

    else:

        def noop(state):
            return None

    previous = g.START
    for i in range(n_nodes):
        name = f"step_{i}"
        builder.add_node(name, noop)
        builder.add_edge(previous, name)
        previous = name
    builder.add_edge(previous, g.END)

    graph = builder.compile(checkpointer=make_checkpointer(lib, checkpointer))
    return graph, {"messages": []}, new_config()


def sequential_10(lib, checkpointer=None, aio=False):
    return _sequential(lib, 10, checkpointer, aio)


def sequential_1000(lib, checkpointer=None, aio=False):
    return _sequential(lib, 1000, checkpointer, aio)


# --------------------------------------------------------------------------
# fan-out: START --Send x N--> compiled subgraph (input/output schemas)
# subgraph: edit -> generate -> bump (loops until 10 " a" suffixes)
# --------------------------------------------------------------------------


def _fanout_to_subgraph(lib: str, n_subjects: int, checkpointer, aio: bool):
    g = _graph_mod(lib)
    Send = import_module(f"{lib}.types").Send
    END = g.END

    class ParentState(TypedDict):
        subjects: list
        jokes: Annotated[list, operator.add]

    class JokeIn(TypedDict):
        subject: str

    class JokeOut(TypedDict):
        jokes: list

    class JokeState(JokeIn, JokeOut):
        pass

    suffix = " a" * 10

    # Node bodies. The first-parameter annotation is part of the workload:
    # LangGraph uses it to narrow what each subgraph node receives.
    def s_edit(state: JokeIn):
        return {"subject": f"{state['subject']} - hohoho"}

    def s_generate(state: JokeIn):
        return {"jokes": [f"Joke about {state['subject']}"]}

    def s_bump(state: JokeOut):
        return {"jokes": [state["jokes"][0] + " a"]}

    def s_again(state: JokeOut):
        return END if state["jokes"][0].endswith(suffix) else "bump"

    def s_fan(state: ParentState):
        return [Send("generate_joke", {"subject": s}) for s in state["subjects"]]

    if aio:

        async def edit(state: JokeIn):
            return s_edit(state)

        async def generate(state: JokeIn):
            return s_generate(state)

        async def bump(state: JokeOut):
            return s_bump(state)

        async def again(state: JokeOut):
            return s_again(state)

        async def fan(state: ParentState):
            return s_fan(state)

    else:
        edit, generate, bump, again, fan = s_edit, s_generate, s_bump, s_again, s_fan

    sub = g.StateGraph(JokeState, input_schema=JokeIn, output_schema=JokeOut)
    sub.add_node("edit", edit)
    sub.add_node("generate", generate)
    sub.add_node("bump", bump)
    sub.add_edge(g.START, "edit")
    sub.add_edge("edit", "generate")
    sub.add_edge("generate", "bump")
    sub.add_edge("generate", g.END)
    sub.add_conditional_edges("bump", again)
    joke_graph = sub.compile()

    parent = g.StateGraph(ParentState)
    parent.add_node("generate_joke", joke_graph)
    parent.add_conditional_edges(g.START, fan)
    parent.add_edge("generate_joke", g.END)
    graph = parent.compile(checkpointer=make_checkpointer(lib, checkpointer))

    rng = random.Random(n_subjects)
    # like LangGraph's bench: each subject is a *list* of 1000 letters
    data = {"subjects": [rng.choices(string.ascii_lowercase, k=1000) for _ in range(n_subjects)]}
    return graph, data, new_config()


def fanout_to_subgraph_10x(lib, checkpointer=None, aio=False):
    return _fanout_to_subgraph(lib, 10, checkpointer, aio)


def fanout_to_subgraph_100x(lib, checkpointer=None, aio=False):
    return _fanout_to_subgraph(lib, 100, checkpointer, aio)


# --------------------------------------------------------------------------
# wide states: 15 channels with assorted reducers, 6 nodes with a join,
# looping until len(messages) > n.  Three flavours of state schema.
# --------------------------------------------------------------------------

_LIST_KEYS = frozenset(
    {"messages", "trigger_events", "categorizations", "responses", "memory_docs", "relevant_rules"}
)
_DICT_KEYS = frozenset(
    {"user_info", "crm_info", "slack_participants", "notified_assignees", "autoresponse", "issue"}
)

# (node, channel it reads, channels it writes)
_WIDE_NODES = (
    ("one", "messages", ("trigger_events", "primary_issue_medium")),
    ("two", "trigger_events", ("autoresponse", "issue")),
    ("three", "autoresponse", ("relevant_rules",)),
    ("four", "trigger_events", ("categorizations", "responses", "memory_docs")),
    (
        "five",
        "categorizations",
        (
            "user_info",
            "crm_info",
            "email_thread_id",
            "slack_participants",
            "bot_id",
            "notified_assignees",
        ),
    ),
    ("six", "responses", ("messages",)),
)


def _keep_new_if_truthy(old, new):
    return new or old


def _take_new(old, new):
    return new


def _keep_new_if_not_none(old, new):
    return new if new is not None else old


def _wide_update(getter, n: int, read: str, write, state) -> dict:
    """Read one channel, write several: lists get the whole value, dict
    channels get the last element, anything else a fresh random string of
    length n."""
    value = getter(state, read)
    if isinstance(value, str):
        value = {value: value}
    as_list = value if isinstance(value, list) else [value]
    last = value[-1] if isinstance(value, list) else value
    out = {}
    for key in write:
        if key in _LIST_KEYS:
            out[key] = as_list
        elif key in _DICT_KEYS:
            out[key] = last
        else:
            out[key] = "".join(random.choice(string.ascii_lowercase) for _ in range(n))
    return out


def _wire_wide(lib: str, schema, getter, n: int, checkpointer, aio: bool):
    g = _graph_mod(lib)
    END = g.END
    builder = g.StateGraph(schema)
    for name, read, write in _WIDE_NODES:
        fn = partial(_wide_update, getter, n, read, write)
        builder.add_node(name, _asyncify(fn, name) if aio else fn)
    builder.add_edge(g.START, "one")
    builder.add_edge("one", "two")
    builder.add_edge("two", "three")
    builder.add_edge("two", "four")
    builder.add_edge(["three", "four"], "five")
    builder.add_edge("five", "six")

    def done(state):
        return END if len(getter(state, "messages")) > n else "one"

    builder.add_conditional_edges("six", _asyncify(done, "done") if aio else done)
    graph = builder.compile(checkpointer=make_checkpointer(lib, checkpointer))
    return graph, {"messages": [_nested_payload(5, 5)]}, new_config()


def _attr(state, key):
    return getattr(state, key)


def _item(state, key):
    return state.get(key)


def wide_state_25x300(lib, checkpointer=None, aio=False):
    """Dataclass state with Annotated reducers (25 = 5x5 payload, n = 300)."""
    n = 300

    @dataclass(kw_only=True)
    class WideState:
        messages: Annotated[list, operator.add] = field(default_factory=list)
        trigger_events: Annotated[list, operator.add] = field(default_factory=list)
        primary_issue_medium: Annotated[str, _keep_new_if_truthy] = "email"
        autoresponse: Annotated[Optional[dict], _take_new] = None
        issue: Annotated[Optional[dict], _keep_new_if_truthy] = None
        relevant_rules: Optional[list[dict]] = None
        memory_docs: Optional[list[dict]] = None
        categorizations: Annotated[list[dict], operator.add] = field(default_factory=list)
        responses: Annotated[list[dict], operator.add] = field(default_factory=list)
        user_info: Annotated[Optional[dict], _keep_new_if_not_none] = None
        crm_info: Annotated[Optional[dict], _keep_new_if_not_none] = None
        email_thread_id: Annotated[Optional[str], _keep_new_if_not_none] = None
        slack_participants: Annotated[dict, operator.or_] = field(default_factory=dict)
        bot_id: Optional[str] = None
        notified_assignees: Annotated[dict, operator.or_] = field(default_factory=dict)

    return _wire_wide(lib, WideState, _attr, n, checkpointer, aio)


def wide_dict_25x300(lib, checkpointer=None, aio=False):
    """Same graph as wide_state, TypedDict state schema."""
    n = 300

    class WideDict(TypedDict):
        messages: Annotated[list, operator.add]
        trigger_events: Annotated[list, operator.add]
        primary_issue_medium: Annotated[str, _keep_new_if_truthy]
        autoresponse: Annotated[Optional[dict], _take_new]
        issue: Annotated[Optional[dict], _keep_new_if_truthy]
        relevant_rules: Optional[list[dict]]
        memory_docs: Optional[list[dict]]
        categorizations: Annotated[list[dict], operator.add]
        responses: Annotated[list[dict], operator.add]
        user_info: Annotated[Optional[dict], _keep_new_if_not_none]
        crm_info: Annotated[Optional[dict], _keep_new_if_not_none]
        email_thread_id: Annotated[Optional[str], _keep_new_if_not_none]
        slack_participants: Annotated[dict, operator.or_]
        bot_id: Optional[str]
        notified_assignees: Annotated[dict, operator.or_]

    return _wire_wide(lib, WideDict, _item, n, checkpointer, aio)


def pydantic_state_25x300(lib, checkpointer=None, aio=False):
    """Same graph, pydantic BaseModel state with an 'after' validator per field."""
    from pydantic import BaseModel, Field, field_validator

    n = 300

    def _str_keys(d, what):
        if not all(isinstance(k, str) for k in d):
            raise TypeError(f"{what}: keys must be str")

    def _list_of_dicts(v, what, optional):
        if v is None and optional:
            return v
        if not isinstance(v, list):
            raise TypeError(f"{what}: expected list")
        for item in v:
            if not isinstance(item, dict):
                raise TypeError(f"{what}: expected list of dicts")
            _str_keys(item, what)
        return v

    class WideModel(BaseModel):
        messages: Annotated[list, operator.add] = Field(default_factory=list)
        trigger_events: Annotated[list, operator.add] = Field(default_factory=list)
        primary_issue_medium: Annotated[str, _keep_new_if_truthy] = Field(default="email")
        autoresponse: Annotated[Optional[dict], _take_new] = Field(default=None)
        issue: Annotated[Optional[dict], _keep_new_if_truthy] = Field(default=None)
        relevant_rules: Optional[list[dict]] = Field(default=None)
        memory_docs: Optional[list[dict]] = Field(default=None)
        categorizations: Annotated[list[dict], operator.add] = Field(default_factory=list)
        responses: Annotated[list[dict], operator.add] = Field(default_factory=list)
        user_info: Annotated[Optional[dict], _keep_new_if_not_none] = Field(default=None)
        crm_info: Annotated[Optional[dict], _keep_new_if_not_none] = Field(default=None)
        email_thread_id: Annotated[Optional[str], _keep_new_if_not_none] = Field(default=None)
        slack_participants: Annotated[dict, operator.or_] = Field(default_factory=dict)
        bot_id: Optional[str] = Field(default=None)
        notified_assignees: Annotated[dict, operator.or_] = Field(default_factory=dict)

        # one "after" validator per field (pydantic calls it once per field)
        @field_validator("messages", "trigger_events", "categorizations", "responses", mode="after")
        @classmethod
        def _check_lists(cls, v, info):
            return _list_of_dicts(v, info.field_name, optional=False)

        @field_validator("relevant_rules", "memory_docs", mode="after")
        @classmethod
        def _check_optional_lists(cls, v, info):
            return _list_of_dicts(v, info.field_name, optional=True)

        @field_validator("autoresponse", "issue", "user_info", "crm_info", mode="after")
        @classmethod
        def _check_optional_dicts(cls, v, info):
            if v is not None and not isinstance(v, dict):
                raise TypeError(f"{info.field_name}: expected dict or None")
            return v

        @field_validator("slack_participants", "notified_assignees", mode="after")
        @classmethod
        def _check_dicts(cls, v, info):
            if not isinstance(v, dict):
                raise TypeError(f"{info.field_name}: expected dict")
            _str_keys(v, info.field_name)
            return v

        @field_validator("primary_issue_medium", mode="after")
        @classmethod
        def _check_str(cls, v, info):
            if not isinstance(v, str):
                raise TypeError(f"{info.field_name}: expected str")
            return v

        @field_validator("email_thread_id", "bot_id", mode="after")
        @classmethod
        def _check_optional_str(cls, v, info):
            if v is not None and not isinstance(v, str):
                raise TypeError(f"{info.field_name}: expected str or None")
            return v

    return _wire_wide(lib, WideModel, _attr, n, checkpointer, aio)


# --------------------------------------------------------------------------
# react-style agent loop built by hand over MessagesState:
#   START -> agent -(has tool_calls?)-> tools -> agent ... -> END
# The "model" is a script of N tool-calling AI messages and a final answer;
# the tool echoes its (3.6 kB) query ten times, as in LangGraph's bench.
# --------------------------------------------------------------------------


def _react_agent(lib: str, rounds: int, checkpointer, aio: bool):
    g = _graph_mod(lib)
    END = g.END
    rng = random.Random(rounds)

    def uid() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    tool_name = "lookup_" + uid().replace("-", "")
    script = [
        {
            "role": "assistant",
            "content": "",
            "id": uid(),
            "tool_calls": [{"id": uid(), "name": tool_name, "args": {"query": uid() * 100}}],
        }
        for _ in range(rounds)
    ]
    script.append({"role": "assistant", "content": "answer" * 100, "id": uid()})

    def lookup(query: str) -> str:
        return f"result for query: {query}" * 10

    def agent(state):
        # the conversation is [human, (ai, tool) * k]: answer with turn k
        turn = min((len(state["messages"]) - 1) // 2, len(script) - 1)
        return {"messages": [dict(script[turn])]}

    def tools(state):
        replies = []
        for call in _tool_calls(state["messages"][-1]):
            replies.append(
                {
                    "role": "tool",
                    "content": lookup(**call["args"]),
                    "tool_call_id": call["id"],
                    "name": call["name"],
                    "id": "tool-" + call["id"],
                }
            )
        return {"messages": replies}

    def should_continue(state):
        return "tools" if _tool_calls(state["messages"][-1]) else END

    builder = g.StateGraph(g.MessagesState)
    builder.add_node("agent", _asyncify(agent, "agent") if aio else agent)
    builder.add_node("tools", _asyncify(tools, "tools") if aio else tools)
    builder.add_edge(g.START, "agent")
    builder.add_conditional_edges(
        "agent",
        _asyncify(should_continue, "should_continue") if aio else should_continue,
        ["tools", END],
    )
    builder.add_edge("tools", "agent")
    graph = builder.compile(checkpointer=make_checkpointer(lib, checkpointer))
    data = {"messages": [{"role": "user", "content": "hi?", "id": "human-0"}]}
    return graph, data, new_config()


def react_agent_10x(lib, checkpointer=None, aio=False):
    return _react_agent(lib, 10, checkpointer, aio)


def react_agent_100x(lib, checkpointer=None, aio=False):
    return _react_agent(lib, 100, checkpointer, aio)


# --------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------

BASE = {
    "sequential_10": sequential_10,
    "sequential_1000": sequential_1000,
    "fanout_to_subgraph_10x": fanout_to_subgraph_10x,
    "fanout_to_subgraph_100x": fanout_to_subgraph_100x,
    "wide_state_25x300": wide_state_25x300,
    "wide_dict_25x300": wide_dict_25x300,
    "pydantic_state_25x300": pydantic_state_25x300,
    "react_agent_10x": react_agent_10x,
    "react_agent_100x": react_agent_100x,
}
SQLITE_BASES = ("sequential_1000", "react_agent_100x")
SUFFIXES = {"": None, "_checkpoint": "memory", "_sqlite": "sqlite"}

# sync (graph.stream) workloads, in run order
WORKLOADS = (
    [name for name in BASE]
    + [name + "_checkpoint" for name in BASE]
    + [name + "_sqlite" for name in SQLITE_BASES]
)
# async (graph.astream) workloads; run.py reports them as NAME_async
ASYNC_WORKLOADS = (
    "sequential_1000",
    "sequential_1000_checkpoint",
    "fanout_to_subgraph_100x",
    "fanout_to_subgraph_100x_checkpoint",
)


def parse(name: str):
    """'react_agent_100x_checkpoint' -> (react_agent_100x, 'memory')."""
    for suffix in ("_checkpoint", "_sqlite"):
        if name.endswith(suffix) and name[: -len(suffix)] in BASE:
            return BASE[name[: -len(suffix)]], SUFFIXES[suffix]
    if name in BASE:
        return BASE[name], None
    raise KeyError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}")


def build(name: str, lib: str, aio: bool = False):
    fn, kind = parse(name)
    if kind == "sqlite" and aio:
        raise ValueError("SqliteSaver is sync-only; no async sqlite workloads")
    return fn(lib, checkpointer=kind, aio=aio)


def stream_kwargs(name: str) -> dict:
    """Extra keyword arguments for graph.stream/astream.

    Checkpointed runs use durability="exit" (LangGraph's bench) or "sync" for
    the sqlite variants.  Without a checkpointer nothing is passed: LangGraph
    1.2 warns on every run if durability is given without a checkpointer.
    """
    _, kind = parse(name)
    if kind == "memory":
        return {"durability": "exit"}
    if kind == "sqlite":
        return {"durability": "sync"}
    return {}
