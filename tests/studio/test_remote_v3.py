"""``RemoteGraph.stream_events(version="v3")``: handing a run to an SDK thread stream.

The SDK's thread stream is played here by a small recording object with the same
methods; the studio serves the run-streaming API, not the v3 protocol.
"""

from __future__ import annotations

from typing import Any

import pytest

from stategraph.pregel.remote import RemoteGraph
from stategraph.remote._run_stream import (
    AsyncRemoteGraphRunStream,
    ChannelProjection,
    ProjectionRegistry,
    RemoteGraphRunStream,
)
from stategraph.types import Command


class SdkThread:
    """Records what the run stream asks of an SDK thread stream."""

    def __init__(self, events: list[Any], fail_start: bool = False) -> None:
        self.thread_id = "th-1"
        self.calls: list[tuple[str, Any]] = []
        self.events = events
        self.fail_start = fail_start
        self.values, self.messages = ["v"], ["m"]
        self.tool_calls, self.subgraphs = ["t"], ["s"]
        self.extensions = {"mine": ["custom items"]}
        self.output, self.interrupted, self.interrupts = {"done": 1}, False, []
        self.run = self

    def __enter__(self) -> SdkThread:
        self.calls.append(("enter", None))
        return self

    def __exit__(self, *exc: Any) -> None:
        self.calls.append(("exit", exc[0]))

    def start(self, **kwargs: Any) -> dict[str, str]:
        self.calls.append(("start", kwargs))
        if self.fail_start:
            raise ConnectionError("server went away")
        return {"run_id": "run-1"}

    def subscribe(self, channels: list[str]) -> list[dict[str, Any]]:
        self.calls.append(("subscribe", channels))
        return [
            {"method": "updates", "params": {"data": {"a": 1}}},
            {"method": "updates", "params": {}},
            {"method": "values", "params": {"data": {"b": 2}}},
        ]

    def close(self) -> None:
        self.calls.append(("close", None))


class Client:
    def __init__(self, thread: SdkThread) -> None:
        self.thread = thread
        self.opened: list[dict[str, Any]] = []
        self.cancelled: list[tuple[Any, ...]] = []
        self.threads = self
        self.runs = self

    def stream(self, **kwargs: Any) -> SdkThread:
        self.opened.append(kwargs)
        return self.thread

    def cancel(self, *args: Any, **kwargs: Any) -> None:
        self.cancelled.append((*args, kwargs))


def test_v3_run_starts_on_enter_and_aborts_once():
    sdk = SdkThread(events=["e1", "e2"])
    client = Client(sdk)
    remote = RemoteGraph("agent", sync_client=client, client=client)
    config = {"configurable": {"thread_id": "t-9", "checkpoint_id": "c", "user": "u"}}
    run = remote.stream_events(Command(resume="yes"), config, version="v3", metadata={"m": 1})
    assert isinstance(run, RemoteGraphRunStream)
    assert client.opened == [{"thread_id": "t-9", "assistant_id": "agent", "headers": None}]
    with run as same:
        assert same is run
        start = sdk.calls[1]
        assert start == (
            "start",
            {"input": "yes", "config": {"configurable": {"user": "u"}}, "metadata": {"m": 1}},
        )
        assert list(run) == ["e1", "e2"]
        assert run.output == {"done": 1} and run.interrupted is False
        assert run.values == ["v"] and run.extensions["mine"] == ["custom items"]
        assert list(run.extensions["updates"]) == [{"a": 1}]
        run.abort()
        run.abort()
    assert client.cancelled == [("th-1", "run-1", {"wait": False})]
    assert [c[0] for c in sdk.calls].count("close") == 1
    assert sdk.calls[-1] == ("exit", None)


def test_v3_start_failure_closes_the_sdk_stream():
    sdk = SdkThread(events=[], fail_start=True)
    run = RemoteGraph("agent", sync_client=Client(sdk)).stream_events({"x": 1})
    with pytest.raises(ConnectionError), run:
        pytest.fail("not reached")
    assert sdk.calls[-1] == ("exit", ConnectionError)
    assert run._run_id is None


def test_v3_refuses_what_it_cannot_send():
    client = Client(SdkThread(events=[]))
    remote = RemoteGraph("agent", sync_client=client)
    for kwargs, word in (
        ({"interrupt_before": ["review"]}, "interrupt_before"),
        ({"context": {"a": 1}}, "context"),
        ({"control": object()}, "control"),
    ):
        with pytest.raises(NotImplementedError, match=word):
            remote.stream_events({"x": 1}, version="v3", **kwargs)
    with pytest.raises(NotImplementedError, match="goto"):
        remote.stream_events(Command(goto="review"), version="v3")
    with pytest.raises(NotImplementedError, match="update"):
        remote.stream_events(Command(update={"a": 1}), version="v3")
    assert client.opened == []
    with pytest.raises(ValueError, match="SDK client"):
        RemoteGraph("agent", url="http://127.0.0.1:9").stream_events({"x": 1})


def test_projection_registry_names():
    sdk = SdkThread(events=[])
    registry = ProjectionRegistry(sdk)
    assert list(registry) == [
        "values", "messages", "tool_calls", "subgraphs", "updates", "checkpoints", "tasks", "custom",
    ]  # fmt: skip
    assert isinstance(registry["tasks"], ChannelProjection)
    with pytest.raises(KeyError, match="No projection 'nope'"):
        registry["nope"]


async def test_async_v3_run():
    class AsyncSdk(SdkThread):
        async def __aenter__(self) -> AsyncSdk:
            self.calls.append(("aenter", None))
            return self

        async def __aexit__(self, *exc: Any) -> None:
            self.calls.append(("aexit", exc[0]))

        async def start(self, **kwargs: Any) -> dict[str, str]:  # type: ignore[override]
            self.calls.append(("start", kwargs))
            return {"run_id": "run-2"}

        async def close(self) -> None:  # type: ignore[override]
            self.calls.append(("close", None))

    class AsyncClient(Client):
        async def cancel(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
            self.cancelled.append((*args, kwargs))

    sdk = AsyncSdk(events=[])
    client = AsyncClient(sdk)
    remote = RemoteGraph("agent", client=client)
    run = await remote.astream_events({"x": 1}, {"configurable": {"thread_id": "t"}})
    assert isinstance(run, AsyncRemoteGraphRunStream)
    async with run:
        assert await run.output() == {"done": 1}
        assert await run.interrupted() is False
        await run.abort()
    assert client.cancelled == [("th-1", "run-2", {"wait": False})]
    assert sdk.calls[-1] == ("aexit", None)
    with pytest.raises(NotImplementedError, match="version='v2'"):
        await remote.astream_events({"x": 1}, version="v2")
