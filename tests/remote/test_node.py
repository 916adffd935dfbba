"""RemoteGraph as a node of a local graph: remote interrupts are asked locally, and a
resume answer is never silently turned into a fresh input."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.pregel.remote import RemoteError, RemoteGraph
from stategraph.types import Command

from .conftest import CONFIG, Caller
from .hostile import HostileServer, Received, Wire, event, json_answer, sse_answer, state

RUN = "/threads/t1/runs/stream"
STATE = "/threads/t1/state"
ASK = {"value": {"question": "Publish?"}, "id": "remote-i1"}


class Outer(TypedDict, total=False):
    topic: str
    status: str
    log: Annotated[list[str], operator.add]


def local_graph(server: HostileServer) -> Any:
    builder = StateGraph(Outer)
    builder.add_node("writer", RemoteGraph("agent", url=server.url, timeout=10))
    builder.add_edge(START, "writer")
    return builder.compile(checkpointer=InMemorySaver())


class RemoteThread:
    """A scripted remote thread: what ``get_state`` answers, and what runs do."""

    def __init__(self, server: HostileServer) -> None:
        self.state: dict[str, Any] | None = None  # None: 404
        server.route("GET", STATE, self.get_state)
        server.route("POST", RUN, self.run)

    def get_state(self, req: Received, wire: Wire) -> None:
        if self.state is None:
            json_answer({"detail": "Thread not found"}, 404)(req, wire)
        else:
            json_answer(self.state)(req, wire)

    def run(self, req: Received, wire: Wire) -> None:
        body = req.json()
        if body.get("command"):  # a resume: the remote run finishes
            self.state = state({"status": "published"})
            events = [event("values", {"status": "published"})]
        else:  # a fresh run: the remote pauses on a question
            self.state = state({"topic": body["input"]["topic"]}, interrupts=[ASK])
            events = [
                event("updates", {"__interrupt__": [ASK]}),
                event("values", self.state["values"]),
            ]
        sse_answer(events)(req, wire)


def test_a_remote_interrupt_pauses_the_local_graph_and_the_answer_goes_back(server, call: Caller):
    remote = RemoteThread(server)
    local = local_graph(server)
    paused = call.invoke(local, {"topic": "Kelp"}, CONFIG)  # type: ignore[arg-type]
    assert paused["__interrupt__"][0].value == {"question": "Publish?"}
    assert remote.state is not None
    done = call.invoke(local, Command(resume="yes"), CONFIG)  # type: ignore[arg-type]
    assert done["status"] == "published"
    first, second = server.runs()
    assert first.json()["input"]["topic"] == "Kelp"
    assert second.json()["command"] == {"resume": "yes"}


@pytest.mark.parametrize("gone", ["answered elsewhere", "deleted"])
def test_a_resume_the_remote_thread_no_longer_waits_for_is_an_error(server, call: Caller, gone):
    remote = RemoteThread(server)
    local = local_graph(server)
    call.invoke(local, {"topic": "Kelp"}, CONFIG)  # type: ignore[arg-type]
    # meanwhile, on the server, the thread stops waiting
    remote.state = state({"status": "published"}) if gone == "answered elsewhere" else None
    expected = "waits on no interrupt" if gone == "answered elsewhere" else "does not exist"
    with pytest.raises(RemoteError, match=f"is being resumed, but the remote thread {expected}"):
        call.invoke(local, Command(resume="yes"), CONFIG)  # type: ignore[arg-type]
    # the answer was not sent as a fresh input: only the first run reached the server
    assert len(server.runs()) == 1
    # and the local graph still waits on the question, so it can be answered again
    assert local.get_state(CONFIG).next == ("writer",)


def test_several_remote_interrupts_are_asked_one_by_one_and_sent_by_id(server, call: Caller):
    asks = [{"value": "first?", "id": "r-a"}, {"value": "second?", "id": "r-b"}]
    remote = RemoteThread(server)
    remote.state = state({"topic": "x"}, interrupts=asks)
    local = local_graph(server)
    first = call.invoke(local, {"topic": "x"}, CONFIG)  # type: ignore[arg-type]
    assert [i.value for i in first["__interrupt__"]] == ["first?"]
    second = call.invoke(local, Command(resume="A"), CONFIG)  # type: ignore[arg-type]
    assert [i.value for i in second["__interrupt__"]] == ["second?"]
    assert server.runs() == []  # nothing sent until every question has its answer
    done = call.invoke(local, Command(resume="B"), CONFIG)  # type: ignore[arg-type]
    assert done["status"] == "published"
    [run] = server.runs()
    assert run.json()["command"] == {"resume": {"r-a": "A", "r-b": "B"}}


def test_several_remote_interrupts_without_ids_cannot_be_answered(server, call: Caller):
    remote = RemoteThread(server)
    remote.state = state({"topic": "x"}, interrupts=[{"value": "a?"}, {"value": "b?"}])
    local = local_graph(server)
    call.invoke(local, {"topic": "x"}, CONFIG)  # type: ignore[arg-type]
    call.invoke(local, Command(resume="A"), CONFIG)  # type: ignore[arg-type]
    with pytest.raises(RemoteError, match="do not all have distinct ids"):
        call.invoke(local, Command(resume="B"), CONFIG)  # type: ignore[arg-type]
    assert server.runs() == []


def test_a_malformed_remote_state_fails_the_node(server, call: Caller):
    server.route("GET", STATE, json_answer(state({"n": 1}) | {"tasks": "ask"}))
    local = local_graph(server)
    with pytest.raises(RemoteError) as info:
        call.invoke(local, {"topic": "x"}, CONFIG)  # type: ignore[arg-type]
    assert info.value.field == "tasks" and info.value.endpoint == "GET /threads/t1/state"
    assert server.runs() == []


def test_an_error_reading_the_remote_state_is_not_taken_for_a_new_thread(server, call: Caller):
    server.route("GET", STATE, json_answer({"detail": "database down"}, 503))
    local = local_graph(server)
    with pytest.raises(RemoteError, match="database down"):
        call.invoke(local, {"topic": "x"}, CONFIG)  # type: ignore[arg-type]
    assert server.runs() == []


def test_the_seam_tells_a_node_it_is_being_resumed():
    """``task_paused_before()``: what RemoteGraph asks the runtime, without importing it."""
    from stategraph._context import task_paused_before
    from stategraph.types import interrupt

    seen: list[bool] = []

    def ask(state: Outer) -> dict:
        seen.append(task_paused_before())
        return {"status": str(interrupt("approve?"))}

    def after(state: Outer) -> dict:
        seen.append(task_paused_before())
        return {}

    builder = StateGraph(Outer)
    builder.add_node("ask", ask)
    builder.add_node("after", after)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "after")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"topic": "x"}, CONFIG)
    assert seen == [False]
    assert graph.invoke(Command(resume="yes"), CONFIG)["status"] == "yes"
    assert seen == [False, True, False]  # the resumed node, then a node that never paused
    assert task_paused_before() is False  # outside any task
