"""Cancelling an async call leaves nothing behind, and a slow consumer holds the
server back instead of filling memory."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from stategraph.pregel.remote import RemoteGraph
from stategraph.remote import RemoteLimits

from .conftest import CONFIG, reader_threads, wait_no_reader_threads
from .hostile import JSON, SSE, HostileServer, Received, Wire, event

RUN = "/threads/t1/runs/stream"
STATE = "/threads/t1/state"
MiB = 1024 * 1024


def _open_stream(req: Received, wire: Wire) -> None:
    """One event, then silence until the client goes away."""
    wire.head(200, {**SSE, "Transfer-Encoding": "chunked"})
    wire.chunk(event("values", {"n": 1}))
    wire.wait_client_gone(30)


def _no_answer(req: Received, wire: Wire) -> None:
    wire.wait_client_gone(30)


async def _cancel_after(coro, seconds: float) -> None:
    task = asyncio.ensure_future(coro)
    await asyncio.sleep(seconds)
    assert reader_threads(), "the call should be running on its worker thread"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_a_cancelled_ainvoke_leaves_no_thread_and_no_socket(server: HostileServer):
    server.route("POST", RUN, _open_stream)
    graph = RemoteGraph("agent", url=server.url)
    asyncio.run(_cancel_after(graph.ainvoke({"n": 0}, CONFIG), 0.3))
    assert reader_threads() == []  # awaited before the cancellation went on
    assert server.connections[-1].peer_closed.wait(2)


def test_a_cancelled_aget_state_leaves_no_thread_and_no_socket(server: HostileServer):
    server.route("GET", STATE, _no_answer)
    graph = RemoteGraph("agent", url=server.url)
    asyncio.run(_cancel_after(graph.aget_state(CONFIG), 0.3))
    assert reader_threads() == []
    assert server.connections[-1].peer_closed.wait(2)


def test_a_cancelled_node_run_leaves_nothing_behind(server: HostileServer):
    from stategraph.checkpoint.memory import InMemorySaver
    from stategraph.graph import START, StateGraph

    server.route(
        "GET",
        STATE,
        lambda req, wire: wire.head(404, {**JSON, "Content-Length": "2"}) or wire.send(b"{}"),
    )
    server.route("POST", RUN, _open_stream)
    builder = StateGraph(dict)
    builder.add_node("remote", RemoteGraph("agent", url=server.url))
    builder.add_edge(START, "remote")
    local = builder.compile(checkpointer=InMemorySaver())
    asyncio.run(_cancel_after(local.ainvoke({"n": 0}, CONFIG), 0.5))
    assert wait_no_reader_threads() == []
    assert server.connections[-1].peer_closed.wait(2)


def test_an_async_consumer_that_stops_early_closes_the_stream(server: HostileServer):
    server.route("POST", RUN, _open_stream)
    graph = RemoteGraph("agent", url=server.url)

    async def first() -> object:
        stream = graph.astream({"n": 0}, CONFIG, stream_mode="values")
        async for chunk in stream:
            await stream.aclose()  # type: ignore[attr-defined]
            return chunk
        return None

    assert asyncio.run(first()) == {"n": 1}
    assert reader_threads() == []
    assert server.connections[-1].peer_closed.wait(2)


def test_a_sync_consumer_that_stops_early_closes_the_stream(server: HostileServer):
    server.route("POST", RUN, _open_stream)
    graph = RemoteGraph("agent", url=server.url)
    stream = graph.stream({"n": 0}, CONFIG, stream_mode="values")
    assert next(stream) == {"n": 1}
    stream.close()
    assert server.connections[-1].peer_closed.wait(2)


def _flood(req: Received, wire: Wire) -> None:
    """Events as fast as the client takes them, up to 300 MB."""
    wire.head(200, {**SSE, "Connection": "close"})
    one = event("values", {"pad": "x" * 1000})
    batch = one * 64
    while wire.record.written < 300 * MiB and wire.send(batch):
        pass


def test_a_slow_async_consumer_holds_the_server_back(server: HostileServer):
    server.route("POST", RUN, _flood)
    graph = RemoteGraph("agent", url=server.url, limits=RemoteLimits(queue_size=4))

    async def slow() -> int:
        taken = 0
        async for _ in graph.astream({"n": 0}, CONFIG, stream_mode="values"):
            taken += 1
            await asyncio.sleep(0.02)
            if taken == 50:
                break
        return taken

    start = time.monotonic()
    assert asyncio.run(slow()) == 50
    assert time.monotonic() - start >= 1.0
    # 50 events taken, 4 queued: the rest stayed on the server's side of the sockets
    assert server.connections[-1].written < 40 * MiB
    # the consumer left without closing the stream: it is closed when collected
    assert wait_no_reader_threads(2) == []


def test_results_still_arrive_whole_through_a_small_queue(server: HostileServer):
    events = [event("values", {"n": i}) for i in range(200)]

    def script(req: Received, wire: Wire) -> None:
        body = b"".join(events)
        wire.head(200, {**SSE, "Content-Length": str(len(body))})
        wire.send(body)

    server.route("POST", RUN, script)
    graph = RemoteGraph("agent", url=server.url, limits=RemoteLimits(queue_size=1))

    async def collect() -> list:
        return [c async for c in graph.astream({"n": 0}, CONFIG, stream_mode="values")]

    assert asyncio.run(collect()) == [{"n": i} for i in range(200)]
    assert json.loads(server.runs()[0].body)["stream_mode"] == ["values", "updates"]
