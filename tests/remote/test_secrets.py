"""Secrets never appear in messages: not the API key, not header values, not URL
credentials, and not when a hostile server echoes them back."""

from __future__ import annotations

import pytest

from stategraph.pregel.remote import RemoteError, RemoteGraph

from .conftest import CONFIG, Caller
from .hostile import HostileServer, Received, Wire, event, json_answer, raw_answer, sse_answer

KEY = "sk-live-0123456789abcdef"
TOKEN = "Bearer tok-9876543210"
RUN = "/threads/t1/runs/stream"
STATE = "/threads/t1/state"


def remote(server: HostileServer) -> RemoteGraph:
    return RemoteGraph("agent", url=server.url, api_key=KEY, headers={"Authorization": TOKEN})


def _clean(message: str) -> None:
    assert KEY not in message and "tok-9876543210" not in message


@pytest.mark.parametrize(
    "api_key", [KEY + "\n", KEY + "\r\nX-Injected: 1", "\x00" + KEY, KEY + "\x7f"]
)
def test_an_api_key_with_a_line_break_is_refused_without_showing_it(api_key):
    with pytest.raises(ValueError, match="api_key contains a line break") as info:
        RemoteGraph("agent", url="http://127.0.0.1:1", api_key=api_key)
    _clean(str(info.value))


def test_a_header_value_with_a_line_break_is_refused_by_name_only():
    with pytest.raises(ValueError, match="header 'Authorization' contains a line break") as info:
        RemoteGraph("agent", url="http://127.0.0.1:1", headers={"Authorization": TOKEN + "\n"})
    _clean(str(info.value))
    with pytest.raises(ValueError, match="not a valid header name"):
        RemoteGraph("agent", url="http://127.0.0.1:1", headers={"Bad Name": "v"})
    with pytest.raises(TypeError, match="header 'X-N' must be a string"):
        RemoteGraph("agent", url="http://127.0.0.1:1", headers={"X-N": 5})  # type: ignore[dict-item]


def test_per_call_headers_are_checked_the_same_way(server, call: Caller):
    server.route("POST", RUN, sse_answer([event("values", {"n": 1})]))
    with pytest.raises(ValueError, match="header 'X-Token' contains a line break") as info:
        call.invoke(remote(server), {"n": 0}, CONFIG, headers={"X-Token": KEY + "\n"})
    _clean(str(info.value))
    assert server.requests == []


@pytest.mark.parametrize(
    "url, message",
    [
        (f"http://user:{KEY}@127.0.0.1:1", "must not carry credentials"),
        (f"http://127.0.0.1:1/?key={KEY}", "must not have a query"),
        (f"ftp://{KEY}@host", "must be http"),
        (f"http://127.0.0.1:1/{KEY}\n", "control characters"),
        ("http://127.0.0.1:99999", "not a valid"),
    ],
)
def test_a_bad_url_is_refused_without_quoting_credentials(url, message):
    with pytest.raises(ValueError, match=message) as info:
        RemoteGraph("agent", url=url)
    _clean(str(info.value))


def test_the_key_and_headers_are_sent(server, call: Caller):
    server.route("POST", RUN, sse_answer([event("values", {"n": 1})]))
    call.invoke(remote(server), {"n": 0}, CONFIG)
    sent = server.runs()[0].headers
    assert sent["x-api-key"] == KEY and sent["authorization"] == TOKEN


def _echo_headers(status: int):
    def script(req: Received, wire: Wire) -> None:
        detail = (
            f"denied for key {req.headers.get('x-api-key')} ({req.headers.get('authorization')})"
        )
        json_answer({"detail": detail}, status)(req, wire)

    return script


def test_an_error_detail_echoing_secrets_is_masked(server, call: Caller):
    server.route("GET", STATE, _echo_headers(401))
    with pytest.raises(RemoteError) as info:
        call.get_state(remote(server))
    _clean(str(info.value))
    assert "denied for key *** (***)" in str(info.value)


def test_an_error_event_echoing_secrets_is_masked(server, call: Caller):
    error = event("error", {"error": "AuthError", "message": f"bad key {KEY}"})
    server.route("POST", RUN, sse_answer([error]))
    with pytest.raises(RemoteError, match=r"bad key \*\*\*") as info:
        call.invoke(remote(server), {"n": 0}, CONFIG)
    _clean(str(info.value))


def test_a_redirect_location_echoing_secrets_is_masked(server, call: Caller):
    server.route("GET", STATE, raw_answer(302, b"", {"Location": f"http://evil/?k={KEY}"}))
    with pytest.raises(RemoteError, match="redirect") as info:
        call.get_state(remote(server))
    _clean(str(info.value))


def test_an_unexpected_content_type_echoing_secrets_is_masked(server, call: Caller):
    server.route("GET", STATE, raw_answer(200, b"{}", {"Content-Type": f"text/{KEY}"}))
    with pytest.raises(RemoteError, match="where JSON was expected") as info:
        call.get_state(remote(server))
    _clean(str(info.value))


def test_a_call_s_own_headers_are_masked_too(server, call: Caller):
    def echo(req: Received, wire: Wire) -> None:
        json_answer({"detail": f"bad token {req.headers.get('x-call-token')}"}, 403)(req, wire)

    server.route("POST", RUN, echo)
    graph = RemoteGraph("agent", url=server.url)
    with pytest.raises(RemoteError, match=r"bad token \*\*\*") as info:
        call.invoke(graph, {"n": 0}, CONFIG, headers={"X-Call-Token": KEY})
    _clean(str(info.value))
    error = event("error", {"error": "E", "message": f"token {KEY} refused"})
    server.route("POST", RUN, sse_answer([error]))
    with pytest.raises(RemoteError, match=r"token \*\*\* refused") as info:
        call.invoke(graph, {"n": 0}, CONFIG, headers={"X-Call-Token": KEY})
    _clean(str(info.value))
