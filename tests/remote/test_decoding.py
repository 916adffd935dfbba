"""The sans-I/O parts: server-sent events from bytes, strict JSON, and answers from
SDK-shaped clients (checked the same way as the built-in client's)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from stategraph.pregel.remote import RemoteError, RemoteGraph, StreamPart
from stategraph.remote import RemoteLimits
from stategraph.remote._json import decode_json, encode_json
from stategraph.remote._sse import EventDecoder

from .conftest import CONFIG


def decode(data: bytes, sizes: list[int] | None = None, **limits: int) -> list[StreamPart]:
    decoder = EventDecoder("test", RemoteLimits(**limits))
    out: list[StreamPart] = []
    if sizes is None:
        out += decoder.feed(data)
    else:
        i = 0
        for size in sizes:
            out += decoder.feed(data[i : i + size])
            i += size
        out += decoder.feed(data[i:])
    decoder.finish()
    return out


STREAM = (
    b": hello\n"
    b'event: values\ndata: {"n": 1}\n\n'
    b'event: updates\nid: 7\ndata: {"a":\ndata:  1}\n\n'
    b"retry: 100\nunknown: x\nevent: end\n\n"
)
EXPECTED = [
    StreamPart("values", {"n": 1}, None),
    StreamPart("updates", {"a": 1}, "7"),
    StreamPart("end", None, None),
]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending_of_the_sse_spec(newline):
    assert decode(STREAM.replace(b"\n", newline)) == EXPECTED


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_events_split_anywhere_decode_the_same(newline):
    data = STREAM.replace(b"\n", newline)
    assert decode(data, [1] * len(data)) == EXPECTED
    for cut in range(1, len(data)):
        assert decode(data, [cut]) == EXPECTED


def test_data_without_space_and_message_events():
    assert decode(b'data:{"x":1}\n\n') == [StreamPart("message", {"x": 1}, None)]
    assert decode(b"data\n\n") == [StreamPart("message", None, None)]
    assert decode(b"event: end\ndata:\n\n") == [StreamPart("end", None, None)]


def test_comments_alone_are_no_events():
    assert decode(b": ping\n" * 1000) == []


def test_an_unfinished_event_at_the_end_is_an_error():
    for tail in (b"event: values\n", b"data: 1\n", b"data: 1", b"\r"):
        decoder = EventDecoder("test", RemoteLimits())
        decoder.feed(b"data: 0\n\n" + tail)
        if tail == b"\r":  # a lone CR ends a line: nothing is left over
            decoder.finish()
            continue
        with pytest.raises(RemoteError, match="ended in the middle of an event"):
            decoder.finish()


def test_the_line_limit_counts_a_line_split_over_many_chunks():
    decoder = EventDecoder("test", RemoteLimits(max_line_bytes=100))
    decoder.feed(b"data: " + b"x" * 90)
    with pytest.raises(RemoteError, match="longer than max_line_bytes=100"):
        decoder.feed(b"x" * 20)


def test_the_event_limit_counts_every_data_line():
    decoder = EventDecoder("test", RemoteLimits(max_event_bytes=100))
    decoder.feed(b"data: 1\n" * 12)
    with pytest.raises(RemoteError, match="larger than max_event_bytes=100"):
        decoder.feed(b"data: 1\n")


def test_strict_json():
    assert decode_json(b'{"a": [1, 2.5, "x", null, true]}', "w") == {"a": [1, 2.5, "x", None, True]}
    for bad in (b"1e400", b"-1e400", b"NaN", b"-Infinity", b"9" * 5000, b"\xff", b"[" * 50000):
        with pytest.raises(RemoteError, match=r"^w: "):
            decode_json(bad, "w")


def test_requests_refuse_what_json_cannot_carry():
    with pytest.raises(ValueError, match="cannot be sent as JSON"):
        encode_json({"x": float("nan")}, "POST /runs/stream")
    with pytest.raises(TypeError, match="object cannot be sent to the server as JSON"):
        encode_json({"x": object()}, "POST /runs/stream")


# ---------------------------------------------------------------- SDK-shaped clients
class SdkError(Exception):
    """Like httpx.HTTPStatusError: carries ``response.status_code``."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.response = type("R", (), {"status_code": status})()


class FakeSdk:
    """The parts of LangGraph's SDK client RemoteGraph uses, answering canned values."""

    def __init__(self, state: Any = None, events: list[Any] | None = None) -> None:
        self.threads = self
        self.runs = self
        self.assistants = self
        self._state = state
        self._events = events or []
        self.streams: list[dict[str, Any]] = []

    def get_state(self, **kwargs: Any) -> Any:
        if isinstance(self._state, Exception):
            raise self._state
        return self._state

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        self.streams.append(kwargs)
        return iter(self._events)


def test_sdk_answers_are_checked_too():
    graph = RemoteGraph(
        "agent", sync_client=FakeSdk(state={"values": {}, "checkpoint": None, "next": "agent"})
    )
    with pytest.raises(RemoteError) as info:
        graph.get_state(CONFIG)
    assert info.value.field == "next"
    assert info.value.endpoint == "GET /threads/t1/state"


def test_an_sdk_event_without_a_name_is_an_error():
    graph = RemoteGraph("agent", sync_client=FakeSdk(events=[{"event": None, "data": {}}]))
    with pytest.raises(RemoteError, match="'event' must be an event name") as info:
        graph.invoke({"n": 0}, CONFIG)
    assert info.value.endpoint == "POST /threads/t1/runs/stream"


def test_an_sdk_404_means_a_new_remote_thread_for_a_node():
    sdk = FakeSdk(state=SdkError(404), events=[StreamPart("values", {"n": 1})])
    graph = RemoteGraph("agent", sync_client=sdk)
    assert graph({"n": 0}, CONFIG) == {"n": 1}  # type: ignore[arg-type]
    assert sdk.streams[0]["input"] == {"n": 0}
    sdk = FakeSdk(state=SdkError(500))
    with pytest.raises(SdkError):
        RemoteGraph("agent", sync_client=sdk)({"n": 0}, CONFIG)  # type: ignore[arg-type]


def test_async_sdk_answers_are_checked_too():
    class AsyncSdk(FakeSdk):
        async def get_state(self, **kwargs: Any) -> Any:  # type: ignore[override]
            return {"values": {}, "checkpoint": None, "tasks": [{"id": "t", "name": 3}]}

    graph = RemoteGraph("agent", client=AsyncSdk())
    with pytest.raises(RemoteError) as info:
        asyncio.run(graph.aget_state(CONFIG))
    assert info.value.field == "tasks[0].name"
