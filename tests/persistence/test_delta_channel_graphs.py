"""``DeltaChannel`` in running graphs, on every saver kind and calling mode: the
values a thread shows (state, history, forks, updates, resumes) are the ones a plain
reducer channel shows, while most checkpoints store no value for the channel."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Annotated, Any

import pytest
from persistence_helpers import Harness, cfg
from typing_extensions import TypedDict

from stategraph.channels import DeltaChannel
from stategraph.checkpoint.serde.types import _DeltaSnapshot
from stategraph.graph import END, START, StateGraph
from stategraph.graph.message import _messages_delta_reducer, add_messages
from stategraph.messages import AIMessage, HumanMessage
from stategraph.types import Command, Overwrite, interrupt


def extend(value: list[Any], writes: Sequence[list[Any]]) -> list[Any]:
    return [*value, *(x for w in writes for x in w)]


class DeltaChat(TypedDict):
    messages: Annotated[list, DeltaChannel(_messages_delta_reducer, snapshot_frequency=3)]


class PlainChat(TypedDict):
    messages: Annotated[list, add_messages]


def chat(schema: type, saver: Any) -> Any:
    def reply(state: dict[str, Any]) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(f"reply {n}", id=f"r{n}")]}

    b = StateGraph(schema)
    b.add_node("reply", reply)
    b.add_edge(START, "reply")
    b.add_edge("reply", END)
    return b.compile(checkpointer=saver)


def contents(values: dict[str, Any]) -> list[str]:
    return [m.content for m in values.get("messages", [])]


def test_delta_and_plain_threads_show_the_same_history(h: Harness) -> None:
    delta, plain = chat(DeltaChat, h.saver), chat(PlainChat, h.saver)
    for i in range(5):
        h.invoke(delta, {"messages": [HumanMessage(f"q{i}", id=f"q{i}")]}, cfg("d"))
        h.invoke(plain, {"messages": [HumanMessage(f"q{i}", id=f"q{i}")]}, cfg("p"))
    d_hist = h.history(delta, cfg("d"))
    p_hist = h.history(plain, cfg("p"))
    assert [s.values for s in d_hist] == [s.values for s in p_hist]
    assert [(s.next, s.metadata["step"]) for s in d_hist] == [  # type: ignore[index]
        (s.next, s.metadata["step"])  # type: ignore[index]
        for s in p_hist
    ]
    assert contents(d_hist[0].values)[-2:] == ["q4", "reply 9"]
    # most checkpoints store no value for the channel, some store a snapshot
    stored = [
        h.get_tuple(h.saver, s.config).checkpoint["channel_values"].get("messages")  # type: ignore[union-attr]
        for s in d_hist
    ]
    assert any(isinstance(v, _DeltaSnapshot) for v in stored)
    assert sum(v is None for v in stored) > len(stored) // 2
    # a plain graph reads the delta-written thread and continues it
    out = h.invoke(plain, {"messages": [HumanMessage("more", id="m")]}, cfg("d"))
    assert contents(out)[-2:] == ["more", "reply 11"]
    assert h.get_state(delta, cfg("d")).values == out


def test_time_travel_fork_and_update_on_old_checkpoints(h: Harness) -> None:
    delta, plain = chat(DeltaChat, h.saver), chat(PlainChat, h.saver)
    for graph, thread in ((delta, "d"), (plain, "p")):
        for i in range(4):
            h.invoke(graph, {"messages": [HumanMessage(f"q{i}", id=f"q{i}")]}, cfg(thread))
    d_old = h.history(delta, cfg("d"))[4]
    p_old = h.history(plain, cfg("p"))[4]
    assert d_old.values == p_old.values
    # replay from an old checkpoint and fork with update_state
    assert h.invoke(delta, None, d_old.config) == h.invoke(plain, None, p_old.config)
    d_cfg = h.update_state(delta, d_old.config, {"messages": [HumanMessage("edit", id="e")]})
    p_cfg = h.update_state(plain, p_old.config, {"messages": [HumanMessage("edit", id="e")]})
    assert h.get_state(delta, d_cfg).values == h.get_state(plain, p_cfg).values
    out_d = h.invoke(delta, {"messages": [HumanMessage("after", id="a")]}, d_cfg)
    out_p = h.invoke(plain, {"messages": [HumanMessage("after", id="a")]}, p_cfg)
    assert out_d == out_p
    assert [s.values for s in h.history(delta, cfg("d"))] == [
        s.values for s in h.history(plain, cfg("p"))
    ]


class Log(TypedDict, total=False):
    log: Annotated[list, DeltaChannel(extend, snapshot_frequency=100)]
    plain: Annotated[list, operator.add]


def fan_graph(saver: Any) -> Any:
    def left(state: Log) -> dict[str, Any]:
        return {"log": ["left"], "plain": ["left"]}

    def right(state: Log) -> dict[str, Any]:
        answer = interrupt("ok?")
        return {"log": [f"right:{answer}"], "plain": [f"right:{answer}"]}

    def after(state: Log) -> dict[str, Any]:
        return {"log": ["after"], "plain": ["after"]}

    b = StateGraph(Log)
    b.add_node("left", left)
    b.add_node("right", right)
    b.add_node("after", after)
    b.add_edge(START, "left")
    b.add_edge(START, "right")
    b.add_edge(["left", "right"], "after")
    b.add_edge("after", END)
    return b.compile(checkpointer=saver)


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_parallel_writes_interrupts_and_durability(h: Harness, durability: str) -> None:
    g = fan_graph(h.saver)
    h.invoke(g, {"log": ["start"], "plain": ["start"]}, cfg("t"), durability=durability)
    out = h.invoke(g, Command(resume="yes"), cfg("t"), durability=durability)
    assert out["log"] == out["plain"] == ["start", "left", "right:yes", "after"]
    for snap in h.history(g, cfg("t")):
        assert snap.values.get("log", []) == snap.values.get("plain", [])
    # a new saver on the same storage (a restarted process) reads the same values
    fresh = fan_graph(h.new_saver())
    assert h.get_state(fresh, cfg("t")).values == out


def test_overwrite_through_update_state(h: Harness) -> None:
    g = fan_graph(h.saver)
    h.invoke(g, {"log": ["start"], "plain": ["start"]}, cfg("t"))
    h.invoke(g, Command(resume="y"), cfg("t"))
    new = h.update_state(g, cfg("t"), {"log": Overwrite(["reset"]), "plain": Overwrite(["reset"])})
    stored = h.get_tuple(h.saver, new)
    assert stored is not None
    assert stored.checkpoint["channel_values"]["log"] == _DeltaSnapshot(["reset"])
    assert h.get_state(g, cfg("t")).values == {"log": ["reset"], "plain": ["reset"]}


def test_parallel_delta_writes_on_postgres_replay_in_task_order() -> None:
    import os
    import uuid

    import psycopg

    from stategraph.checkpoint.postgres import PostgresSaver

    url = os.environ.get("STATEGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
    try:
        admin = psycopg.connect(url, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"PostgreSQL unreachable: {exc}")
    schema = f"sg_dc_{uuid.uuid4().hex[:12]}"
    admin.execute(f"CREATE SCHEMA {schema}")
    try:
        with PostgresSaver.from_conn_string(f"{url}?options=-csearch_path%3D{schema}") as saver:
            g = fan_graph(saver)
            g.invoke({"log": ["start"], "plain": ["start"]}, cfg("t"))
            out = g.invoke(Command(resume="ok"), cfg("t"))
            assert out["log"] == out["plain"] == ["start", "left", "right:ok", "after"]
            for snap in g.get_state_history(cfg("t")):
                assert snap.values.get("log", []) == snap.values.get("plain", [])
    finally:
        admin.execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()
