"""Runs driven by LangGraph's own Python SDK (``langgraph-sdk``): stream, wait,
background create, join, join_stream, get, list, cancel, delete, multitask strategies."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

langgraph_sdk = pytest.importorskip("langgraph_sdk")
from langgraph_sdk import get_client  # noqa: E402
from langgraph_sdk.errors import ConflictError, NotFoundError, UnprocessableEntityError  # noqa: E402

pytestmark = pytest.mark.server

HI = {"messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def client(server: Any) -> Any:
    return get_client(url=server.url)


async def _events(stream: Any) -> list[tuple[str, Any]]:
    return [(part.event, part.data) async for part in stream]


async def test_stream_to_interrupt_then_resume_to_end(client: Any) -> None:
    thread = await client.threads.create(metadata={"user": "alice"})
    events = await _events(
        client.runs.stream(
            thread["thread_id"], "agent", input=HI, stream_mode=["values", "updates"]
        )
    )
    names = [e for e, _ in events]
    assert names[0] == "metadata" and "run_id" in events[0][1]
    assert names.count("updates") == 2 and names.count("values") == 3
    interrupt = events[-2][1]["__interrupt__"][0]
    assert interrupt["value"] == {"question": "approve?"} and len(interrupt["id"]) == 32
    assert events[-1][1]["__interrupt__"][0]["id"] == interrupt["id"]
    got = await client.threads.get(thread["thread_id"])
    assert got["status"] == "interrupted"
    assert got["metadata"]["user"] == "alice" and got["metadata"]["graph_id"] == "agent"
    [(task_id, items)] = got["interrupts"].items()
    assert items == [{"id": interrupt["id"], "value": {"question": "approve?"}}]
    state = await client.threads.get_state(thread["thread_id"])
    assert state["next"] == ["approve"] and state["tasks"][0]["id"] == task_id
    assert state["tasks"][0]["path"] == ["__pregel_pull", "approve"]
    assert state["metadata"]["assistant_id"] == got["metadata"]["assistant_id"]
    assert state["metadata"]["graph_id"] == "agent" and state["metadata"]["run_attempt"] == 1
    final = await client.runs.wait(thread["thread_id"], "agent", command={"resume": "yes"})
    assert final["approved"] is True and [m["content"] for m in final["messages"]] == [
        "hi",
        "I will check.",
        "done",
    ]
    assert (await client.threads.get(thread["thread_id"]))["status"] == "idle"
    history = await client.threads.get_history(thread["thread_id"], limit=100)
    assert [h["metadata"]["step"] for h in history] == [3, 2, 1, 0, -1]


async def test_every_stream_mode(client: Any) -> None:
    thread = await client.threads.create()
    modes = [
        "values",
        "updates",
        "messages-tuple",
        "custom",
        "debug",
        "tasks",
        "checkpoints",
        "events",
    ]
    events = await _events(
        client.runs.stream(thread["thread_id"], "agent", input=HI, stream_mode=modes)
    )
    names = {e for e, _ in events}
    assert {
        "metadata",
        "values",
        "updates",
        "messages",
        "custom",
        "debug",
        "tasks",
        "checkpoints",
        "events",
    } <= names
    custom = [d for e, d in events if e == "custom"]
    assert custom == [{"progress": "thinking"}]
    message, meta = next(d for e, d in events if e == "messages")
    assert message["content"] == "I will check." and meta["langgraph_node"] == "agent"
    kinds = [d["event"] for e, d in events if e == "events"]
    assert kinds[0] == "on_chain_start" and "on_chain_end" in kinds
    root = next(d for e, d in events if e == "events")
    assert root["name"] == "agent"  # the root run is named after the graph
    tasks = [d for e, d in events if e == "tasks"]
    assert {t["name"] for t in tasks} == {"agent", "approve"}
    assert [d["type"] for e, d in events if e == "debug"][:2] == ["checkpoint", "checkpoint"]


async def test_stream_payloads_match_langgraph_servers(client: Any) -> None:
    """Two differences the differential harness showed against ``langgraph dev``: debug
    checkpoint payloads name their checkpoint and parent, and the run's config
    metadata (in ``messages`` and ``tasks`` events) has no user_id keys (they live in
    configurable, from where the library copies them into checkpoint metadata)."""
    thread = await client.threads.create()
    events = await _events(
        client.runs.stream(
            thread["thread_id"], "agent", input=HI, stream_mode=["debug", "messages-tuple", "tasks"]
        )
    )
    checkpoints = [d["payload"] for e, d in events if e == "debug" and d["type"] == "checkpoint"]
    assert len(checkpoints) == 3
    assert checkpoints[0]["parent_checkpoint"] is None
    for payload in checkpoints:
        conf = payload["config"]["configurable"]
        assert payload["checkpoint"] == {
            "checkpoint_id": conf["checkpoint_id"],
            "thread_id": thread["thread_id"],
            "checkpoint_ns": "",
        }
    for parent, child in itertools.pairwise(checkpoints):
        assert child["parent_checkpoint"] == parent["checkpoint"]
    _, meta = next(d for e, d in events if e == "messages")
    assert meta["graph_id"] == "agent" and meta["langgraph_node"] == "agent"
    assert "user_id" not in meta and "langgraph_auth_user_id" not in meta
    task_meta = [d["metadata"] for e, d in events if e == "tasks" and "metadata" in d]
    assert task_meta and all("user_id" not in m for m in task_meta)
    state = await client.threads.get_state(thread["thread_id"])
    assert state["metadata"]["user_id"] == "" and state["metadata"]["graph_id"] == "agent"


async def test_messages_mode_streams_partial_tokens(client: Any) -> None:
    thread = await client.threads.create()
    events = await _events(
        client.runs.stream(thread["thread_id"], "chat", input=HI, stream_mode="messages")
    )
    names = [e for e, _ in events]
    assert names[1] == "messages/metadata"
    partial = [d[0]["content"] for e, d in events if e == "messages/partial"]
    assert len(partial) > 2 and partial[-1] == "Hello there, friend!"
    assert all(partial[i].startswith(partial[i - 1]) for i in range(1, len(partial)))


async def test_stream_subgraphs_names_events_by_namespace(client: Any) -> None:
    thread = await client.threads.create()
    events = await _events(
        client.runs.stream(
            thread["thread_id"],
            "parent",
            input={"n": 1},
            stream_mode="updates",
            stream_subgraphs=True,
        )
    )
    names = [e for e, _ in events]
    sub = [e for e in names if e.startswith("updates|child:")]
    assert sub and names[-1] == "updates"
    assert events[-1][1] == {"child": {"n": 11, "log": ["child"]}}


async def test_background_run_join_get_list(client: Any) -> None:
    thread = await client.threads.create()
    run = await client.runs.create(thread["thread_id"], "agent", input=HI)
    assert run["status"] == "pending" and run["multitask_strategy"] == "enqueue"
    assert run["kwargs"]["input"] == HI and run["metadata"]["graph_id"] == "agent"
    joined = await client.runs.join(thread["thread_id"], run["run_id"])
    assert joined["count"] == 1 and "__interrupt__" in joined
    got = await client.runs.get(thread["thread_id"], run["run_id"])
    assert got["status"] == "success"  # stopping at an interrupt is a success
    listed = await client.runs.list(thread["thread_id"])
    assert [r["run_id"] for r in listed] == [run["run_id"]]


async def test_join_stream_replays_a_background_run(client: Any) -> None:
    thread = await client.threads.create()
    run = await client.runs.create(
        thread["thread_id"], "steps", input={"n": 0}, stream_mode="updates"
    )
    events = await _events(client.runs.join_stream(thread["thread_id"], run["run_id"]))
    updates = [d for e, d in events if e == "updates"]
    assert [list(u) for u in updates] == [["s0"], ["s1"], ["s2"], ["s3"], ["s4"]]
    again = await _events(
        client.runs.join_stream(thread["thread_id"], run["run_id"], last_event_id="2")
    )
    assert [list(d) for e, d in again if e == "updates"] == [["s2"], ["s3"], ["s4"]]


async def test_cancel_interrupts_a_running_run(client: Any) -> None:
    thread = await client.threads.create()
    run = await client.runs.create(thread["thread_id"], "slow", input={"n": 30})
    for _ in range(100):
        if (await client.runs.get(thread["thread_id"], run["run_id"]))["status"] == "running":
            break
        await asyncio.sleep(0.05)
    await client.runs.cancel(thread["thread_id"], run["run_id"], wait=True)
    got = await client.runs.get(thread["thread_id"], run["run_id"])
    assert got["status"] == "interrupted"
    state = await client.threads.get(thread["thread_id"])
    assert state["status"] == "interrupted" and state["error"]["error"] == "UserInterrupt"


async def test_cancel_rollback_deletes_the_run(client: Any) -> None:
    thread = await client.threads.create()
    run = await client.runs.create(thread["thread_id"], "slow", input={"n": 30})
    await asyncio.sleep(0.3)
    await client.runs.cancel(thread["thread_id"], run["run_id"], wait=True, action="rollback")
    with pytest.raises(NotFoundError):
        await client.runs.get(thread["thread_id"], run["run_id"])


async def test_multitask_reject_enqueue_interrupt_rollback(client: Any) -> None:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    first = await client.runs.create(tid, "slow", input={"n": 0.6})
    with pytest.raises(ConflictError):
        await client.runs.create(tid, "slow", input={"n": 0}, multitask_strategy="reject")
    queued = await client.runs.create(tid, "slow", input={"n": 0.1}, multitask_strategy="enqueue")
    assert (await client.runs.join(tid, queued["run_id"]))["n"] == 1.1
    assert (await client.runs.get(tid, first["run_id"]))["status"] == "success"
    long = await client.runs.create(tid, "slow", input={"n": 30})
    await asyncio.sleep(0.3)
    newer = await client.runs.create(tid, "slow", input={"n": 0.1}, multitask_strategy="interrupt")
    assert (await client.runs.join(tid, newer["run_id"]))["n"] == 1.1
    assert (await client.runs.get(tid, long["run_id"]))["status"] == "interrupted"
    doomed = await client.runs.create(tid, "slow", input={"n": 30})
    await asyncio.sleep(0.3)
    last = await client.runs.create(tid, "slow", input={"n": 0.1}, multitask_strategy="rollback")
    assert (await client.runs.join(tid, last["run_id"]))["n"] == 1.1
    with pytest.raises(NotFoundError):
        await client.runs.get(tid, doomed["run_id"])


async def test_failed_run_ends_with_error_event_and_status(client: Any) -> None:
    thread = await client.threads.create()
    events = await _events(client.runs.stream(thread["thread_id"], "fail", input={"n": 1}))
    assert events[-1] == ("error", {"error": "ValueError", "message": "boom"})
    got = await client.threads.get(thread["thread_id"])
    assert got["status"] == "error" and got["error"] == {"error": "ValueError", "message": "boom"}
    [run] = await client.runs.list(thread["thread_id"])
    assert run["status"] == "error"
    with pytest.raises(Exception, match="boom"):
        await client.runs.wait(thread["thread_id"], "fail", input={"n": 1})


async def test_delete_run(client: Any) -> None:
    thread = await client.threads.create()
    run = await client.runs.create(thread["thread_id"], "steps", input={"n": 0})
    await client.runs.join(thread["thread_id"], run["run_id"])
    await client.runs.delete(thread["thread_id"], run["run_id"])
    with pytest.raises(NotFoundError):
        await client.runs.get(thread["thread_id"], run["run_id"])


async def test_stateless_runs(client: Any) -> None:
    out = await client.runs.wait(None, "steps", input={"n": 0})
    assert out["n"] == 5 and out["log"] == ["s0", "s1", "s2", "s3", "s4"]
    events = await _events(client.runs.stream(None, "steps", input={"n": 0}, stream_mode="updates"))
    assert len([e for e, _ in events if e == "updates"]) == 5


async def test_bad_requests_are_refused_clearly(client: Any) -> None:
    thread = await client.threads.create()
    with pytest.raises(UnprocessableEntityError, match="registered graphs"):
        await client.runs.create(thread["thread_id"], "nope", input={})
    with pytest.raises(NotFoundError):
        await client.runs.create(
            thread["thread_id"], "00000000-0000-0000-0000-000000000000", input={}
        )
    with pytest.raises(NotFoundError):
        await client.runs.create("00000000-0000-0000-0000-000000000001", "agent", input={})
    with pytest.raises(UnprocessableEntityError, match="stream_mode"):
        await client.runs.create(thread["thread_id"], "agent", input={}, stream_mode="nonsense")


async def test_if_not_exists_create_makes_the_thread(client: Any) -> None:
    import uuid

    tid = str(uuid.uuid4())
    run = await client.runs.create(tid, "steps", input={"n": 0}, if_not_exists="create")
    assert (await client.runs.join(tid, run["run_id"]))["n"] == 5
    assert (await client.threads.get(tid))["status"] == "idle"


async def test_context_and_assistant_config(client: Any) -> None:
    assistant = await client.assistants.create("ctx", context={"model": "small"}, name="small")
    out = await client.runs.wait(None, assistant["assistant_id"], input={"text": "hi"})
    assert out == {"text": "hi via small"}
    out = await client.runs.wait(
        None, assistant["assistant_id"], input={"text": "hi"}, context={"model": "big"}
    )
    assert out == {"text": "hi via big"}


async def test_store_is_shared_with_graphs(client: Any) -> None:
    key = "k-" + str(id(client))
    assert (await client.runs.wait(None, "memo", input={"key": key}))["seen"] is None
    assert (await client.runs.wait(None, "memo", input={"key": key}))["seen"] == {"times": 1}
    item = await client.store.get_item(["memo"], key)
    assert item["value"] == {"times": 2}


async def test_create_batch(client: Any) -> None:
    made = await client.runs.create_batch(
        [
            {"assistant_id": "steps", "input": {"n": 0}},
            {"assistant_id": "steps", "input": {"n": 10}},
        ]
    )
    assert [r["status"] for r in made] == ["pending", "pending"]
    joined = [await client.runs.join(r["thread_id"], r["run_id"]) for r in made]
    assert [j["n"] for j in joined] == [5, 15]
