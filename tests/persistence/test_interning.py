"""Interned list items (``stategraph.checkpoint._intern``) in every bundled saver: each
large message is stored once per thread, interning on and off give identical
histories, retention collects exactly the items nothing refers to any more, copies
carry their items, encrypted items stay encrypted, and a missing or corrupt item is
a ``DeserializationError``, never a wrong value."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from stategraph.checkpoint._intern import INTERNED_TYPE, referenced
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.serde.base import DeserializationError
from stategraph.checkpoint.serde.encrypted import EncryptedSerializer
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from stategraph.graph import END, START, MessagesState, StateGraph
from stategraph.messages import AIMessage, HumanMessage, RemoveMessage

PG_URL = os.environ.get("STATEGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
KINDS = ["memory", "sqlite", "aiosqlite", "postgres", "apostgres"]
TEXT = "the quick brown fox jumps over the lazy dog " * 6  # ~270 bytes: interned


def human(i: int) -> HumanMessage:
    """Human message ``i`` (large enough to be interned, unique content)."""
    return HumanMessage(f"h{i:03} {TEXT}", id=f"h{i:03}")


def chat(saver: Any) -> Any:
    """A bot answering each human message with a large AI message; a message
    ``"forget N"`` removes the N oldest messages (RemoveMessage)."""

    def bot(state: MessagesState) -> dict[str, Any]:
        msgs = state["messages"]
        last = msgs[-1]
        if isinstance(last.content, str) and last.content.startswith("forget "):
            n = int(last.content.split()[1])
            return {"messages": [RemoveMessage(id=m.id) for m in msgs[:n]]}
        return {"messages": [AIMessage(f"a{len(msgs):03} {TEXT}", id=f"a{len(msgs):03}")]}

    b = StateGraph(MessagesState)
    b.add_node("bot", bot)
    b.add_edge(START, "bot")
    b.add_edge("bot", END)
    return b.compile(checkpointer=saver)


def cfg(thread: str = "t", run_id: str | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = {"configurable": {"thread_id": thread}}
    if run_id is not None:
        conf["metadata"] = {"run_id": run_id}  # saved with the checkpoints, as a server does
    return conf


class Store:
    """One saver kind (sync or async) with interning on or off, and what it stores."""

    def __init__(
        self, kind: str, tmp_path: Path, *, intern: bool = True, name: str = "db", **kw: Any
    ) -> None:
        self.kind = kind
        self.intern = intern
        self.kw = kw
        self.loop = asyncio.new_event_loop()
        self.path = tmp_path / f"{name}.sqlite"
        if kind == "memory":
            self.saver: Any = InMemorySaver(intern_items=intern, **kw)
        elif kind in ("sqlite", "aiosqlite"):
            self.conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            cls = SqliteSaver if kind == "sqlite" else AsyncSqliteSaver
            self.saver = cls(self.conn, intern_items=intern, **kw)
        else:
            psycopg = pytest.importorskip("psycopg")
            self.schema = f"sg_intern_{uuid.uuid4().hex[:12]}"
            try:
                self.admin = psycopg.connect(PG_URL, autocommit=True, connect_timeout=5)
            except psycopg.OperationalError as exc:
                if os.environ.get("CI"):
                    raise
                pytest.skip(f"PostgreSQL unreachable: {exc}")
            self.admin.execute(f"CREATE SCHEMA {self.schema}")
            self.url = f"{PG_URL}?options=-csearch_path%3D{self.schema}"
            if kind == "postgres":
                from stategraph.checkpoint.postgres import PostgresSaver

                self.pg = psycopg.connect(self.url, autocommit=True)
                self.saver = PostgresSaver(self.pg, intern_items=intern, **kw)
                self.saver.setup()
            else:
                from stategraph.checkpoint.postgres.aio import AsyncPostgresSaver

                async def connect() -> Any:
                    return await psycopg.AsyncConnection.connect(self.url, autocommit=True)

                self.pg = self.run(connect())
                self.saver = AsyncPostgresSaver(self.pg, intern_items=intern, **kw)
                self.run(self.saver.setup())
        self.graph = chat(self.saver)

    @property
    def is_async(self) -> bool:
        return self.kind in ("aiosqlite", "apostgres")

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def close(self) -> None:
        if self.kind in ("sqlite", "aiosqlite"):
            self.conn.close()
        elif self.kind in ("postgres", "apostgres"):
            if self.kind == "apostgres":
                self.run(self.pg.close())
            else:
                self.pg.close()
            self.admin.execute(f"DROP SCHEMA {self.schema} CASCADE")
            self.admin.close()
        if self.kind == "aiosqlite":
            self.saver._close()
        self.loop.close()

    # -- driving the graph ----------------------------------------------------------

    def invoke(self, inp: Any, config: dict[str, Any]) -> Any:
        if self.is_async:
            return self.run(self.graph.ainvoke(inp, config))
        return self.graph.invoke(inp, config)

    def history(self, config: dict[str, Any]) -> list[Any]:
        if self.is_async:

            async def collect() -> list[Any]:
                return [s async for s in self.graph.aget_state_history(config)]

            return self.run(collect())
        return list(self.graph.get_state_history(config))

    def update_state(self, config: dict[str, Any], values: Any) -> Any:
        if self.is_async:
            return self.run(self.graph.aupdate_state(config, values))
        return self.graph.update_state(config, values)

    def tuples(self, config: dict[str, Any] | None = None) -> list[Any]:
        if self.is_async:

            async def collect() -> list[Any]:
                return [t async for t in self.saver.alist(config)]

            return self.run(collect())
        return list(self.saver.list(config))

    def get_tuple(self, config: dict[str, Any]) -> Any:
        if self.is_async:
            return self.run(self.saver.aget_tuple(config))
        return self.saver.get_tuple(config)

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Run a saver method (its ``a`` twin for an async kind)."""
        if self.is_async:
            return self.run(getattr(self.saver, "a" + name)(*args, **kwargs))
        return getattr(self.saver, name)(*args, **kwargs)

    # -- what is stored ---------------------------------------------------------------

    def cold_tuples(self, config: dict[str, Any] | None = None) -> list[Any]:
        """Every tuple read by a new saver on the same storage (nothing cached)."""
        if self.kind == "memory":
            cold = InMemorySaver(**self.kw)
            cold.storage, cold.writes, cold.blobs, cold.items = (
                self.saver.storage,
                self.saver.writes,
                self.saver.blobs,
                self.saver.items,
            )
            return list(cold.list(config))
        if self.kind in ("sqlite", "aiosqlite"):
            return list(SqliteSaver(self.conn, **self.kw).list(config))
        import psycopg

        from stategraph.checkpoint.postgres import PostgresSaver

        with psycopg.connect(self.url, autocommit=True) as conn:
            return list(PostgresSaver(conn, **self.kw).list(config))

    def item_keys(self) -> list[tuple[str, str, bytes]]:
        """Every stored item: ``(thread_id, checkpoint_ns, hash)``."""
        if self.kind == "memory":
            return sorted(self.saver.items)
        if self.kind in ("sqlite", "aiosqlite"):
            rows = self.conn.execute("SELECT thread_id, checkpoint_ns, hash FROM items")
            return sorted((t, n, bytes(h)) for t, n, h in rows)
        rows = self.admin.execute(
            f"SELECT thread_id, checkpoint_ns, hash FROM {self.schema}.sg_checkpoint_items"
        )
        return sorted((t, n, bytes(h)) for t, n, h in rows)

    def referring(self) -> list[tuple[str, str, tuple[str, bytes]]]:
        """Every stored value and write: ``(thread_id, checkpoint_ns, (type, bytes))``."""
        if self.kind == "memory":
            out = [(k[0], k[1], b) for k, b in self.saver.blobs.items() if b is not None]
            for (t, n, _), bucket in self.saver.writes.items():
                out.extend((t, n, w[2]) for w in bucket.values())
            return out
        if self.kind in ("sqlite", "aiosqlite"):
            q = (
                "SELECT thread_id, checkpoint_ns, type, blob FROM blobs WHERE blob IS NOT NULL "
                "UNION ALL SELECT thread_id, checkpoint_ns, type, value FROM writes"
            )
            return [(t, n, (ty, bytes(b))) for t, n, ty, b in self.conn.execute(q)]
        s = self.schema
        q = (
            f"SELECT thread_id, checkpoint_ns, type, blob FROM {s}.sg_checkpoint_blobs "
            f"WHERE blob IS NOT NULL UNION ALL SELECT thread_id, checkpoint_ns, type, blob "
            f"FROM {s}.sg_checkpoint_writes"
        )
        return [(t, n, (ty, bytes(b))) for t, n, ty, b in self.admin.execute(q)]

    def referenced_keys(self) -> list[tuple[str, str, bytes]]:
        """The items the stored values and writes refer to."""
        by: dict[tuple[str, str], list[tuple[str, bytes]]] = {}
        for t, n, typed in self.referring():
            by.setdefault((t, n), []).append(typed)
        return sorted((t, n, h) for (t, n), typeds in by.items() for h in referenced(typeds))


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def shape(tuples: list[Any]) -> list[Any]:
    """What must be equal between two runs (ids, timestamps and versions differ)."""
    return [
        (
            t.checkpoint["channel_values"],
            t.metadata,
            [(w[1], w[2]) for w in t.pending_writes],
            t.parent_config is None,
        )
        for t in tuples
    ]


def snap(s: Any) -> Any:
    return (s.values, s.next, s.metadata, [(t.name, t.result) for t in s.tasks])


def test_each_distinct_message_is_stored_once(kind: str, tmp_path: Path) -> None:
    store = Store(kind, tmp_path)
    off = Store(kind, tmp_path, intern=False, name="off")
    try:
        for i in range(12):
            store.invoke({"messages": [human(i)]}, cfg())
            off.invoke({"messages": [human(i)]}, cfg())
        keys = store.item_keys()
        # 12 human + 12 AI messages, each once, though each appears in the input
        # value, the input write and the messages value (and the bot's write)
        assert len(keys) == 24
        assert len(set(keys)) == 24
        assert {k[0] for k in keys} == {"t"}
        assert store.referenced_keys() == keys
        assert any(typed[0] == INTERNED_TYPE for _, _, typed in store.referring())
        assert off.item_keys() == []
        assert not any(typed[0] == INTERNED_TYPE for _, _, typed in off.referring())
        state = store.tuples(cfg())[0].checkpoint["channel_values"]["messages"]
        assert [m.id for m in state] == [
            x for i in range(12) for x in (f"h{i:03}", f"a{2 * i + 1:03}")
        ]
        # and the stored bytes are well under the bytes stored whole
        size = sum(len(b) for _, _, (_, b) in store.referring())
        size += sum(len(k[2]) for k in keys)
        assert size * 2 < sum(len(b) for _, _, (_, b) in off.referring())
    finally:
        store.close()
        off.close()


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres", "apostgres"])
def test_interning_on_and_off_give_identical_histories(kind: str, tmp_path: Path) -> None:
    on = Store(kind, tmp_path)
    off = Store(kind, tmp_path, intern=False, name="off")
    try:
        stores = (on, off)
        for s in stores:
            # past a level-1 segment (32 versions) and with a removal on the way
            for i in range(20):
                s.invoke({"messages": [human(i)]}, cfg())
            s.invoke({"messages": [HumanMessage("forget 3", id="f1")]}, cfg())
        assert shape(on.tuples(cfg())) == shape(off.tuples(cfg()))
        assert shape(on.cold_tuples(cfg())) == shape(off.cold_tuples(cfg()))
        assert [snap(x) for x in on.history(cfg())] == [snap(x) for x in off.history(cfg())]
        latest = [s.get_tuple(cfg()) for s in stores]
        assert shape(latest[:1]) == shape(latest[1:])
        # replay, fork and update_state on an old checkpoint
        results = []
        for s in stores:
            old = s.history(cfg())[17]
            got = s.get_tuple(old.config)
            replayed = s.invoke(None, old.config)
            forked = s.update_state(old.config, {"messages": [human(900)]})
            after_fork = s.invoke({"messages": [human(901)]}, forked)
            results.append(
                (shape([got]), replayed, after_fork, snap(s.history(cfg())[0]), shape(s.tuples()))
            )
        assert results[0] == results[1]
    finally:
        on.close()
        off.close()


def retention_scenario(store: Store) -> None:
    """Two threads; thread t forgets its first messages, then runs two more runs."""
    for i in range(6):
        store.invoke({"messages": [human(i)]}, cfg("t", run_id=f"r{i}"))
        store.invoke({"messages": [human(100 + i)]}, cfg("u"))
    store.invoke({"messages": [HumanMessage("forget 4", id="f1")]}, cfg("t", run_id="forget"))
    store.invoke({"messages": [human(50)]}, cfg("t", run_id="last"))


def check_consistent(store: Store) -> None:
    """Every checkpoint reads back cold, and the items are exactly the referenced."""
    for t in store.cold_tuples():
        assert isinstance(t.checkpoint["channel_values"], dict)
    assert store.item_keys() == store.referenced_keys()


@pytest.mark.parametrize("op", ["prune", "keep_last", "delete_for_runs", "ttl"])
def test_retention_collects_unreferenced_items(kind: str, op: str, tmp_path: Path) -> None:
    kw: dict[str, Any] = {"ttl": {"default_ttl": 1}} if op == "ttl" else {}
    store = Store(kind, tmp_path, **kw)
    try:
        retention_scenario(store)
        before = store.item_keys()
        u_items = [k for k in before if k[0] == "u"]
        latest_u = shape([store.get_tuple(cfg("u"))])
        latest_t = store.get_tuple(cfg("t")).checkpoint["channel_values"]["messages"]
        if op == "prune":
            store.call("prune", ["t"])
        elif op == "keep_last":
            store.call("prune", ["t"], keep_last=2)
        elif op == "delete_for_runs":
            store.call("delete_for_runs", ["last"])
        else:
            # thread t expires: age its touch time
            if kind == "memory":
                store.saver._touched["t"] -= 3600
            elif kind in ("sqlite", "aiosqlite"):
                store.conn.execute(
                    "UPDATE thread_ttl SET touched_at = touched_at - 3600 WHERE thread_id = 't'"
                )
            else:
                store.admin.execute(
                    f"UPDATE {store.schema}.sg_checkpoint_thread_ttl SET touched_at = "
                    "touched_at - 3600 WHERE thread_id = 't'"
                )
            assert store.call("sweep") == 1
        after = store.item_keys()
        check_consistent(store)
        assert [k for k in after if k[0] == "u"] == u_items  # the other thread is intact
        assert shape([store.get_tuple(cfg("u"))]) == latest_u
        t_after = [k for k in after if k[0] == "t"]
        t_before = [k for k in before if k[0] == "t"]
        if op == "ttl":
            assert t_after == []
            assert store.get_tuple(cfg("t")) is None
            return
        # the forgotten messages (and for delete_for_runs, the last run's) are gone
        assert len(t_after) < len(t_before)
        if op == "delete_for_runs":
            msgs = store.get_tuple(cfg("t")).checkpoint["channel_values"]["messages"]
            assert "h050" not in [m.id for m in msgs]
        else:
            msgs = store.get_tuple(cfg("t")).checkpoint["channel_values"]["messages"]
            assert msgs == latest_t
            # one item per message of the latest state (the forget message is small)
            assert len(t_after) == len([m for m in msgs if m.id != "f1"])
        # and the thread keeps working
        store.invoke({"messages": [human(60)]}, cfg("t"))
        check_consistent(store)
    finally:
        store.close()


def test_delete_thread_deletes_its_items(kind: str, tmp_path: Path) -> None:
    store = Store(kind, tmp_path)
    try:
        retention_scenario(store)
        u_items = [k for k in store.item_keys() if k[0] == "u"]
        store.call("delete_thread", "t")
        assert store.item_keys() == u_items
        check_consistent(store)
    finally:
        store.close()


def test_copy_thread_copies_the_items(kind: str, tmp_path: Path) -> None:
    store = Store(kind, tmp_path)
    try:
        retention_scenario(store)
        expected = shape(store.tuples(cfg("t")))
        n = len([k for k in store.item_keys() if k[0] == "t"])
        store.call("copy_thread", "t", "copy")
        store.call("delete_thread", "t")
        assert len([k for k in store.item_keys() if k[0] == "copy"]) == n
        assert shape(store.cold_tuples(cfg("copy"))) == expected
        store.invoke({"messages": [human(70)]}, cfg("copy"))
        check_consistent(store)
    finally:
        store.close()


def test_encrypted_items_never_stored_in_clear(tmp_path: Path) -> None:
    serde = EncryptedSerializer.from_aes(key=b"0123456789abcdef")
    path = tmp_path / "enc.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        saver.serde = serde
        g = chat(saver)
        for i in range(5):
            g.invoke({"messages": [human(i)]}, cfg())
        msgs = g.get_state(cfg()).values["messages"]
        assert [m.id for m in msgs][-2:] == ["h004", "a009"]
        rows = saver.conn.execute("SELECT type FROM items").fetchall()
        assert rows and all(r[0] == "sg-sealed" for r in rows)  # encrypted, bound to place
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = path.read_bytes()
    for extra in tmp_path.glob("enc.sqlite-*"):
        data += extra.read_bytes()
    assert b"quick brown fox" not in data
    assert b"h003" not in data  # not even the ids
    # the same run without encryption does store the text (the check can fail)
    plain = tmp_path / "plain.sqlite"
    with SqliteSaver.from_conn_string(str(plain)) as saver:
        chat(saver).invoke({"messages": [human(0)]}, cfg())
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert b"quick brown fox" in plain.read_bytes()


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
def test_missing_or_corrupt_item_raises(kind: str, tmp_path: Path) -> None:
    store = Store(kind, tmp_path)
    try:
        for i in range(3):
            store.invoke({"messages": [human(i)]}, cfg())
        victim = store.item_keys()[0]
        if kind == "memory":
            del store.saver.items[victim]
        elif kind == "sqlite":
            store.conn.execute("DELETE FROM items WHERE hash = ?", (victim[2],))
        else:
            store.admin.execute(
                f"DELETE FROM {store.schema}.sg_checkpoint_items WHERE hash = %s", (victim[2],)
            )
        with pytest.raises(DeserializationError) as err:
            store.cold_tuples(cfg())
        message = str(err.value)
        assert "Thread 't'" in message and "channel 'messages'" in message
        assert victim[2].hex() in message
    finally:
        store.close()


def test_corrupt_item_bytes_raise(tmp_path: Path) -> None:
    store = Store("sqlite", tmp_path)
    try:
        for i in range(3):
            store.invoke({"messages": [human(i)]}, cfg())
        victim = store.item_keys()[0]
        store.conn.execute(
            "UPDATE items SET value = CAST('garbage' AS BLOB) WHERE hash = ?", (victim[2],)
        )
        with pytest.raises(DeserializationError, match=f"{victim[2].hex()} is corrupt"):
            store.cold_tuples(cfg())
        # a corrupt reference list (the value's own bytes) is reported too
        store.conn.execute(
            "UPDATE writes SET value = CAST('x' AS BLOB) WHERE type = ?", (INTERNED_TYPE,)
        )
        store.conn.execute("DELETE FROM items")
        with pytest.raises(DeserializationError):
            store.cold_tuples(cfg())
    finally:
        store.close()


def test_interning_off_reads_interned_rows(tmp_path: Path) -> None:
    """A saver with interning off still reads (and prunes) rows written with it on."""
    store = Store("sqlite", tmp_path)
    try:
        for i in range(4):
            store.invoke({"messages": [human(i)]}, cfg())
        expected = shape(store.tuples(cfg()))
        off = SqliteSaver(store.conn, intern_items=False)
        assert shape(list(off.list(cfg()))) == expected
        chat(off).invoke({"messages": [human(9)]}, cfg())
        off.prune(["t"])
        assert [m.id for m in chat(off).get_state(cfg()).values["messages"]][-2:] == [
            "h009",
            "a009",
        ]
        check_consistent(store)
    finally:
        store.close()


def test_one_item_query_per_read(tmp_path: Path) -> None:
    store = Store("sqlite", tmp_path)
    try:
        for i in range(5):
            store.invoke({"messages": [human(i)]}, cfg())
        statements: list[str] = []
        store.conn.set_trace_callback(statements.append)
        cold = SqliteSaver(store.conn)
        cold.setup()
        statements.clear()
        cold.get_tuple(cfg())
        assert sum("FROM items" in s for s in statements) == 1
        store.conn.set_trace_callback(None)
    finally:
        store.close()


def test_sqlite_records_format_6_and_refuses_7(tmp_path: Path) -> None:
    store = Store("sqlite", tmp_path)
    try:
        store.invoke({"messages": [human(0)]}, cfg())
        row = store.conn.execute("SELECT version FROM storage_format").fetchone()
        assert row == (6,)
        store.conn.execute("UPDATE storage_format SET version = 7")
        with pytest.raises(RuntimeError, match="format 7"):
            SqliteSaver(store.conn).get_tuple(cfg())
    finally:
        store.close()


def test_sweep_keeps_a_thread_touched_since(tmp_path: Path) -> None:
    store = Store("memory", tmp_path, ttl={"default_ttl": 1})
    try:
        store.invoke({"messages": [human(0)]}, cfg())
        n = len(store.item_keys())
        store.saver._touched["t"] = time.time()
        assert store.saver.sweep() == 0
        assert len(store.item_keys()) == n
    finally:
        store.close()


def test_a_long_list_of_small_elements_is_stored_whole() -> None:
    """A long list of numbers or short strings is not examined element by element: it
    is stored in serde's own whole encoding; a long list of large messages is
    interned, and a mixed chat list keeps its small messages inline."""
    from stategraph.checkpoint._intern import SHORT_LIST, Interner

    saver = InMemorySaver()
    interner = Interner(saver)
    numbers = list(range(5000))
    items: dict[bytes, Any] = {}
    assert interner.dump("counts", numbers, items) == saver.serde.dumps_typed(numbers)
    assert items == {}
    words = [f"w{i}" for i in range(SHORT_LIST + 1)]
    assert interner.dump("words", words, items) == saver.serde.dumps_typed(words)
    big = [HumanMessage(TEXT, id=f"b{i}") for i in range(SHORT_LIST + 1)]
    typed = interner.dump("messages", big, items)
    assert typed[0] == INTERNED_TYPE and len(items) == SHORT_LIST + 1
    mixed = [HumanMessage("ok", id="s0"), *big]
    items2: dict[bytes, Any] = {}
    typed = interner.dump("messages", mixed, items2)
    assert typed[0] == INTERNED_TYPE and set(items2) == set(items)
    # the __start__ map: a long list of small values inside it is stored whole too
    start = {"counts": numbers, "messages": big[:2]}
    items3: dict[bytes, Any] = {}
    assert interner.dump("__start__", start, items3)[0] == INTERNED_TYPE
    assert len(items3) == 2


@pytest.mark.parametrize(
    "payload",
    [
        [1, 0, 5],  # elements not a list
        [1, 1, [["k", 1]]],  # a dict entry with two fields
        [1, 1, [[1, 0, ["msgpack"]]]],  # an inline element with no bytes
        [1, 0, [[]]],  # an empty inline element
    ],
)
def test_a_malformed_interned_value_is_a_deserialization_error(payload: list[Any]) -> None:
    import ormsgpack

    from stategraph.checkpoint._intern import Resolver, refs

    saver = InMemorySaver()
    typed = (INTERNED_TYPE, ormsgpack.packb(payload))
    resolver = Resolver(saver.serde, "t", lambda hashes: {})
    with pytest.raises(DeserializationError, match="Thread 't', channel 'c'"):
        resolver.loads(typed, "c")
    try:
        list(refs(typed))
    except DeserializationError:
        pass  # refusing is fine; any other exception type is not


def test_an_object_held_several_times_is_serialized_once() -> None:
    """A list holding the same object many times (a state that appends a reference it
    already holds) costs one serialization of that object, and stores one item."""
    saver = InMemorySaver()
    calls: list[Any] = []
    inner = saver.serde

    class Counting:
        def dumps_typed(self, obj: Any) -> Any:
            calls.append(obj)
            return inner.dumps_typed(obj)

        def loads_typed(self, data: Any) -> Any:
            return inner.loads_typed(data)

    saver.serde = Counting()  # type: ignore[assignment]
    from stategraph.checkpoint._intern import Interner

    payload = {"text": TEXT, "n": list(range(20))}
    value = [payload] * 300 + [dict(payload)]
    items: dict[bytes, Any] = {}
    typed = Interner(saver).dump("docs", value, items)
    assert typed[0] == INTERNED_TYPE
    assert len(items) == 1  # equal content, one item
    assert len([c for c in calls if c is payload]) == 1
    assert len(calls) == 2  # the shared object once, its equal copy once
    from stategraph.checkpoint._intern import Resolver

    resolver = Resolver(inner, "t", lambda hashes: {h: items[h] for h in hashes})
    assert resolver.loads(typed, "docs") == value
