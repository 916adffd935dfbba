"""Threads, assistants, the store and crons driven by LangGraph's Python SDK."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

langgraph_sdk = pytest.importorskip("langgraph_sdk")
from langgraph_sdk import get_client  # noqa: E402
from langgraph_sdk.errors import (  # noqa: E402
    BadRequestError,
    ConflictError,
    NotFoundError,
    UnprocessableEntityError,
)

pytestmark = pytest.mark.server

HI = {"messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def client(server: Any) -> Any:
    return get_client(url=server.url)


# ----------------------------------------------------------------------------- threads
async def test_thread_create_keeps_metadata_and_search_finds_it(client: Any) -> None:
    tag = str(uuid.uuid4())
    thread = await client.threads.create(metadata={"tag": tag, "user": "ann"})
    assert thread["metadata"] == {"tag": tag, "user": "ann"} and thread["status"] == "idle"
    assert thread["values"] is None and thread["created_at"] and thread["updated_at"]
    found = await client.threads.search(metadata={"tag": tag})
    assert [t["thread_id"] for t in found] == [thread["thread_id"]]
    assert await client.threads.search(metadata={"tag": tag, "user": "bob"}) == []
    assert await client.threads.count(metadata={"tag": tag}) == 1


async def test_thread_search_by_status_and_values(client: Any) -> None:
    tag = str(uuid.uuid4())
    waiting = await client.threads.create(metadata={"tag": tag})
    await client.runs.wait(waiting["thread_id"], "agent", input=HI)
    done = await client.threads.create(metadata={"tag": tag})
    await client.runs.wait(done["thread_id"], "steps", input={"n": 0})
    interrupted = await client.threads.search(metadata={"tag": tag}, status="interrupted")
    assert [t["thread_id"] for t in interrupted] == [waiting["thread_id"]]
    idle = await client.threads.search(metadata={"tag": tag}, status="idle")
    assert [t["thread_id"] for t in idle] == [done["thread_id"]]
    by_value = await client.threads.search(metadata={"tag": tag}, values={"n": 5})
    assert [t["thread_id"] for t in by_value] == [done["thread_id"]]
    page = await client.threads.search(
        metadata={"tag": tag}, limit=1, sort_by="created_at", sort_order="asc"
    )
    assert [t["thread_id"] for t in page] == [waiting["thread_id"]]


async def test_thread_create_if_exists(client: Any) -> None:
    thread = await client.threads.create(metadata={"a": 1})
    with pytest.raises(ConflictError):
        await client.threads.create(thread_id=thread["thread_id"])
    same = await client.threads.create(thread_id=thread["thread_id"], if_exists="do_nothing")
    assert same["metadata"] == {"a": 1}


async def test_thread_update_copy_delete(client: Any) -> None:
    thread = await client.threads.create(metadata={"a": 1})
    await client.runs.wait(thread["thread_id"], "steps", input={"n": 0})
    updated = await client.threads.update(thread["thread_id"], metadata={"b": 2})
    assert updated["metadata"]["a"] == 1 and updated["metadata"]["b"] == 2
    copy = await client.threads.copy(thread["thread_id"])
    assert copy["thread_id"] != thread["thread_id"]
    state = await client.threads.get_state(copy["thread_id"])
    assert state["values"]["n"] == 5
    history = await client.threads.get_history(copy["thread_id"], limit=100)
    assert len(history) == 7
    await client.threads.delete(thread["thread_id"])
    with pytest.raises(NotFoundError):
        await client.threads.get(thread["thread_id"])
    assert (await client.threads.get(copy["thread_id"]))["thread_id"] == copy["thread_id"]


async def test_update_state_and_state_at_checkpoint(client: Any) -> None:
    thread = await client.threads.create()
    await client.runs.wait(thread["thread_id"], "agent", input=HI)
    first = await client.threads.get_state(thread["thread_id"])
    out = await client.threads.update_state(thread["thread_id"], {"count": 42})
    assert out["checkpoint"]["checkpoint_id"] != first["checkpoint"]["checkpoint_id"]
    now = await client.threads.get_state(thread["thread_id"])
    assert now["values"]["count"] == 42 and now["metadata"]["source"] == "update"
    assert now["metadata"]["graph_id"] == "agent"
    assert now["metadata"]["thread_id"] == thread["thread_id"]
    old = await client.threads.get_state(
        thread["thread_id"], checkpoint_id=first["checkpoint"]["checkpoint_id"]
    )
    assert old["values"]["count"] == 1
    with pytest.raises(BadRequestError):  # as langgraph dev answers
        await client.threads.update_state(thread["thread_id"], {"nope": 1}, as_node="missing")
    assert (await client.threads.get_state(thread["thread_id"]))["values"]["count"] == 42


async def test_fork_from_an_earlier_checkpoint(client: Any) -> None:
    thread = await client.threads.create()
    await client.runs.wait(thread["thread_id"], "steps", input={"n": 0})
    history = await client.threads.get_history(thread["thread_id"], limit=100)
    after_s1 = next(h for h in history if h["next"] == ["s2"])
    out = await client.runs.wait(
        thread["thread_id"],
        "steps",
        input=None,
        checkpoint_id=after_s1["checkpoint"]["checkpoint_id"],
    )
    assert out["log"] == ["s0", "s1", "s2", "s3", "s4"] and out["n"] == 5


async def test_thread_ttl_is_kept(client: Any) -> None:
    thread = await client.threads.create(ttl=60)
    assert (await client.threads.get(thread["thread_id"]))["thread_id"] == thread["thread_id"]


# -------------------------------------------------------------------------- assistants
async def test_default_assistants_are_uuids_and_names_resolve_for_runs(client: Any) -> None:
    found = await client.assistants.search(graph_id="agent")
    default = next(a for a in found if a["metadata"] == {"created_by": "system"})
    uuid.UUID(default["assistant_id"])
    assert default["name"] == "agent" and default["version"] == 1
    with pytest.raises(UnprocessableEntityError):
        await client.assistants.get("agent")  # a graph name is not an assistant id here
    assert (await client.assistants.get(default["assistant_id"]))["graph_id"] == "agent"


async def test_assistant_create_update_versions_latest_delete(client: Any) -> None:
    made = await client.assistants.create(
        "ctx", context={"model": "m1"}, metadata={"team": "x"}, name="first"
    )
    assert made["version"] == 1 and made["context"] == {"model": "m1"}
    changed = await client.assistants.update(
        made["assistant_id"], context={"model": "m2"}, name="second"
    )
    assert (
        changed["version"] == 2
        and changed["name"] == "second"
        and changed["metadata"] == {"team": "x"}
    )
    versions = await client.assistants.get_versions(made["assistant_id"])
    assert [v["version"] for v in versions] == [2, 1]
    out = await client.runs.wait(None, made["assistant_id"], input={"text": "t"})
    assert out == {"text": "t via m2"}
    back = await client.assistants.set_latest(made["assistant_id"], 1)
    assert back["version"] == 1 and back["context"] == {"model": "m1"}
    assert (await client.runs.wait(None, made["assistant_id"], input={"text": "t"})) == {
        "text": "t via m1"
    }
    listed = await client.assistants.search(metadata={"team": "x"})
    assert [a["assistant_id"] for a in listed] == [made["assistant_id"]]
    await client.assistants.delete(made["assistant_id"])
    with pytest.raises(NotFoundError):
        await client.assistants.get(made["assistant_id"])


async def test_assistant_graph_and_schemas(client: Any) -> None:
    [default] = [
        a for a in await client.assistants.search(graph_id="agent") if a["name"] == "agent"
    ]
    drawn = await client.assistants.get_graph(default["assistant_id"])
    assert [n["id"] for n in drawn["nodes"]] == [
        "__start__",
        "agent",
        "approve",
        "finish",
        "__end__",
    ]
    schemas = await client.assistants.get_schemas(default["assistant_id"])
    assert schemas["graph_id"] == "agent"
    assert set(schemas["state_schema"]["properties"]) == {"messages", "approved", "count"}
    [ctx_default] = [
        a for a in await client.assistants.search(graph_id="ctx") if a["name"] == "ctx"
    ]
    ctx_schemas = await client.assistants.get_schemas(ctx_default["assistant_id"])
    assert set(ctx_schemas["context_schema"]["properties"]) == {"model"}


async def test_assistant_for_unknown_graph_is_refused(client: Any) -> None:
    with pytest.raises(NotFoundError):
        await client.assistants.create("no-such-graph")


# ------------------------------------------------------------------------------- store
async def test_store_put_get_search_namespaces_delete(client: Any) -> None:
    ns = ["users", str(uuid.uuid4())]
    await client.store.put_item(ns, "prefs", {"theme": "dark"})
    await client.store.put_item(ns, "other", {"theme": "light"})
    item = await client.store.get_item(ns, "prefs")
    assert item["value"] == {"theme": "dark"} and item["namespace"] == ns and item["key"] == "prefs"
    assert await client.store.get_item(ns, "missing") is None  # a missing item reads as null
    found = await client.store.search_items(ns, filter={"theme": "light"})
    assert [i["key"] for i in found["items"]] == ["other"]
    spaces = await client.store.list_namespaces(prefix=["users"])
    assert ns in spaces["namespaces"]
    await client.store.delete_item(ns, "prefs")
    assert await client.store.get_item(ns, "prefs") is None


async def test_store_refuses_bad_namespaces(server: Any) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=server.url) as http:
        reply = await http.put("/store/items", json={"namespace": ["a.b"], "key": "k", "value": {}})
        assert reply.status_code == 422 and "period" in reply.json()["detail"]
        reply = await http.put("/store/items", json={"namespace": ["a"], "key": "", "value": {}})
        assert reply.status_code == 422 and "key" in reply.json()["detail"]


# ------------------------------------------------------------------------------- crons
async def test_crons_create_search_delete(client: Any) -> None:
    thread = await client.threads.create()
    stateless = await client.crons.create("steps", schedule="*/5 * * * *", input={"n": 0})
    on_thread = await client.crons.create_for_thread(
        thread["thread_id"], "steps", schedule="0 * * * *", input={"n": 0}
    )
    assert stateless["thread_id"] is None and on_thread["thread_id"] == thread["thread_id"]
    assert stateless["next_run_date"] and stateless["enabled"] is True
    assert stateless["payload"]["input"] == {"n": 0}
    mine = await client.crons.search(thread_id=thread["thread_id"])
    assert [c["cron_id"] for c in mine] == [on_thread["cron_id"]]
    await client.crons.delete(on_thread["cron_id"])
    await client.crons.delete(stateless["cron_id"])
    assert await client.crons.search(thread_id=thread["thread_id"]) == []
    with pytest.raises(UnprocessableEntityError, match="schedule"):
        await client.crons.create("steps", schedule="every day", input={})


async def test_thread_cron_fires_and_runs_on_its_thread(client: Any, server: Any) -> None:
    """A schedule every second (6-field croniter syntax) starts runs on the thread."""
    thread = await client.threads.create()
    cron = await client.crons.create_for_thread(
        thread["thread_id"], "steps", schedule="* * * * * */1", input={"n": 0}
    )
    try:
        for _ in range(100):
            runs = await client.runs.list(thread["thread_id"])
            if any(r["status"] == "success" for r in runs):
                break
            await asyncio.sleep(0.1)
        runs = await client.runs.list(thread["thread_id"])
        assert any(r["status"] == "success" for r in runs)
        assert runs[0]["kwargs"]["config"]["configurable"]["cron_id"] == cron["cron_id"]
    finally:
        await client.crons.delete(cron["cron_id"])


async def test_a_thread_is_not_busy_once_its_wait_returned(client: Any) -> None:
    # a worker records a run's end (waking runs.wait) before it releases the run's queue
    # entry; acting on the thread right away must not meet "busy" (seen as a 409 on
    # PostgreSQL about once a suite run). Repeated to give the window chances to show.
    for i in range(10):
        thread = await client.threads.create()
        await client.runs.wait(thread["thread_id"], "agent", input=HI)
        out = await client.threads.update_state(thread["thread_id"], {"count": 100 + i})
        assert out["checkpoint"]["checkpoint_id"]
        state = await client.threads.get_state(thread["thread_id"])
        assert state["values"]["count"] == 100 + i
        assert (await client.threads.get(thread["thread_id"]))["status"] != "busy"
