"""A remote run succeeds only when the server said it ended.

The server ends a run by ending a framed body (the last chunk, or the whole
``Content-Length``) or by sending the ``end`` event. Every other way a stream can stop
(the connection closes, a body shorter than its length, a bad chunk line, an event cut
in half) is a RemoteError, never a successful run with partial values.
"""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.pregel.remote import RemoteError, RemoteGraph

from .conftest import CONFIG, Caller
from .hostile import SSE, HostileServer, Received, Wire, event, json_answer, sse_answer

RUN = "/threads/t1/runs/stream"
EVENTS = [
    event("metadata", {"run_id": "r1"}),
    event("values", {"n": 1}),
    event("updates", {"step": {"n": 2}}),
    event("values", {"n": 2}),
]


def remote(server: HostileServer) -> RemoteGraph:
    return RemoteGraph("agent", url=server.url, timeout=10)


@pytest.mark.parametrize("framing", ["chunked", "length"])
def test_a_framed_stream_that_arrives_whole_is_a_finished_run(server, call: Caller, framing):
    server.route("POST", RUN, sse_answer(EVENTS, framing=framing))
    assert call.invoke(remote(server), {"n": 0}, CONFIG) == {"n": 2}
    assert call.stream(remote(server), {"n": 0}, CONFIG) == [{"step": {"n": 2}}]


def test_an_end_event_ends_an_unframed_stream(server, call: Caller):
    server.route("POST", RUN, sse_answer([*EVENTS, event("end", None)], framing="close"))
    assert call.invoke(remote(server), {"n": 0}, CONFIG) == {"n": 2}


def test_the_stream_stops_at_the_end_event(server, call: Caller):
    after = [event("values", {"n": 99}), b"garbage that is not an event\n\n"]
    server.route("POST", RUN, sse_answer([*EVENTS, event("end", None), *after]))
    assert call.invoke(remote(server), {"n": 0}, CONFIG) == {"n": 2}


def test_an_unframed_stream_without_end_event_is_not_a_finished_run(server, call: Caller):
    server.route("POST", RUN, sse_answer(EVENTS, framing="close"))
    with pytest.raises(RemoteError, match="without the end of the run") as info:
        call.invoke(remote(server), {"n": 0}, CONFIG)
    assert info.value.endpoint == "POST /threads/t1/runs/stream"


def _cut(after: list[bytes], then: bytes = b"") -> object:
    def script(req: Received, wire: Wire) -> None:
        wire.head(200, {**SSE, "Transfer-Encoding": "chunked"})
        for item in after:
            wire.chunk(item)
        if then:
            wire.send(then)

    return script


@pytest.mark.parametrize(
    "script",
    [
        _cut(EVENTS),  # the connection closes between two events
        _cut(EVENTS[:2], then=b'30\r\nevent: values\ndata: {"n"'),  # inside a chunk
        _cut(EVENTS[:2], then=b"zz\r\nevent: values\n\n\r\n"),  # a chunk size that is no number
        _cut(EVENTS[:2], then=b"-5\r\nevent: values\n\n\r\n"),  # a negative chunk size
        _cut(EVENTS[:2], then=b"ffffffffffffffffffffffff\r\nevent: x\n"),  # a huge chunk size
        _cut(EVENTS[:2], then=b"5" * 70000),  # a chunk size line without end
    ],
    ids=[
        "between-events",
        "inside-chunk",
        "bad-chunk-size",
        "negative-size",
        "huge-size",
        "endless-size-line",
    ],
)
def test_a_chunked_stream_cut_short_is_an_error(server, call: Caller, script):
    server.route("POST", RUN, script)  # type: ignore[arg-type]
    with pytest.raises(RemoteError) as info:
        call.invoke(remote(server), {"n": 0}, CONFIG)
    assert "POST /threads/t1/runs/stream" in str(info.value)


def test_a_body_shorter_than_its_length_is_an_error(server, call: Caller):
    body = b"".join(EVENTS)

    def script(req: Received, wire: Wire) -> None:
        wire.head(200, {**SSE, "Content-Length": str(len(body) + 100)})
        wire.send(body)

    server.route("POST", RUN, script)
    with pytest.raises(RemoteError, match="closed before the answer was complete"):
        call.invoke(remote(server), {"n": 0}, CONFIG)


def test_an_event_cut_in_half_at_the_end_of_a_framed_body_is_an_error(server, call: Caller):
    server.route("POST", RUN, sse_answer([*EVENTS, b'event: values\ndata: {"n": 3}\n']))
    with pytest.raises(RemoteError, match="ended in the middle of an event"):
        call.invoke(remote(server), {"n": 0}, CONFIG)


def test_an_error_event_fails_the_run(server, call: Caller):
    error = event("error", {"error": "ValueError", "message": "kaboom"})
    server.route("POST", RUN, sse_answer([*EVENTS[:2], error]))
    with pytest.raises(RemoteError, match="The remote run failed: ValueError: kaboom"):
        call.invoke(remote(server), {"n": 0}, CONFIG)
    with pytest.raises(RemoteError, match="kaboom"):
        call.stream(remote(server), {"n": 0}, CONFIG, stream_mode="values")


class Outer(TypedDict, total=False):
    n: int
    log: Annotated[list[str], operator.add]


def _outer(server: HostileServer) -> object:
    def after(state: Outer) -> dict:
        return {"log": ["after"]}

    builder = StateGraph(Outer)
    builder.add_node("remote", remote(server))
    builder.add_node("after", after)
    builder.add_edge(START, "remote")
    builder.add_edge("remote", "after")
    return builder.compile(checkpointer=InMemorySaver())


def test_a_cut_run_fails_the_node_and_nothing_is_committed(server, call: Caller):
    """As a node of a local graph, a cut remote run must not commit its partial state
    nor let the next node run."""
    server.route("GET", "/threads/t1/state", json_answer({"detail": "no thread"}, 404))
    server.route("POST", RUN, _cut(EVENTS))
    local = _outer(server)
    with pytest.raises(RemoteError):
        call.invoke(local, {"n": 0}, CONFIG)  # type: ignore[arg-type]
    snapshot = local.get_state(CONFIG)  # type: ignore[attr-defined]
    assert snapshot.values["n"] == 0  # the remote's partial values were not committed
    assert snapshot.next == ("remote",)
    assert not snapshot.values.get("log")  # the next node did not run


def test_a_finished_run_lets_the_local_graph_go_on(server, call: Caller):
    server.route("GET", "/threads/t1/state", json_answer({"detail": "no thread"}, 404))
    server.route("POST", RUN, sse_answer(EVENTS))
    local = _outer(server)
    assert call.invoke(local, {"n": 0}, CONFIG) == {"n": 2, "log": ["after"]}  # type: ignore[arg-type]
