"""Status codes, content types and the shape of answers are checked.

A redirect is never followed into a success, an HTML or JSON answer where an event
stream is expected is an error, and every malformed answer is a RemoteError naming the
endpoint and the field, never a raw KeyError, UnicodeDecodeError, OverflowError... and
never a silently wrong value (a string ``next`` read as a tuple of characters).
"""

from __future__ import annotations

import json

import pytest

from stategraph.pregel.remote import RemoteError, RemoteGraph
from stategraph.types import Command

from .conftest import CONFIG, Caller
from .hostile import (
    JSON,
    HostileServer,
    Received,
    Wire,
    event,
    json_answer,
    raw_answer,
    sse_answer,
    state,
)

RUN = "/threads/t1/runs/stream"
STATE = "/threads/t1/state"
GOOD_RUN = [event("values", {"n": 1})]


def remote(server: HostileServer) -> RemoteGraph:
    return RemoteGraph("agent", url=server.url, timeout=10)


# ---------------------------------------------------------------- status and content type
@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_of_a_run_is_an_error_not_an_empty_success(server, call: Caller, status):
    location = {"Location": "http://elsewhere.example/runs/stream"}
    server.route("POST", RUN, raw_answer(status, b"", location, reason="Moved"))
    with pytest.raises(RemoteError, match="redirect") as info:
        call.invoke(remote(server), {"n": 0}, CONFIG)
    assert info.value.status == status
    assert "http://elsewhere.example/runs/stream" in str(info.value)
    assert len(server.requests) == 1  # not followed


def test_a_302_carrying_json_on_state_is_an_error(server, call: Caller):
    server.route("GET", STATE, json_answer(state({"n": 1}), 302, {"Location": "/other"}))
    with pytest.raises(RemoteError, match=r"redirect \(302\)") as info:
        call.get_state(remote(server))
    assert info.value.endpoint == "GET /threads/t1/state"


@pytest.mark.parametrize(
    "content_type, body",
    [
        ("text/html", b"<html><body>Welcome to nginx!</body></html>"),
        ("application/json", b'{"values": {"n": 1}}'),
        ("text/plain", b"event: values\ndata: {}\n\n"),
        (None, b"event: values\ndata: {}\n\n"),
    ],
    ids=["html", "json", "text", "none"],
)
def test_a_run_answered_with_something_else_than_events_is_an_error(
    server, call: Caller, content_type, body
):
    headers = {"Content-Type": content_type} if content_type else {}
    server.route("POST", RUN, raw_answer(200, body, headers))
    with pytest.raises(RemoteError, match="where an event stream") as info:
        call.invoke(remote(server), {"n": 0}, CONFIG)
    assert info.value.status == 200


def test_an_event_stream_content_type_may_carry_parameters(server, call: Caller):
    body = event("values", {"n": 1})
    server.route(
        "POST", RUN, raw_answer(200, body, {"Content-Type": "text/event-stream; charset=utf-8"})
    )
    assert call.invoke(remote(server), {"n": 0}, CONFIG) == {"n": 1}


@pytest.mark.parametrize(
    "content_type",
    ["text/html", "text/plain", "", "application/xml"],
)
def test_state_answered_with_something_else_than_json_is_an_error(
    server, call: Caller, content_type
):
    headers = {"Content-Type": content_type} if content_type else {}
    server.route("GET", STATE, raw_answer(200, json.dumps(state()).encode(), headers))
    with pytest.raises(RemoteError, match="where JSON was expected"):
        call.get_state(remote(server))


def test_json_variants_are_json(server, call: Caller):
    body = json.dumps(state({"n": 5})).encode()
    server.route("GET", STATE, raw_answer(200, body, {"Content-Type": "application/vnd.api+json"}))
    assert call.get_state(remote(server)).values == {"n": 5}


@pytest.mark.parametrize("status", [204, 205])
def test_an_empty_success_is_not_a_state(server, call: Caller, status):
    server.route("GET", STATE, raw_answer(status, b"", JSON))
    with pytest.raises(RemoteError):
        call.get_state(remote(server))


def test_an_empty_json_body_is_an_error(server, call: Caller):
    server.route("GET", STATE, raw_answer(200, b"", JSON))
    with pytest.raises(RemoteError, match="empty"):
        call.get_state(remote(server))


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422, 500, 502, 503])
def test_an_error_status_names_the_endpoint_status_and_detail(server, call: Caller, status):
    server.route("GET", STATE, json_answer({"detail": f"nope {status}"}, status))
    with pytest.raises(RemoteError) as info:
        call.get_state(remote(server))
    assert info.value.status == status
    assert str(info.value) == f"GET /threads/t1/state failed ({status}): nope {status}"


def test_an_error_status_with_a_text_body(server, call: Caller):
    server.route(
        "POST", RUN, raw_answer(502, b"Bad Gateway from the proxy", {"Content-Type": "text/plain"})
    )
    with pytest.raises(RemoteError, match="failed \\(502\\): Bad Gateway from the proxy"):
        call.invoke(remote(server), {"n": 0}, CONFIG)


@pytest.mark.parametrize("status", [199, 600, 999])
def test_an_unusual_status_is_an_error(server, call: Caller, status):
    server.route("GET", STATE, json_answer(state(), status))
    with pytest.raises(RemoteError):
        call.get_state(remote(server))


def _raw(data: bytes):
    def script(req: Received, wire: Wire) -> None:
        wire.send(data)

    return script


@pytest.mark.parametrize(
    "data",
    [
        b"",  # closes without a word
        b"NOT HTTP AT ALL\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(150)) + b"\r\n",
        b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n",
        b"HTTP/1.1 abc OK\r\n\r\n",
    ],
    ids=["silent-close", "garbage-status", "too-many-headers", "header-too-long", "bad-status"],
)
def test_a_broken_answer_head_is_an_error(server, call: Caller, data):
    server.route("GET", STATE, _raw(data))
    server.route("POST", RUN, _raw(data))
    with pytest.raises(RemoteError, match="GET /threads/t1/state"):
        call.get_state(remote(server))
    with pytest.raises(RemoteError, match="POST /threads/t1/runs/stream"):
        call.invoke(remote(server), {"n": 0}, CONFIG)


def test_an_unreachable_server_is_an_error(call: Caller):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    graph = RemoteGraph("agent", url=f"http://127.0.0.1:{port}", timeout=5)
    with pytest.raises(RemoteError, match="Cannot reach"):
        call.get_state(graph)


# ---------------------------------------------------------------- malformed JSON
@pytest.mark.parametrize(
    "body, problem",
    [
        (b'{"values": {"n": 1e999999}, "checkpoint": null}', "out of range"),
        (b'{"values": {"n": -1e999999}, "checkpoint": null}', "out of range"),
        (b'{"values": {"n": NaN}, "checkpoint": null}', "NaN is not JSON"),
        (b'{"values": {"n": Infinity}, "checkpoint": null}', "Infinity is not JSON"),
        (b'{"values": {"n": 1' + b"0" * 10000 + b'}, "checkpoint": null}', "too long"),
        (b'{"values": {"s": "\xff\xfe"}, "checkpoint": null}', "not UTF-8"),
        (b'{"values": ', "invalid JSON"),
        (b"<html>", "invalid JSON"),
        (b"[" * 100000 + b"]" * 100000, "nested too deeply"),
    ],
    ids=["inf", "-inf", "nan", "infinity", "huge-int", "not-utf8", "truncated", "html", "deep"],
)
def test_malformed_json_is_a_remote_error(server, call: Caller, body, problem):
    server.route("GET", STATE, raw_answer(200, body, JSON))
    with pytest.raises(RemoteError, match=problem) as info:
        call.get_state(remote(server))
    assert info.value.endpoint == "GET /threads/t1/state"


@pytest.mark.parametrize(
    "line, problem",
    [
        (b'event: values\ndata: {"n": 1e999999}\n\n', "out of range"),
        (b'event: values\ndata: {"n": NaN}\n\n', "NaN is not JSON"),
        (b"event: values\ndata: {not json}\n\n", "invalid JSON"),
        (b"event: val\xffues\ndata: {}\n\n", "not UTF-8"),
        (b'event: values\ndata: "\xc3\x28"\n\n', "not UTF-8"),
    ],
    ids=["inf", "nan", "garbage", "bad-utf8-name", "bad-utf8-data"],
)
def test_a_malformed_event_is_a_remote_error(server, call: Caller, line, problem):
    server.route("POST", RUN, sse_answer([event("values", {"n": 1}), line]))
    with pytest.raises(RemoteError, match=problem) as info:
        call.invoke(remote(server), {"n": 0}, CONFIG)
    assert "POST /threads/t1/runs/stream" in str(info.value)


# ---------------------------------------------------------------- malformed shapes
def _bad_state(**fields):
    answer = state({"n": 1}, interrupts=[{"value": "q?", "id": "i1"}])
    for key, value in fields.items():
        if value is KeyError:
            del answer[key]
        else:
            answer[key] = value
    return answer


@pytest.mark.parametrize(
    "answer, field",
    [
        (_bad_state(next="agent"), "next"),
        (_bad_state(next=["a", 3]), "next[1]"),
        (_bad_state(values=KeyError), "values"),
        (_bad_state(checkpoint=KeyError), "checkpoint"),
        (_bad_state(checkpoint="c1"), "checkpoint"),
        (_bad_state(tasks="ask"), "tasks"),
        (_bad_state(tasks=[{"name": "ask"}]), "tasks[0].id"),
        (_bad_state(tasks=[{"id": "x"}]), "tasks[0].name"),
        (_bad_state(tasks=[{"id": 7, "name": "ask"}]), "tasks[0].id"),
        (
            _bad_state(tasks=[{"id": "x", "name": "ask", "interrupts": "why?"}]),
            "tasks[0].interrupts",
        ),
        (
            _bad_state(tasks=[{"id": "x", "name": "ask", "interrupts": ["why?"]}]),
            "tasks[0].interrupts[0]",
        ),
        (
            _bad_state(tasks=[{"id": "x", "name": "a", "interrupts": [{"id": 5}]}]),
            "tasks[0].interrupts[0].id",
        ),
        (
            _bad_state(tasks=[{"id": "x", "name": "a", "state": {"values": 1}}]),
            "tasks[0].state.checkpoint",
        ),
        (_bad_state(metadata=[1, 2]), "metadata"),
        (_bad_state(created_at=12), "created_at"),
        (_bad_state(parent_checkpoint="p"), "parent_checkpoint"),
        (["not", "a", "state"], "the answer"),
        ("just text", "the answer"),
    ],
)
def test_a_malformed_state_names_the_field(server, call: Caller, answer, field):
    server.route("GET", STATE, json_answer(answer))
    with pytest.raises(RemoteError) as info:
        call.get_state(remote(server))
    assert info.value.field == field
    assert info.value.endpoint == "GET /threads/t1/state"
    assert f"'{field}'" in str(info.value)


def test_a_well_formed_state(server, call: Caller):
    answer = state({"n": 1}, interrupts=[{"value": {"q": "ok?"}, "id": "i1"}])
    server.route("GET", STATE, json_answer(answer))
    snapshot = call.get_state(remote(server))
    assert snapshot.values == {"n": 1}
    assert snapshot.next == ("ask",)
    assert [(i.value, i.id) for i in snapshot.interrupts] == [({"q": "ok?"}, "i1")]
    assert snapshot.tasks[0].name == "ask"


def test_a_malformed_history_names_the_item(server, call: Caller):
    path = "/threads/t1/history"
    server.route("POST", path, json_answer({"values": {}}))
    with pytest.raises(RemoteError, match="'the answer' must be a list"):
        call.history(remote(server))
    server.route("POST", path, json_answer([state(), _bad_state(next="x")]))
    with pytest.raises(RemoteError) as info:
        call.history(remote(server))
    assert info.value.field == "[1].next"


def test_an_update_answer_without_checkpoint(server, call: Caller):
    server.route("POST", STATE, json_answer({"ok": True}))
    with pytest.raises(RemoteError, match="'checkpoint' is missing") as info:
        call.update_state(remote(server), {"n": 3})
    assert info.value.endpoint == "POST /threads/t1/state"
    server.route("POST", STATE, json_answer({"checkpoint": "c2"}))
    with pytest.raises(RemoteError, match="'checkpoint' must be an object"):
        call.update_state(remote(server), {"n": 3})


@pytest.mark.parametrize(
    "answer, field",
    [
        ({"nodes": "a", "edges": []}, "nodes"),
        ({"nodes": [{"data": {}}], "edges": []}, "nodes[0].id"),
        ({"nodes": [{"id": 1}], "edges": []}, "nodes[0].id"),
        ({"nodes": [], "edges": [{"source": "a"}]}, "edges[0].target"),
        ({"nodes": [], "edges": [{"source": "a", "target": ["b"]}]}, "edges[0].target"),
        ({"nodes": [], "edges": {"a": "b"}}, "edges"),
    ],
)
def test_a_malformed_drawing_names_the_field(server, call: Caller, answer, field):
    server.route("GET", "/assistants/agent/graph", json_answer(answer))
    with pytest.raises(RemoteError) as info:
        call.get_graph(remote(server))
    assert info.value.field == field
    assert info.value.endpoint == "GET /assistants/agent/graph"


def test_a_string_interrupt_in_a_run_is_an_error_not_one_interrupt_per_character(
    server, call: Caller
):
    server.route("POST", RUN, sse_answer([event("updates", {"__interrupt__": "approve?"})]))
    config = {"configurable": {"thread_id": "t1", "checkpoint_ns": "outer:1"}}
    with pytest.raises(RemoteError) as info:
        call.stream(remote(server), {"n": 0}, config)
    assert info.value.field == "updates.__interrupt__"
    server.route("POST", RUN, sse_answer([event("values", {"n": 1, "__interrupt__": "approve?"})]))
    with pytest.raises(RemoteError, match=r"'values\.__interrupt__' must be a list"):
        call.invoke(remote(server), {"n": 0}, CONFIG)


def test_a_messages_event_must_be_a_pair(server, call: Caller):
    server.route("POST", RUN, sse_answer([event("messages", {"content": "hi"})]))
    with pytest.raises(RemoteError, match="'messages' must be a \\[message, metadata\\] pair"):
        call.stream(remote(server), {"n": 0}, CONFIG, stream_mode="messages")
    server.route("POST", RUN, sse_answer([event("messages", [{"content": "hi"}, {"n": 1}])]))
    assert call.stream(remote(server), {"n": 0}, CONFIG, stream_mode="messages") == [
        ({"content": "hi"}, {"n": 1})
    ]


def test_a_resume_command_is_sent_as_a_command(server, call: Caller):
    server.route("POST", RUN, sse_answer(GOOD_RUN))
    call.invoke(remote(server), Command(resume={"ok": True}), CONFIG)
    body = server.runs()[-1].json()
    assert body["command"] == {"resume": {"ok": True}} and "input" not in body
