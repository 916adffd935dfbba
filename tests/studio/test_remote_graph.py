"""``RemoteGraph`` driving a graph served by a real ``stategraph studio`` server."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.errors import GraphInterrupt
from stategraph.graph import START, StateGraph
from stategraph.pregel.remote import RemoteError, RemoteGraph, StreamPart
from stategraph.types import Command, Interrupt, StateSnapshot, StateUpdate


def test_invoke_interrupt_and_resume(live_studio):
    server, db = live_studio
    remote = RemoteGraph("agent", url=server.url)
    config = {"configurable": {"thread_id": "r1"}}
    out = remote.invoke({"topic": "Comets"}, config)
    assert out["draft"].startswith("Comets: a short article")
    [intr] = out["__interrupt__"]
    assert intr["value"]["question"] == "Publish this draft?"
    state = remote.get_state(config)
    assert isinstance(state, StateSnapshot)
    assert state.next == ("review",)
    assert state.tasks[0].name == "review"
    assert isinstance(state.interrupts[0], Interrupt)
    assert state.interrupts[0].response_schema["required"] == ["approved"]
    done = remote.invoke(Command(resume={"approved": True}), config)
    assert done["status"] == "published" and done["approved"] is True
    # the answer is in the database the studio serves
    with SqliteSaver.from_conn_string(db) as saver:
        latest = saver.get_tuple({"configurable": {"thread_id": "r1"}})
        assert latest.checkpoint["channel_values"]["status"] == "published"


def test_stream_shapes(live_studio):
    server, _db = live_studio
    remote = RemoteGraph("agent", url=server.url)
    config = {"configurable": {"thread_id": "r2"}}
    updates = list(remote.stream({"topic": "Bees"}, config))
    assert updates[0]["research"]["sources"] == ["encyclopedia: Bees", "expert on Bees"]
    assert updates[-1]["__interrupt__"][0]["value"]["draft"].startswith("Bees")
    values = list(remote.stream(Command(resume={"approved": False}), config, stream_mode="values"))
    assert values[-1]["status"] == "rejected"
    parts = list(remote.stream({"topic": "Ants"}, {"configurable": {"thread_id": "r3"}},
                               stream_mode=["updates", "values"]))  # fmt: skip
    assert all(isinstance(p, StreamPart) for p in parts)
    assert {p.event for p in parts} == {"updates", "values"}
    sub = list(remote.stream({"topic": "Elk"}, {"configurable": {"thread_id": "r4"}},
                             subgraphs=True))  # fmt: skip
    namespaces = {ns for ns, _chunk in sub}
    assert () in namespaces
    assert any(ns and ns[0].startswith("research:") for ns in namespaces)


def test_history_update_state_and_graph(live_studio):
    server, _db = live_studio
    remote = RemoteGraph("agent", url=server.url)
    config = {"configurable": {"thread_id": "waiting"}}
    history = list(remote.get_state_history(config, limit=4))
    assert len(history) == 4
    assert history[0].next == ("review",)
    assert (
        history[1].config["configurable"]["checkpoint_id"]
        == history[0].parent_config["configurable"]["checkpoint_id"]
    )
    past = remote.get_state(history[2].config)
    assert past.config == history[2].config
    new_config = remote.update_state(config, {"comment": "remote edit"}, as_node="review")
    assert new_config["configurable"]["thread_id"] == "waiting"
    assert remote.get_state(config).values["comment"] == "remote edit"
    drawing = remote.get_graph(xray=True)
    assert {"research:search", "review"} <= set(drawing.nodes)
    assert "review" in drawing.draw_mermaid()


async def test_async_twins(live_studio):
    server, _db = live_studio
    remote = RemoteGraph("agent", url=server.url)
    config = {"configurable": {"thread_id": "ra"}}
    out = await remote.ainvoke({"topic": "Moths"}, config)
    assert "__interrupt__" in out
    chunks = [c async for c in remote.astream(Command(resume={"approved": True}), config)]
    assert chunks[-1] == {"publish": {"status": "published"}}
    state = await remote.aget_state(config)
    assert state.values["status"] == "published"
    history = [s async for s in remote.aget_state_history(config, limit=2)]
    assert history[0].values == state.values
    await remote.aupdate_state(config, {"comment": "async"}, as_node="review")
    assert (await remote.aget_state(config)).values["comment"] == "async"
    assert "write" in (await remote.aget_graph()).nodes


def test_remote_graph_as_a_node_pauses_the_local_graph(live_studio):
    server, _db = live_studio
    remote = RemoteGraph("agent", url=server.url, name="remote_writer")

    class Outer(TypedDict, total=False):
        topic: str
        draft: str
        status: str
        sources: list[str]
        approved: bool
        comment: str
        log: Annotated[list[str], operator.add]

    def intro(state: Outer) -> dict:
        return {"log": ["intro"]}

    outer = StateGraph(Outer)
    outer.add_node("intro", intro)
    outer.add_node("remote_writer", remote)
    outer.add_edge(START, "intro")
    outer.add_edge("intro", "remote_writer")
    app = outer.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "outer-1"}}
    paused = app.invoke({"topic": "Kelp"}, config)
    assert paused["__interrupt__"][0].value["question"] == "Publish this draft?"
    assert app.get_state(config).next == ("remote_writer",)
    done = app.invoke(Command(resume={"approved": True}), config)
    assert done["status"] == "published" and done["draft"].startswith("Kelp")


def test_errors_are_clear(live_studio):
    server, _db = live_studio
    remote = RemoteGraph("agent", url=server.url)
    with pytest.raises(ValueError, match="thread_id"):
        remote.get_state({})
    with pytest.raises(RemoteError, match="404"):
        remote.get_state({"configurable": {"thread_id": "no-such-thread"}})
    config = {"configurable": {"thread_id": "rf"}}
    remote.invoke({"topic": "forbidden"}, config)
    with pytest.raises(RemoteError, match="forbidden"):
        remote.invoke(Command(resume={"approved": True}), config)
    with pytest.raises(RemoteError, match="No assistant 'other'"):
        RemoteGraph("other", url=server.url).invoke({"topic": "x"})
    with pytest.raises(ValueError, match="url"):
        RemoteGraph("agent", url="ftp://nowhere")


def test_subgraph_call_raises_graph_interrupt(live_studio):
    server, _db = live_studio
    remote = RemoteGraph("agent", url=server.url)
    config = {"configurable": {"thread_id": "rs", "checkpoint_ns": "outer:1"}}
    with pytest.raises(GraphInterrupt) as info:
        list(remote.stream({"topic": "Seals"}, config, stream_mode="values"))
    assert info.value.interrupts[0].value["draft"].startswith("Seals")


def test_messages_stream_token_by_token(tmp_path):
    import sqlite3

    from stategraph.graph import MessagesState
    from stategraph.studio._reading import thread_index_for
    from stategraph.studio.app import create_app
    from stategraph.testing.chat_model import FakeChatModel

    from .conftest import LiveServer

    model = FakeChatModel(["Hello there, friend."], cycle=True)

    def chat(state: MessagesState) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    db = str(tmp_path / "chat.sqlite")
    conn = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
    saver = SqliteSaver(conn)
    saver.setup()
    app = create_app(
        saver, graph=builder.compile(), index=thread_index_for(saver, sqlite=db), allow_writes=True
    )
    with LiveServer(app) as server:
        remote = RemoteGraph("agent", url=server.url)
        config = {"configurable": {"thread_id": "chat-1"}}
        parts = list(
            remote.stream(
                {"messages": [{"role": "user", "content": "hi"}]}, config, stream_mode="messages"
            )
        )
        assert parts and all(isinstance(p, tuple) and len(p) == 2 for p in parts)
        assert "".join(chunk["content"] for chunk, _meta in parts) == "Hello there, friend."
        assert {meta["langgraph_node"] for _chunk, meta in parts} == {"chat"}
        final = remote.get_state(config).values["messages"]
        assert [m["type"] for m in final] == ["human", "ai"]
        assert final[1]["content"] == "Hello there, friend."
    conn.close()


class _SlowSaver(SqliteSaver):
    """A saver whose writes lag: a checkpoint lands well after its step's events."""

    def put(self, config, checkpoint, metadata, new_versions):  # type: ignore[no-untyped-def]
        import time

        time.sleep(0.15)
        return super().put(config, checkpoint, metadata, new_versions)


def test_remote_node_waits_for_the_paused_run_to_be_saved(demo_db, demo):
    """The interrupt event of a remote run can arrive before the server saved the
    paused checkpoint; the node must not report the pause until the run has ended,
    or the resume that follows reads the thread before the pause and starts over."""
    import sqlite3

    from stategraph.studio.app import create_app

    from .conftest import LiveServer

    conn = sqlite3.connect(demo_db, check_same_thread=False, isolation_level=None)
    try:
        app = create_app(_SlowSaver(conn), graph=demo.graph, allow_writes=True)
        with LiveServer(app) as server:
            remote = RemoteGraph("agent", url=server.url, name="remote_writer")

            class Outer(TypedDict, total=False):
                topic: str
                draft: str
                status: str
                sources: list[str]
                approved: bool
                comment: str

            outer = StateGraph(Outer)
            outer.add_node("remote_writer", remote)
            outer.add_edge(START, "remote_writer")
            local = outer.compile(checkpointer=InMemorySaver())
            config = {"configurable": {"thread_id": "slow-1"}}
            paused = local.invoke({"topic": "Tides"}, config)
            assert paused["__interrupt__"][0].value["question"] == "Publish this draft?"
            done = local.invoke(Command(resume={"approved": True}), config)
            assert done["status"] == "published"
            assert done["draft"].startswith("Tides")
    finally:
        conn.close()


def test_a_resume_whose_remote_question_was_answered_elsewhere_is_refused(live_studio):
    """The remote thread was resumed directly on the server while the local graph waited
    on its question: resuming the local graph must not send the answer as a new input
    (that would start the remote graph over with the local state)."""
    server, _db = live_studio
    remote = RemoteGraph("agent", url=server.url, name="remote_writer")

    class Outer(TypedDict, total=False):
        topic: str
        draft: str
        status: str
        sources: list[str]
        approved: bool
        comment: str

    outer = StateGraph(Outer)
    outer.add_node("remote_writer", remote)
    outer.add_edge(START, "remote_writer")
    local = outer.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "elsewhere-1"}}
    local.invoke({"topic": "Reefs"}, config)
    remote.invoke(Command(resume={"approved": False}), config)  # answered on the server
    before = len(list(remote.get_state_history(config, limit=50)))
    with pytest.raises(RemoteError, match="is being resumed, but the remote thread waits on no"):
        local.invoke(Command(resume={"approved": True}), config)
    assert remote.get_state(config).values["status"] == "rejected"
    assert len(list(remote.get_state_history(config, limit=50))) == before
    assert local.get_state(config).next == ("remote_writer",)


def test_bulk_update_state_saves_one_checkpoint_per_superstep(live_studio):
    server, _db = live_studio
    remote = RemoteGraph("agent", url=server.url)
    config = {"configurable": {"thread_id": "bulk"}}
    remote.invoke({"topic": "Owls"}, config)
    before = len(list(remote.get_state_history(config)))
    last = remote.bulk_update_state(
        config,
        [
            [StateUpdate({"comment": "first"}, as_node="review")],
            [StateUpdate({"comment": "second"})],
        ],
    )
    history = list(remote.get_state_history(config))
    assert len(history) == before + 2
    assert [s.values["comment"] for s in history[:2]] == ["second", "first"]
    # the returned config names the newest checkpoint, which the second update made
    assert (
        last["configurable"]["checkpoint_id"] == history[0].config["configurable"]["checkpoint_id"]
    )
    assert history[0].parent_config == history[1].config


@pytest.mark.parametrize(
    ("supersteps", "message"),
    [
        ([], "got no supersteps"),
        ([[StateUpdate({"comment": "a"})], []], "superstep 1 has 0 updates"),
        ([[StateUpdate({"comment": "a"}), StateUpdate({"comment": "b"})]], "superstep 0 has 2"),
        ([[StateUpdate({"comment": "a"}, task_id="t-1")]], "task_id='t-1'"),
    ],
)
def test_bulk_update_state_refuses_what_the_server_cannot_take_before_sending(
    live_studio, supersteps, message
):
    server, _db = live_studio
    remote = RemoteGraph("agent", url=server.url)
    config = {"configurable": {"thread_id": "bulk-refused"}}
    remote.invoke({"topic": "Voles"}, config)
    before = list(remote.get_state_history(config))
    with pytest.raises(ValueError, match=message):
        remote.bulk_update_state(config, supersteps)
    assert list(remote.get_state_history(config)) == before


async def test_abulk_update_state(live_studio):
    server, _db = live_studio
    remote = RemoteGraph("agent", url=server.url)
    config = {"configurable": {"thread_id": "abulk"}}
    await remote.ainvoke({"topic": "Newts"}, config)
    await remote.abulk_update_state(
        config, [[StateUpdate({"comment": "x"})], [StateUpdate({"comment": "y"})]]
    )
    assert (await remote.aget_state(config)).values["comment"] == "y"
    with pytest.raises(ValueError, match="superstep 0 has 2"):
        await remote.abulk_update_state(
            config, [[StateUpdate({"comment": "p"}), StateUpdate({"comment": "q"})]]
        )
    assert (await remote.aget_state(config)).values["comment"] == "y"
