"""Importing LangGraph's threads (issue 10): databases written by real LangGraph 1.2
(``tests/data/langgraph``, made by ``make_langgraph_dbs.py``) are imported into every
stategraph saver and resumed with the same graphs written for stategraph; the results
equal what LangGraph itself returned (``expected.json``). LangGraph databases are never
modified by stategraph's savers."""

from __future__ import annotations

import hashlib
import json
import operator
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from stategraph.checkpoint.langgraph_import import ImportReport, import_langgraph
from stategraph.checkpoint.langgraph_import._decode import LangGraphDecoder
from stategraph.checkpoint.langgraph_import._guard import LangGraphDatabaseError
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.serde.base import DeserializationError, UnknownTypeWarning
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.cli._main import main
from stategraph.graph import START, MessagesState, StateGraph
from stategraph.messages import AIMessage, HumanMessage
from stategraph.types import Command, Interrupt, interrupt

DATA = Path(__file__).resolve().parent.parent / "data" / "langgraph"
SOURCE = DATA / "lg_threads.sqlite"
EXPECTED = json.loads((DATA / "expected.json").read_text())
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "checkpoint"))


# -- the graphs of make_langgraph_dbs.py, written for stategraph ---------------------


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
        return {"decision": interrupt({"question": "approve?", "items": state["items"]})}

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


A_CALLS: list[int] = []


def fanout_graph(saver: Any) -> Any:
    def a(state: Fan) -> dict[str, Any]:
        A_CALLS.append(1)
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


S1_CALLS: list[int] = []


def sub_graph(saver: Any) -> Any:
    def s1(state: Sub) -> dict[str, Any]:
        S1_CALLS.append(1)
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


def plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "content") and hasattr(value, "type"):
        return {"type": value.type, "content": value.content, "id": value.id}
    if isinstance(value, Interrupt):
        return {"interrupt": plain(value.value)}
    return value


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


GRAPHS = {"chat-1": chat_graph, "hitl-1": hitl_graph, "fanout-1": fanout_graph, "sub-1": sub_graph}


def import_with_graphs(source: Any, saver: Any) -> ImportReport:
    """Import each thread with its application's graph (as a ported app would)."""
    total = ImportReport()
    for thread, make in sorted(GRAPHS.items()):
        report = import_langgraph(source, saver, threads=[thread], graph=make(None))
        total.threads += report.threads
        total.checkpoints += report.checkpoints
        total.writes += report.writes
    return total


def resume_all(saver: Any) -> dict[str, Any]:
    """What make_langgraph_dbs.resume_all records, with stategraph."""
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
    A_CALLS.clear()
    out["fanout-1"] = {
        "before": plain(state.values),
        "next": sorted(state.next),
        "result": plain(fan.invoke(Command(resume="ok"), config)),
    }
    assert A_CALLS == []  # a's write was a pending write: a did not run again
    sub = sub_graph(saver)
    config = cfg("sub-1")
    state = sub.get_state(config, subgraphs=True)
    S1_CALLS.clear()
    out["sub-1"] = {
        "before": plain(state.values),
        "next": list(state.next),
        "result": plain(sub.invoke(Command(resume="deep"), config)),
    }
    assert S1_CALLS == []  # the subgraph resumed from its own checkpoint
    return out


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def source(tmp_path: Path) -> Path:
    copy = tmp_path / "langgraph.sqlite"
    shutil.copy(SOURCE, copy)
    return copy


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield InMemorySaver()
    elif request.param == "sqlite":
        with SqliteSaver.from_conn_string(str(tmp_path / "sg.sqlite")) as saver:
            yield saver
    else:
        from saver_harness import PgSchema

        from stategraph.checkpoint.postgres import PostgresSaver

        schema = PgSchema()
        conn = schema.connect()
        try:
            yield PostgresSaver(conn)
        finally:
            conn.close()
            schema.drop()


def test_imported_threads_resume_as_langgraph_resumes_them(source: Path, target: Any) -> None:
    before = digest(source)
    report = import_with_graphs(source, target)
    assert report == ImportReport(
        threads=["chat-1", "fanout-1", "hitl-1", "sub-1"], checkpoints=16, writes=25
    )
    assert resume_all(target) == EXPECTED
    assert digest(source) == before  # read-only


def test_ids_parents_metadata_and_interrupts_are_kept(source: Path) -> None:
    saver = InMemorySaver()
    import_langgraph(source, saver)
    conn = sqlite3.connect(source)
    rows = conn.execute(
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM checkpoints"
    ).fetchall()
    conn.close()
    assert len(rows) == 16
    for thread, ns, checkpoint_id, parent in rows:
        tup = saver.get_tuple(
            {
                "configurable": {
                    "thread_id": thread,
                    "checkpoint_ns": ns,
                    "checkpoint_id": checkpoint_id,
                }
            }
        )
        assert tup is not None
        got_parent = (
            tup.parent_config["configurable"]["checkpoint_id"] if tup.parent_config else None
        )
        assert got_parent == parent
    chat = list(saver.list(cfg("chat-1")))
    assert {t.metadata.get("user_id") for t in chat} == {"alice"}
    assert [t.metadata["step"] for t in chat] == [4, 3, 2, 1, 0, -1]
    assert (
        next(iter(saver.list(None, filter={"user_id": "bob"}))).config["configurable"]["thread_id"]
        == "hitl-1"
    )
    latest = saver.get_tuple(cfg("hitl-1"))
    assert latest is not None
    interrupts = [v for _, c, v in latest.pending_writes if c == "__interrupt__"]
    assert len(interrupts) == 1 and isinstance(interrupts[0][0], Interrupt)
    assert interrupts[0][0].value == {"question": "approve?", "items": ["start", "draft"]}
    chat_latest = saver.get_tuple(cfg("chat-1"))
    assert chat_latest is not None
    messages = chat_latest.checkpoint["channel_values"]["messages"]
    assert all(isinstance(m, (HumanMessage, AIMessage)) for m in messages)
    assert [m.id for m in messages] == ["h-1", "ai-1", "h-2", "ai-3"]


def test_without_the_graph_resuming_gives_the_same_result_running_finished_tasks_again(
    source: Path,
) -> None:
    saver = InMemorySaver()
    import_langgraph(source, saver)
    fan = fanout_graph(saver)
    A_CALLS.clear()
    assert (
        plain(fan.invoke(Command(resume="ok"), cfg("fanout-1"))) == EXPECTED["fanout-1"]["result"]
    )
    assert A_CALLS == [1]


def test_only_some_threads(source: Path) -> None:
    saver = InMemorySaver()
    assert import_langgraph(source, saver, threads=["hitl-1"]).threads == ["hitl-1"]
    assert saver.get_tuple(cfg("chat-1")) is None


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_stategraph_savers_refuse_a_langgraph_file_without_touching_it(
    source: Path, kind: str
) -> None:
    before = digest(source)
    if kind == "sync":
        with SqliteSaver.from_conn_string(str(source)) as saver:
            with pytest.raises(LangGraphDatabaseError, match="import-langgraph"):
                list(saver.list(None))
            with pytest.raises(LangGraphDatabaseError, match="never modifies it"):
                saver.put(
                    cfg("x"),
                    {
                        "v": 4,
                        "id": "1",
                        "ts": "",
                        "channel_values": {},  # type: ignore[typeddict-item]
                        "channel_versions": {},
                        "versions_seen": {},
                        "updated_channels": None,
                    },
                    {},
                    {},
                )
    else:
        from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(str(source)) as asaver:
            with pytest.raises(LangGraphDatabaseError, match="import-langgraph"):
                await asaver.aget_tuple(cfg("chat-1"))
    assert digest(source) == before
    assert not Path(str(source) + "-wal").exists()


def test_postgres_savers_refuse_a_langgraph_schema_without_touching_it() -> None:
    import psycopg
    from saver_harness import PgSchema

    from stategraph.checkpoint.postgres import PostgresSaver

    schema = PgSchema()
    try:
        with schema.connect() as conn:
            conn.execute("CREATE TABLE checkpoints (thread_id text)")
            conn.execute("CREATE TABLE checkpoint_migrations (v integer)")
            with pytest.raises(LangGraphDatabaseError, match="import-langgraph"):
                PostgresSaver(conn).setup()
            tables = conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
                "ORDER BY 1",
                (schema.name,),
            ).fetchall()
        assert tables == [("checkpoint_migrations",), ("checkpoints",)]
        assert isinstance(conn, psycopg.Connection)
    finally:
        schema.drop()


def test_cli_command(source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out.sqlite"
    assert main(["import-langgraph", str(source), "--sqlite", str(target), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "threads": ["chat-1", "fanout-1", "hitl-1", "sub-1"],
        "checkpoints": 16,
        "writes": 25,
        "skipped": [],
    }
    assert main(["threads", "--sqlite", str(target), "--json"]) == 0
    assert "hitl-1" in capsys.readouterr().out
    assert main(["threads", "--sqlite", str(source)]) == 2
    assert "import-langgraph" in capsys.readouterr().err
    assert (
        main(["import-langgraph", str(tmp_path / "missing.sqlite"), "--sqlite", str(target)]) == 3
    )
    assert main(["import-langgraph", str(source)]) == 2


def test_postgres_source_written_by_langgraph(tmp_path: Path) -> None:
    lg_python = Path(os.environ.get("STATEGRAPH_LANGGRAPH_PYTHON", "/work/lgvenv/bin/python"))
    if not lg_python.exists():
        pytest.skip(
            f"LangGraph's interpreter ({lg_python}; set STATEGRAPH_LANGGRAPH_PYTHON) is not "
            "here to write a PostgreSQL source (test_import_all_or_nothing.py reads a dump)"
        )
    from saver_harness import PgSchema

    schema = PgSchema()
    try:
        subprocess.run(
            [str(lg_python), str(DATA / "make_langgraph_dbs.py"), "--postgres", schema.conninfo],
            check=True,
            capture_output=True,
            timeout=120,
            # LangGraph's own interpreter must not load this one's modules
            env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")},
        )
        with SqliteSaver.from_conn_string(str(tmp_path / "sg.sqlite")) as saver:
            report = import_with_graphs(schema.conninfo, saver)
            assert report.threads == ["chat-1", "fanout-1", "hitl-1", "sub-1"]
            assert resume_all(saver) == EXPECTED
    finally:
        schema.drop()


def test_decoder_allow_list_json_and_refusals() -> None:
    import dataclasses

    import ormsgpack

    @dataclasses.dataclass
    class Item:
        x: int

    Item.__qualname__ = "Item"
    ext = ormsgpack.Ext(2, ormsgpack.packb(["__main__", "Item", {"x": 1}]))
    data = ("msgpack", ormsgpack.packb({"item": ext}))
    assert LangGraphDecoder([Item]).loads_typed(data) == {"item": Item(1)}
    with pytest.warns(UnknownTypeWarning, match="allowed_types"):
        assert LangGraphDecoder().loads_typed(data) == {"item": {"x": 1}}
    with pytest.raises(DeserializationError, match="not allowed"):
        LangGraphDecoder(strict=True).loads_typed(data)
    evil = ormsgpack.Ext(3, ormsgpack.packb(["os", "system", "echo hi", "__call__"]))
    with pytest.warns(UnknownTypeWarning, match="os.system"):
        assert LangGraphDecoder().loads_typed(("msgpack", ormsgpack.packb(evil))) == "echo hi"
    with pytest.raises(DeserializationError, match="pickle"):
        LangGraphDecoder().loads_typed(("pickle", b"\x80\x04N."))
    old_json = json.dumps(
        {
            "messages": [
                {
                    "lc": 1,
                    "type": "constructor",
                    "id": ["langchain", "schema", "messages", "HumanMessage"],
                    "kwargs": {"content": "hi", "id": "m1", "type": "human"},
                }
            ],
            "pause": {
                "lc": 2,
                "type": "constructor",
                "id": ["langgraph", "types", "Interrupt"],
                "kwargs": {"value": "q", "id": "i1"},
            },
        }
    ).encode()
    out = LangGraphDecoder().loads_typed(("json", old_json))
    assert out["messages"] == [HumanMessage(content="hi", id="m1")]
    assert out["pause"] == Interrupt(value="q", id="i1")
    with pytest.raises(DeserializationError):
        LangGraphDecoder().loads_typed(("json", b"[" * 10000))
    big_set = ormsgpack.Ext(0, ormsgpack.packb(["builtins", "set", [1, 2, 3]]))
    assert LangGraphDecoder().loads_typed(("msgpack", ormsgpack.packb(big_set))) == {1, 2, 3}


def test_pending_interrupts_resume_by_id_after_import(source: Path) -> None:
    saver = InMemorySaver()
    import_with_graphs(source, saver)
    hitl = hitl_graph(saver)
    state = hitl.get_state(cfg("hitl-1"))
    (pending,) = [i for t in state.tasks for i in t.interrupts]
    out = hitl.invoke(Command(resume={pending.id: "by-id"}), cfg("hitl-1"))
    assert out["items"][-1] == "done:by-id"
