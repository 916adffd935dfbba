"""A chat message written as a plain dict and the same message in the channel share
one stored item: the dict is stored as a reference to its message plus its keys and
role, and reads back as the very dict that was written."""

from __future__ import annotations

import sqlite3
import uuid
from typing import Any

import ormsgpack

from stategraph.checkpoint._intern import INTERNED_TYPE, Interner, Resolver, refs
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.graph import END, START, MessagesState, StateGraph

TEXT = "the quick brown fox jumps over the lazy dog " * 6


def roundtrip(value: Any, channel: str = "messages") -> tuple[Any, dict[bytes, Any], list[Any]]:
    """``value`` dumped by an interner and read back; the items; the stored header."""
    saver = InMemorySaver()
    items: dict[bytes, Any] = {}
    typed = Interner(saver).dump(channel, value, items)
    resolver = Resolver(saver.serde, "t", lambda hashes: {h: items[h] for h in hashes})
    header = ormsgpack.unpackb(typed[1]) if typed[0] == INTERNED_TYPE else []
    assert set(refs(typed)) == set(items)
    return resolver.loads(typed, channel), items, header


def test_message_dicts_read_back_exactly() -> None:
    value = [
        {"role": "user", "content": TEXT, "id": "u1"},
        {"id": "a1", "type": "ai", "content": TEXT + "!"},
        {"content": TEXT + "?", "role": "human", "id": "u2"},
        {"role": "user", "content": TEXT, "id": 7},  # not all str: stored whole
        {"role": "user", "content": TEXT, "id": "u3", "name": "x"},  # other keys: whole
        {"role": "nobody", "content": TEXT, "id": "u4"},  # not a message: whole
        {"role": "user", "content": "hi", "id": "u5"},  # small: inline
    ]
    back, items, header = roundtrip(value)
    assert back == value
    assert [list(d) for d in back] == [list(d) for d in value]  # key order kept
    assert header[0] == 2  # message-dict references need format 2
    shaped = [e for e in header[2] if type(e) is list and len(e) == 3]
    assert len(shaped) == 3 and len(items) == 6


def test_values_without_message_dicts_keep_format_1() -> None:
    from stategraph.messages import HumanMessage

    _, _, header = roundtrip([HumanMessage(TEXT, id="h")])
    assert header[0] == 1


def test_the_start_map_shares_the_message_item() -> None:
    message = {"role": "user", "content": TEXT, "id": "u1"}
    back, items, _ = roundtrip({"messages": [message]}, "__start__")
    assert back == {"messages": [message]}
    from stategraph.messages import HumanMessage

    _, channel_items, _ = roundtrip([HumanMessage(TEXT, id="u1")])
    assert set(items) == set(channel_items)


def test_a_chat_on_sqlite_stores_each_message_once() -> None:
    conn = sqlite3.connect(":memory:", check_same_thread=False)

    def reply(state: MessagesState) -> dict[str, Any]:
        return {"messages": [{"role": "assistant", "content": TEXT, "id": uuid.uuid4().hex}]}

    b = StateGraph(MessagesState)
    b.add_node("reply", reply)
    b.add_edge(START, "reply")
    b.add_edge("reply", END)
    graph = b.compile(checkpointer=SqliteSaver(conn))
    config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
    sent = [{"role": "user", "content": f"{i} {TEXT}", "id": f"u{i}"} for i in range(3)]
    for message in sent:
        graph.invoke({"messages": [message]}, config)
    assert conn.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 6
    tuples = list(graph.checkpointer.list(config))
    starts = [t.checkpoint["channel_values"].get("__start__") for t in reversed(tuples)]
    assert [v for v in starts if v is not None] == [{"messages": [m]} for m in sent]
    writes = [w for t in tuples for w in (t.pending_writes or []) if w[1] == "messages"]
    assert {w[2][0]["id"] for w in writes} >= {m["id"] for m in sent}
    assert all(type(w[2][0]) is dict for w in writes)
