"""Sizes and durations are bounded, and the bounds are settings.

A line that never ends, an event or an answer too large, an error body of any size: each
stops at its limit. A call never outlives its deadline, a run stream fails when no
event comes for ``idle`` seconds (keep-alive comments and half-sent events do not count
as events), and a slow consumer does not count against the server.
"""

from __future__ import annotations

import json
import time

import pytest

from stategraph.pregel.remote import RemoteError, RemoteGraph
from stategraph.remote import RemoteLimits, RemoteTimeoutError, RemoteTimeouts

from .conftest import CONFIG, Caller
from .hostile import (
    JSON,
    SSE,
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
KiB = 1024
MiB = 1024 * KiB


def remote(server: HostileServer, **kwargs) -> RemoteGraph:
    return RemoteGraph("agent", url=server.url, **kwargs)


def _endless(head: dict, first: bytes, piece: bytes, most: int = 200 * MiB):
    def script(req: Received, wire: Wire) -> None:
        wire.head(200, head)
        wire.send(first)
        while wire.record.written < most and wire.send(piece):
            pass

    return script


# ---------------------------------------------------------------- sizes
def test_a_line_that_never_ends_stops_at_max_line_bytes(server, call: Caller):
    server.route("POST", RUN, _endless({**SSE, "Connection": "close"}, b"data: ", b"a" * 64 * KiB))
    limits = RemoteLimits(max_line_bytes=256 * KiB)
    start = time.monotonic()
    with pytest.raises(RemoteError, match="longer than max_line_bytes=262144"):
        call.invoke(remote(server, limits=limits, timeout=30), {"n": 0}, CONFIG)
    assert time.monotonic() - start < 10
    # the client stopped reading: what the server could write is its socket buffers' worth
    assert server.connections[-1].written < 40 * MiB


def test_an_event_of_many_lines_stops_at_max_event_bytes(server, call: Caller):
    line = b"data: " + b"b" * 1000 + b"\n"
    server.route("POST", RUN, _endless({**SSE, "Connection": "close"}, b"event: values\n", line))
    limits = RemoteLimits(max_event_bytes=200 * KiB)
    with pytest.raises(RemoteError, match="larger than max_event_bytes=204800"):
        call.invoke(remote(server, limits=limits, timeout=30), {"n": 0}, CONFIG)
    assert server.connections[-1].written < 40 * MiB


def test_an_answer_larger_than_its_limit_is_refused_from_its_length(server, call: Caller):
    big = json.dumps(state({"blob": "x" * (2 * MiB)})).encode()
    server.route("GET", STATE, raw_answer(200, big, JSON))
    with pytest.raises(RemoteError, match=r"answer \(\d+ bytes\) is larger than max_body_bytes"):
        call.get_state(remote(server, limits=RemoteLimits(max_body_bytes=MiB)))


def test_an_unframed_answer_larger_than_its_limit_is_refused(server, call: Caller):
    server.route(
        "GET", STATE, _endless({**JSON, "Connection": "close"}, b'{"values": "', b"x" * KiB)
    )
    with pytest.raises(RemoteError, match="larger than max_body_bytes=1048576"):
        call.get_state(remote(server, limits=RemoteLimits(max_body_bytes=MiB), timeout=30))
    assert server.connections[-1].written < 40 * MiB


def test_an_error_body_of_any_size_is_cut_in_the_message(server, call: Caller):
    huge = json.dumps({"detail": "boom " * (2 * MiB)}).encode()
    server.route("GET", STATE, raw_answer(500, huge, JSON))
    with pytest.raises(RemoteError) as info:
        call.get_state(remote(server, timeout=30))
    assert len(str(info.value)) < 2200
    assert "more characters" in str(info.value)
    server.route("GET", STATE, raw_answer(500, b"E" * 5000, {"Content-Type": "text/plain"}))
    with pytest.raises(RemoteError) as info:
        call.get_state(remote(server, limits=RemoteLimits(max_error_chars=50)))
    assert str(info.value).startswith("GET /threads/t1/state failed (500): " + "E" * 50 + "...")


def test_an_error_event_of_any_size_is_cut_in_the_message(server, call: Caller):
    error = event("error", {"error": "ValueError", "message": "x" * (3 * MiB)})
    server.route("POST", RUN, sse_answer([error]))
    with pytest.raises(RemoteError, match="The remote run failed: ValueError: xxx") as info:
        call.invoke(remote(server, timeout=30), {"n": 0}, CONFIG)
    assert len(str(info.value)) < 2200


# ---------------------------------------------------------------- durations
def _drip(head: dict | None, pieces, every: float, forever: bytes | None = None):
    """Send ``head``, then each piece ``every`` seconds, then ``forever`` repeatedly."""

    def script(req: Received, wire: Wire) -> None:
        if head is not None and not wire.head(200, head):
            return
        for piece in pieces:
            time.sleep(every)
            if not wire.send(piece):
                return
        for _ in range(int(60 / every)):
            if wire.wait_client_gone(every):
                return
            if forever is not None and not wire.send(forever):
                return

    return script


def _timed(call: Caller, fn, *args, **kwargs):
    start = time.monotonic()
    with pytest.raises(RemoteTimeoutError) as info:
        fn(*args, **kwargs)
    return info.value, time.monotonic() - start


def test_a_drip_of_comments_does_not_defeat_the_idle_timeout(server, call: Caller):
    server.route(
        "POST",
        RUN,
        _drip(
            {**SSE, "Connection": "close"},
            [event("values", {"n": 1})],
            0.05,
            forever=b": keep-alive\n",
        ),
    )
    graph = remote(server, timeout=RemoteTimeouts(idle=0.5))
    error, took = _timed(call, call.invoke, graph, {"n": 0}, CONFIG)
    assert error.timeout == "idle" and "no event for 0.5 s" in str(error)
    assert 0.4 < took < 5


def test_an_event_sent_one_byte_at_a_time_does_not_defeat_the_idle_timeout(server, call: Caller):
    slow = [bytes([b]) for b in event("values", {"n": 1, "pad": "x" * 200})]
    server.route("POST", RUN, _drip({**SSE, "Connection": "close"}, slow, 0.02))
    graph = remote(server, timeout=RemoteTimeouts(idle=0.5))
    error, took = _timed(call, call.invoke, graph, {"n": 0}, CONFIG)
    assert error.timeout == "idle" and took < 5


def test_a_server_that_never_answers_times_out(server, call: Caller):
    server.route("POST", RUN, _drip(None, [], 0.05))
    server.route("GET", STATE, _drip(None, [], 0.05))
    graph = remote(server, timeout=RemoteTimeouts(idle=0.4, read=0.4))
    error, took = _timed(call, call.invoke, graph, {"n": 0}, CONFIG)
    assert error.timeout == "idle" and took < 5
    error, took = _timed(call, call.get_state, graph)
    assert error.timeout == "read" and took < 5
    assert error.endpoint == "GET /threads/t1/state"


def test_a_head_sent_one_byte_at_a_time_does_not_defeat_the_read_timeout(server, call: Caller):
    head = b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"p" * 2000 + b"\r\n\r\n"
    server.route("GET", STATE, _drip(None, [bytes([b]) for b in head], 0.01))
    graph = remote(server, timeout=RemoteTimeouts(read=0.5))
    error, took = _timed(call, call.get_state, graph)
    assert error.timeout == "read" and took < 5


def test_a_json_answer_sent_one_byte_at_a_time_does_not_defeat_the_read_timeout(
    server, call: Caller
):
    body = json.dumps(state({"pad": "x" * 2000})).encode()
    head = {**JSON, "Content-Length": str(len(body))}
    server.route("GET", STATE, _drip(head, [bytes([b]) for b in body], 0.01))
    graph = remote(server, timeout=RemoteTimeouts(read=0.5))
    error, took = _timed(call, call.get_state, graph)
    assert error.timeout == "read" and "timeouts.read" in str(error) and took < 5


def test_the_total_deadline_holds_while_events_keep_coming(server, call: Caller):
    server.route(
        "POST",
        RUN,
        _drip({**SSE, "Connection": "close"}, [], 0.05, forever=event("values", {"n": 1})),
    )
    error, took = _timed(call, call.invoke, remote(server, timeout=0.6), {"n": 0}, CONFIG)
    assert error.timeout == "total" and "longer than 0.6 s" in str(error)
    assert 0.5 < took < 5


def test_the_total_deadline_bounds_every_other_timeout(server, call: Caller):
    server.route("GET", STATE, _drip(None, [], 0.05))
    graph = remote(server, timeout=RemoteTimeouts(read=300, total=0.4))
    error, took = _timed(call, call.get_state, graph)
    assert error.timeout == "total" and took < 5


def test_a_slow_consumer_does_not_count_against_the_server(server, call: Caller):
    events = [event("values", {"n": i}) for i in range(4)]
    server.route("POST", RUN, sse_answer(events))
    graph = remote(server, timeout=RemoteTimeouts(idle=0.3))
    if call.is_async:
        import asyncio

        async def consume() -> list:
            out = []
            async for chunk in graph.astream({"n": 0}, CONFIG, stream_mode="values"):
                out.append(chunk)
                await asyncio.sleep(0.5)
            return out

        got = asyncio.run(consume())
    else:
        got = []
        for chunk in graph.stream({"n": 0}, CONFIG, stream_mode="values"):
            got.append(chunk)
            time.sleep(0.5)
    assert got == [{"n": i} for i in range(4)]


def test_timeouts_apply_to_every_request_of_a_node_run(server, call: Caller):
    server.route("GET", STATE, json_answer({"detail": "none"}, 404))
    server.route("POST", RUN, sse_answer([event("values", {"n": 1})]))
    assert call.invoke(remote(server, timeout=5), {"n": 0}, CONFIG) == {"n": 1}


# ---------------------------------------------------------------- the settings
@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"connect": 0}, "RemoteTimeouts.connect must be a positive number"),
        ({"read": -1}, "RemoteTimeouts.read"),
        ({"idle": float("nan")}, "RemoteTimeouts.idle"),
        ({"idle": float("inf")}, "RemoteTimeouts.idle"),
        ({"total": True}, "RemoteTimeouts.total must be a positive number of seconds or None"),
        ({"read": "5"}, "RemoteTimeouts.read"),
    ],
)
def test_bad_timeouts_are_refused_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RemoteTimeouts(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_line_bytes": 0},
        {"queue_size": -1},
        {"max_body_bytes": 1.5},
        {"max_error_chars": True},
        {"max_event_bytes": "1"},
    ],
)
def test_bad_limits_are_refused_by_name(kwargs):
    [name] = kwargs
    with pytest.raises(ValueError, match=f"RemoteLimits.{name} must be a positive whole number"):
        RemoteLimits(**kwargs)


def test_timeout_and_limits_arguments():
    assert RemoteGraph("a", url="http://127.0.0.1:1", timeout=7).sync_client.transport.timeouts == (
        RemoteTimeouts(total=7.0)
    )
    with pytest.raises(ValueError, match=r"RemoteGraph\.timeout must be a positive number"):
        RemoteGraph("a", url="http://127.0.0.1:1", timeout=-3)
    with pytest.raises(TypeError, match="timeout= takes a number of seconds"):
        RemoteGraph("a", url="http://127.0.0.1:1", timeout="5")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="limits= takes a RemoteLimits"):
        RemoteGraph("a", url="http://127.0.0.1:1", limits={"queue_size": 1})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="configure the built-in client"):
        RemoteGraph("a", sync_client=object(), timeout=5)
