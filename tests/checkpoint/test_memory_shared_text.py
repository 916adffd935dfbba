"""``InMemorySaver`` keeps the text of a large message as the ``str`` itself: the stored
item holds the live message's own string (no second copy of a chat's text), reads give
back exactly what was saved, a later change to the live message never reaches the saved
one, short text and encrypted items stay in the bytes, and a stored item whose text does
not match its hash reads as a ``DeserializationError``."""

from __future__ import annotations

from typing import Any

import pytest

from stategraph.checkpoint._intern import INTERNED_TYPE, Resolver
from stategraph.checkpoint.memory import SHARED_TEXT, InMemorySaver, share_text, whole_item
from stategraph.checkpoint.serde.base import DeserializationError
from stategraph.checkpoint.serde.encrypted import EncryptedSerializer
from stategraph.graph import END, START, MessagesState, StateGraph
from stategraph.messages import AIMessage, HumanMessage

BIG = "".join(f"line {i}: the quick brown fox — naïve café ✓\n" for i in range(200))


def graph(saver: Any, reply: Any) -> Any:
    """One node answering with ``reply(state)`` (a message or a message dict)."""

    def bot(state: MessagesState) -> dict[str, Any]:
        return {"messages": [reply(state)]}

    b = StateGraph(MessagesState)
    b.add_node("bot", bot)
    b.add_edge(START, "bot")
    b.add_edge("bot", END)
    return b.compile(checkpointer=saver)


def cfg(thread: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def cold(saver: InMemorySaver, **kw: Any) -> InMemorySaver:
    """A new saver reading ``saver``'s tables: what is stored, with nothing cached (the
    delta codec of the saver that wrote a list serves its last version from memory)."""
    out = InMemorySaver(**kw)
    out.storage, out.writes, out.blobs, out.items = (
        saver.storage,
        saver.writes,
        saver.blobs,
        saver.items,
    )
    return out


def saved_messages(saver: InMemorySaver, thread: str = "t", **kw: Any) -> list[Any]:
    """The ``messages`` of the latest checkpoint of ``thread``, read from storage."""
    found = next(iter(cold(saver, **kw).list(cfg(thread), limit=1)), None)
    assert found is not None
    messages: list[Any] = found.checkpoint["channel_values"]["messages"]
    return messages


def shared(saver: InMemorySaver) -> list[str]:
    """The texts the saver's items hold as ``str`` objects."""
    return [item[3] for item in saver.items.values() if len(item) == 4]


@pytest.mark.parametrize("durability", ["exit", "sync"])
def test_the_saved_item_holds_the_live_text_itself(durability: str) -> None:
    saver = InMemorySaver()
    text = BIG + "answer"
    g = graph(saver, lambda s: AIMessage(text, id="a1"))
    out = g.invoke({"messages": [HumanMessage("hi", id="h1")]}, cfg(), durability=durability)
    live = out["messages"][-1]
    assert live.content is text
    assert any(t is text for t in shared(saver))
    # the bytes stored for the message no longer carry its text
    item = next(i for i in saver.items.values() if len(i) == 4 and i[3] is text)
    assert len(item[1]) < 1024 < len(text.encode())
    saved = saved_messages(saver)
    assert saved == [HumanMessage("hi", id="h1"), AIMessage(text, id="a1")]
    assert saved[-1] is not live
    assert g.get_state(cfg()).values["messages"] == saved


def test_a_message_dict_shares_its_text_and_reads_back_as_written() -> None:
    saver = InMemorySaver()
    text = BIG + "tool"
    g = graph(saver, lambda s: {"role": "assistant", "content": text, "id": "a1"})
    g.invoke({"messages": [{"role": "user", "content": "hi", "id": "h1"}]}, cfg())
    assert any(t is text for t in shared(saver))
    saved = saved_messages(saver)
    assert [m.content for m in saved] == ["hi", text]
    assert [m.id for m in saved] == ["h1", "a1"]


def test_changing_the_live_message_leaves_the_saved_one_alone() -> None:
    saver = InMemorySaver()
    text = BIG + "original"
    g = graph(saver, lambda s: AIMessage(text, id="a1"))
    out = g.invoke({"messages": [HumanMessage("hi", id="h1")]}, cfg())
    live = out["messages"][-1]
    live.content = "changed"
    live.id = "other"
    saved = saved_messages(saver)[-1]
    assert (saved.content, saved.id) == (text, "a1")


def test_short_text_stays_in_the_bytes() -> None:
    saver = InMemorySaver()
    text = "x" * (SHARED_TEXT - 1) + "é" * 100  # 1,123 characters, too big to inline
    g = graph(saver, lambda s: AIMessage(text[: SHARED_TEXT - 1], id="a1"))
    g.invoke({"messages": [HumanMessage("hi", id="h1")]}, cfg())
    assert saver.items and shared(saver) == []
    assert saved_messages(saver)[-1].content == text[: SHARED_TEXT - 1]


def test_whole_item_gives_back_the_serialized_bytes_exactly() -> None:
    saver = InMemorySaver()
    msg = AIMessage(BIG, id="a1", additional_kwargs={"echo": BIG[:50]})
    typed = saver.serde.dumps_typed(msg)
    kept = share_text(typed, msg)
    assert len(kept) == 4 and kept[3] is BIG
    assert whole_item(kept) == typed
    assert whole_item(typed) is typed
    # no text to share: unchanged
    assert share_text(typed, {"content": ["a list"]}) is typed
    assert share_text(typed, AIMessage("other text " * 200, id="x")) is typed


def test_encrypted_items_are_stored_whole_and_sealed() -> None:
    serde = EncryptedSerializer.from_aes(key=b"k" * 32)
    saver = InMemorySaver(serde=serde)
    text = BIG + "secret"
    g = graph(saver, lambda s: AIMessage(text, id="a1"))
    g.invoke({"messages": [HumanMessage("hi", id="h1")]}, cfg())
    assert saver.items and all(len(item) == 2 for item in saver.items.values())
    assert all(b"secret" not in item[1] for item in saver.items.values())
    assert saved_messages(saver, serde=serde)[-1].content == text


def test_a_stored_text_that_does_not_match_its_hash_is_an_error() -> None:
    saver = InMemorySaver()
    text = BIG + "right"
    g = graph(saver, lambda s: AIMessage(text, id="a1"))
    g.invoke({"messages": [HumanMessage("hi", id="h1")]}, cfg())
    key = next(k for k, i in saver.items.items() if len(i) == 4)
    item = saver.items[key]
    assert len(item) == 4
    saver.items[key] = (item[0], item[1], item[2], BIG + "wrong")
    assert whole_item(saver.items[key]) != whole_item(item)
    with pytest.raises(DeserializationError, match="corrupt"):
        saved_messages(saver)


def test_history_copies_and_retention_read_shared_items() -> None:
    saver = InMemorySaver()
    texts = [f"{BIG} turn {i}" for i in range(3)]
    g = graph(
        saver, lambda s: AIMessage(texts[len(s["messages"]) // 2], id=f"a{len(s['messages'])}")
    )
    for i in range(3):
        g.invoke({"messages": [HumanMessage(f"q{i}", id=f"h{i}")]}, cfg(), durability="sync")
    assert sum(1 for t in shared(saver) if t in texts) == 3
    saver.copy_thread("t", "copy")
    want = ["q0", texts[0], "q1", texts[1], "q2", texts[2]]
    assert [m.content for m in saved_messages(saver)] == want
    assert [m.content for m in saved_messages(saver, "copy")] == want
    history = list(cold(saver).list(cfg()))
    sizes = [len(t.checkpoint["channel_values"].get("messages", [])) for t in history]
    assert sizes[:3] == [6, 5, 4]
    saver.prune(["t"], keep_last=1)
    assert len(list(saver.list(cfg()))) == 1
    assert [m.content for m in saved_messages(saver)] == want
    assert [m.content for m in saved_messages(saver, "copy")] == want


def test_a_long_list_of_text_dicts_is_still_interned_and_shared() -> None:
    # the kept form of {"content": text} is a few bytes: the long-list sampling must
    # still see large elements (it judged by the shorter kept form before the fix)
    saver = InMemorySaver()
    value = [{"content": f"{i} {BIG}"} for i in range(20)]
    items: dict[bytes, Any] = {}
    typed = saver._dump("docs", value, items)
    assert typed[0] == INTERNED_TYPE
    assert len(items) == 20
    assert all(
        len(item) == 4 and item[3] is d["content"]
        for item, d in zip(items.values(), value, strict=True)
    )
    resolver = Resolver(saver.serde, "t", lambda hs: {h: whole_item(items[h]) for h in hs})
    assert resolver.loads(typed, "docs") == value


def test_the_text_is_found_after_an_earlier_copy_of_its_first_bytes() -> None:
    text = BIG + "tail"
    encoded = text.encode()
    data = b"id:" + encoded[:100] + b"|" + encoded + b"|end"
    kept = share_text(("msgpack", data), {"content": text})
    assert len(kept) == 4 and kept[2] == len(b"id:" + encoded[:100] + b"|")
    assert kept[1] == b"id:" + encoded[:100] + b"||end"
    assert whole_item(kept) == ("msgpack", data)
    # only a part of the text in the bytes: nothing to share
    partial = ("msgpack", b"x" + encoded[:-1])
    assert share_text(partial, {"content": text}) is partial
