"""The graphs behind ``data/format1_checkpoints.sqlite`` (a database written by the
release before the checkpoint format was versioned) and the snapshot of its threads.

``tests/persistence/data/make_format1_fixture.py`` ran these graphs once, with that
release, to write the database and ``format1_expected.json``;
``test_format_fixture.py`` opens a copy with today's savers and checks that every
state, history entry and pending write reads back exactly as it did then.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from stategraph.checkpoint.base import BaseCheckpointSaver
from stategraph.graph import END, START, MessagesState, StateGraph
from stategraph.messages import AIMessage
from stategraph.types import Command, Send, StateSnapshot, interrupt

THREADS = ("chat", "hitl", "failed", "nested", "fanout")
"""The threads the fixture database holds."""


def chat_graph(saver: BaseCheckpointSaver[Any]) -> Any:
    """A chat bot over ``MessagesState``: answers each human message."""

    def bot(state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1]
        return {
            "messages": [
                AIMessage(content=f"echo: {last.content}", id=f"ai-{len(state['messages'])}")
            ]
        }

    builder = StateGraph(MessagesState)
    builder.add_node("bot", bot)
    builder.add_edge(START, "bot")
    builder.add_edge("bot", END)
    return builder.compile(checkpointer=saver)


class LogState(TypedDict, total=False):
    """An append-only ``log`` and a plain ``answer``."""

    log: Annotated[list[str], operator.add]
    answer: str


def hitl_graph(saver: BaseCheckpointSaver[Any]) -> Any:
    """``prepare -> ask (interrupts for an answer) -> finish``."""

    def prepare(state: LogState) -> dict[str, Any]:
        return {"log": ["prepare"]}

    def ask(state: LogState) -> dict[str, Any]:
        answer = interrupt({"question": "name?", "log": list(state.get("log", []))})
        return {"log": [f"ask:{answer}"], "answer": answer}

    def finish(state: LogState) -> dict[str, Any]:
        return {"log": ["finish"]}

    builder = StateGraph(LogState)
    builder.add_node("prepare", prepare)
    builder.add_node("ask", ask)
    builder.add_node("finish", finish)
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "ask")
    builder.add_edge("ask", "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=saver)


class Flaky:
    """A switch the ``failed`` graph's ``bad`` node reads: fail while ``broken``."""

    broken = True


def failing_graph(saver: BaseCheckpointSaver[Any], switch: type[Flaky] = Flaky) -> Any:
    """``START -> good, bad`` in one step; ``bad`` raises while ``switch.broken``, so
    ``good``'s writes and ``bad``'s error stay saved as pending writes."""

    def good(state: LogState) -> dict[str, Any]:
        return {"log": ["good"]}

    def bad(state: LogState) -> dict[str, Any]:
        if switch.broken:
            raise ValueError("bad is broken")
        return {"log": ["bad"]}

    builder = StateGraph(LogState)
    builder.add_node("good", good)
    builder.add_node("bad", bad)
    builder.add_edge(START, "good")
    builder.add_edge(START, "bad")
    builder.add_edge("good", END)
    builder.add_edge("bad", END)
    return builder.compile(checkpointer=saver)


def nested_graph(saver: BaseCheckpointSaver[Any]) -> Any:
    """A parent whose ``child`` node is a subgraph that interrupts inside."""

    def inner_a(state: LogState) -> dict[str, Any]:
        return {"log": ["inner_a"]}

    def inner_ask(state: LogState) -> dict[str, Any]:
        answer = interrupt("inner question")
        return {"log": [f"inner:{answer}"]}

    sub = StateGraph(LogState)
    sub.add_node("inner_a", inner_a)
    sub.add_node("inner_ask", inner_ask)
    sub.add_edge(START, "inner_a")
    sub.add_edge("inner_a", "inner_ask")
    sub.add_edge("inner_ask", END)

    def outer(state: LogState) -> dict[str, Any]:
        return {"log": ["outer"]}

    builder = StateGraph(LogState)
    builder.add_node("outer", outer)
    builder.add_node("child", sub.compile())
    builder.add_edge(START, "outer")
    builder.add_edge("outer", "child")
    builder.add_edge("child", END)
    return builder.compile(checkpointer=saver)


def fanout_graph(saver: BaseCheckpointSaver[Any]) -> Any:
    """``START`` sends one ``work`` task per item; each appends to ``log``."""

    def work(arg: dict[str, Any]) -> dict[str, Any]:
        return {"log": [f"work:{arg['item']}"]}

    def route(state: LogState) -> list[Send]:
        return [Send("work", {"item": item}) for item in ("x", "y", "z")]

    builder = StateGraph(LogState)
    builder.add_node("work", work)
    builder.add_conditional_edges(START, route, ["work"])
    builder.add_edge("work", END)
    return builder.compile(checkpointer=saver)


def graphs(saver: BaseCheckpointSaver[Any]) -> dict[str, Any]:
    """Thread id -> the compiled graph that thread ran."""
    return {
        "chat": chat_graph(saver),
        "hitl": hitl_graph(saver),
        "failed": failing_graph(saver),
        "nested": nested_graph(saver),
        "fanout": fanout_graph(saver),
    }


def cfg(thread_id: str) -> dict[str, Any]:
    """The run config of ``thread_id``."""
    return {"configurable": {"thread_id": thread_id}}


def write_threads(saver: BaseCheckpointSaver[Any]) -> None:
    """Run every fixture thread to the point where the database captured it."""
    g = graphs(saver)
    for text in ("hello", "how are you", "bye"):
        g["chat"].invoke(
            {"messages": [{"role": "user", "content": text, "id": f"h-{text}"}]}, cfg("chat")
        )
    # an update_state checkpoint on top of the chat
    g["chat"].update_state(cfg("chat"), {"messages": [AIMessage(content="edited", id="ai-edit")]})

    g["hitl"].invoke({"log": ["start"]}, cfg("hitl"))  # stops at the interrupt in ask

    try:
        g["failed"].invoke({"log": ["start"]}, cfg("failed"))
    except ValueError:
        pass

    g["nested"].invoke({"log": ["start"]}, cfg("nested"))  # stops inside the subgraph

    g["fanout"].invoke({"log": ["start"]}, cfg("fanout"))
    # a fork of the fanout thread from its input checkpoint
    history = list(g["fanout"].get_state_history(cfg("fanout")))
    first = history[-1].config
    g["fanout"].update_state(first, {"log": ["forked"]})


def describe(snapshot: StateSnapshot) -> dict[str, Any]:
    """A JSON-able, exact description of one snapshot (``repr`` of each part)."""
    return {
        "values": repr(snapshot.values),
        "next": list(snapshot.next),
        "config": repr(snapshot.config),
        "metadata": repr(snapshot.metadata),
        "created_at": snapshot.created_at,
        "parent_config": repr(snapshot.parent_config),
        "tasks": [
            repr((t.id, t.name, t.path, t.error is not None, t.interrupts, t.result))
            for t in snapshot.tasks
        ],
        "interrupts": repr(snapshot.interrupts),
    }


def snapshot_threads(saver: BaseCheckpointSaver[Any]) -> dict[str, Any]:
    """Every thread's latest state (with subgraph states) and full history."""
    out: dict[str, Any] = {}
    for thread_id, graph in graphs(saver).items():
        state = graph.get_state(cfg(thread_id), subgraphs=True)
        sub_states = {
            t.name: describe(t.state) for t in state.tasks if isinstance(t.state, StateSnapshot)
        }
        out[thread_id] = {
            "state": describe(state),
            "subgraph_states": sub_states,
            "history": [describe(s) for s in graph.get_state_history(cfg(thread_id))],
        }
    return out


def raw_tuples(saver: BaseCheckpointSaver[Any]) -> list[str]:
    """``repr`` of every checkpoint tuple in the saver (all threads, all namespaces)."""
    return [repr(t) for t in saver.list(None)]


__all__ = [
    "THREADS",
    "Command",
    "Flaky",
    "graphs",
    "cfg",
    "write_threads",
    "snapshot_threads",
    "raw_tuples",
    "describe",
]
