"""Write small LangGraph checkpoint databases for the import tests (a tool, not a test).

Run with LangGraph's interpreter (a separate venv with langgraph 1.2 and
langgraph-checkpoint-sqlite/-postgres):

    /work/lgvenv/bin/python tests/data/langgraph/make_langgraph_dbs.py            # SQLite
    /work/lgvenv/bin/python tests/data/langgraph/make_langgraph_dbs.py --postgres CONNINFO

It builds three threads with real LangGraph and records in ``expected.json`` what
LangGraph returns when each thread is resumed (on a copy, so the database keeps the
paused threads):

* ``chat-1``: a MessagesState chat, two turns done; resumed with a third message.
* ``hitl-1``: draft -> review (interrupt) -> finish; paused at the interrupt.
* ``fanout-1``: START -> a and b in parallel (b interrupts) -> join; a's write is a
  pending write of the paused checkpoint, so resuming must not run a again.
* ``sub-1``: a parent graph whose node ``child`` is a subgraph s1 -> s2 (interrupt);
  paused inside the subgraph (checkpoints in a ``child:<task>`` namespace).

The graphs are mirrored with stategraph in ``tests/cli/test_import_langgraph.py``.
``lg_threads_pg.sql`` is the PostgreSQL database this script writes with ``--postgres``,
dumped with ``pg_dump --schema=SCHEMA --no-owner --no-privileges --inserts`` (schema
name and session settings removed), so the PostgreSQL source tests run without
LangGraph installed.
"""

from __future__ import annotations

import json
import operator
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

HERE = Path(__file__).resolve().parent


def chat_graph(saver: Any) -> Any:
    def bot(state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1]
        n = len(state["messages"])
        return {"messages": [AIMessage(content=f"echo: {last.content}", id=f"ai-{n}")]}

    g = StateGraph(MessagesState)
    g.add_node("bot", bot)
    g.add_edge(START, "bot")
    return g.compile(checkpointer=saver)


class Review(TypedDict):
    items: Annotated[list, operator.add]
    decision: str


def hitl_graph(saver: Any) -> Any:
    def draft(state: Review) -> dict[str, Any]:
        return {"items": ["draft"]}

    def review(state: Review) -> dict[str, Any]:
        answer = interrupt({"question": "approve?", "items": state["items"]})
        return {"decision": answer}

    def finish(state: Review) -> dict[str, Any]:
        return {"items": [f"done:{state['decision']}"]}

    g = StateGraph(Review)
    g.add_node("draft", draft)
    g.add_node("review", review)
    g.add_node("finish", finish)
    g.add_edge(START, "draft")
    g.add_edge("draft", "review")
    g.add_edge("review", "finish")
    return g.compile(checkpointer=saver)


class Fan(TypedDict):
    items: Annotated[list, operator.add]


def fanout_graph(saver: Any) -> Any:
    def a(state: Fan) -> dict[str, Any]:
        return {"items": ["a"]}

    def b(state: Fan) -> dict[str, Any]:
        return {"items": [f"b:{interrupt('b?')}"]}

    def join(state: Fan) -> dict[str, Any]:
        return {"items": [f"join:{len(state['items'])}"]}

    g = StateGraph(Fan)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_node("join", join)
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_edge(["a", "b"], "join")
    return g.compile(checkpointer=saver)


class Sub(TypedDict):
    items: Annotated[list, operator.add]


def sub_graph(saver: Any) -> Any:
    def s1(state: Sub) -> dict[str, Any]:
        return {"items": ["s1"]}

    def s2(state: Sub) -> dict[str, Any]:
        return {"items": [f"s2:{interrupt('inner?')}"]}

    inner = StateGraph(Sub)
    inner.add_node("s1", s1)
    inner.add_node("s2", s2)
    inner.add_edge(START, "s1")
    inner.add_edge("s1", "s2")

    def after(state: Sub) -> dict[str, Any]:
        return {"items": [f"after:{len(state['items'])}"]}

    g = StateGraph(Sub)
    g.add_node("child", inner.compile())
    g.add_node("after", after)
    g.add_edge(START, "child")
    g.add_edge("child", "after")
    return g.compile(checkpointer=saver)


def cfg(thread: str, **metadata: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}, "metadata": metadata}


def plain(value: Any) -> Any:
    """JSON view of a result: messages as {type, content, id}, interrupts as values."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "content") and hasattr(value, "type"):
        return {"type": value.type, "content": value.content, "id": value.id}
    if type(value).__name__ == "Interrupt":
        return {"interrupt": plain(value.value)}
    return value


def fill(saver: Any) -> None:
    chat = chat_graph(saver)
    chat.invoke(
        {"messages": [HumanMessage(content="hello", id="h-1")]}, cfg("chat-1", user_id="alice")
    )
    chat.invoke(
        {"messages": [HumanMessage(content="again", id="h-2")]}, cfg("chat-1", user_id="alice")
    )
    hitl_graph(saver).invoke({"items": ["start"]}, cfg("hitl-1", user_id="bob"))
    fanout_graph(saver).invoke({"items": ["go"]}, cfg("fanout-1"))
    sub_graph(saver).invoke({"items": ["in"]}, cfg("sub-1"))


def resume_all(saver: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    chat = chat_graph(saver)
    config = cfg("chat-1")
    out["chat-1"] = {
        "before": plain(chat.get_state(config).values),
        "result": plain(
            chat.invoke({"messages": [HumanMessage(content="third", id="h-3")]}, config)
        ),
        "history": len(list(chat.get_state_history(config))),
    }
    hitl = hitl_graph(saver)
    config = cfg("hitl-1")
    state = hitl.get_state(config)
    out["hitl-1"] = {
        "before": plain(state.values),
        "next": list(state.next),
        "interrupts": [plain(i.value) for t in state.tasks for i in t.interrupts],
        "result": plain(hitl.invoke(Command(resume="yes"), config)),
    }
    fan = fanout_graph(saver)
    config = cfg("fanout-1")
    state = fan.get_state(config)
    out["fanout-1"] = {
        "before": plain(state.values),
        "next": sorted(state.next),
        "result": plain(fan.invoke(Command(resume="ok"), config)),
    }
    sub = sub_graph(saver)
    config = cfg("sub-1")
    state = sub.get_state(config, subgraphs=True)
    out["sub-1"] = {
        "before": plain(state.values),
        "next": list(state.next),
        "result": plain(sub.invoke(Command(resume="deep"), config)),
    }
    return out


def main() -> None:
    if "--postgres" in sys.argv:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver

        conninfo = sys.argv[sys.argv.index("--postgres") + 1]
        with psycopg.connect(conninfo, autocommit=True) as conn:
            saver = PostgresSaver(conn)
            saver.setup()
            fill(saver)
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    target = HERE / "lg_threads.sqlite"
    target.unlink(missing_ok=True)
    conn = sqlite3.connect(target, check_same_thread=False)
    fill(SqliteSaver(conn))
    conn.close()
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "copy.sqlite"
        shutil.copy(target, copy)
        conn = sqlite3.connect(copy, check_same_thread=False)
        expected = resume_all(SqliteSaver(conn))
        conn.close()
    (HERE / "expected.json").write_text(json.dumps(expected, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
