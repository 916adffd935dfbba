"""The SDK calls the harness makes on each server (run with a Python that has
``langgraph-sdk``): ``python scenarios.py URL OUT.json [NAME ...]``.

Each scenario is an async function of a client returning a list of observations
``[label, value]``; a refused call is observed as ``{"error": <class>, "status": <code>}``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from langgraph_sdk import get_client

HI = {"messages": [{"role": "user", "content": "hi"}]}
Obs = list[list[Any]]
SCENARIOS: dict[str, Callable[[Any], Awaitable[Obs]]] = {}


def scenario(fn: Callable[[Any], Awaitable[Obs]]) -> Callable[[Any], Awaitable[Obs]]:
    SCENARIOS[fn.__name__] = fn
    return fn


async def attempt(coro: Awaitable[Any]) -> Any:
    try:
        return await coro
    except Exception as exc:  # the refusal is the observation
        response = getattr(exc, "response", None)
        return {"error": type(exc).__name__, "status": getattr(response, "status_code", None)}


async def events(stream: Any) -> list[list[Any]]:
    return [[part.event, part.data] async for part in stream]


async def running(c: Any, thread_id: str, run_id: str) -> None:
    """Wait until the run has started (langgraph dev takes about a second)."""
    for _ in range(200):
        if (await c.runs.get(thread_id, run_id))["status"] == "running":
            await asyncio.sleep(0.2)
            return
        await asyncio.sleep(0.05)


async def default_assistant(c: Any, graph_id: str) -> dict[str, Any]:
    found = await c.assistants.search(graph_id=graph_id, metadata={"created_by": "system"})
    return dict(found[0])


# ------------------------------------------------------------------------ assistants
@scenario
async def assistants_search_default(c: Any) -> Obs:
    found = await c.assistants.search(
        metadata={"created_by": "system"}, sort_by="graph_id", sort_order="asc"
    )
    return [["search", found]]


@scenario
async def assistants_get_by_name_and_uuid(c: Any) -> Obs:
    a = await default_assistant(c, "agent")
    return [
        ["by_name", await attempt(c.assistants.get("agent"))],
        ["by_uuid", await c.assistants.get(a["assistant_id"])],
        ["unknown", await attempt(c.assistants.get(str(uuid.uuid4())))],
    ]


@scenario
async def assistants_lifecycle(c: Any) -> Obs:
    made = await c.assistants.create(
        "ctx", config={"configurable": {"model": "m1"}}, metadata={"team": "x"}, name="mine"
    )
    upd = await c.assistants.update(made["assistant_id"], metadata={"team": "y"})
    versions = await c.assistants.get_versions(made["assistant_id"])
    latest = await c.assistants.set_latest(made["assistant_id"], 1)
    deleted = await attempt(c.assistants.delete(made["assistant_id"]))
    gone = await attempt(c.assistants.get(made["assistant_id"]))
    return [
        ["create", made],
        ["update", upd],
        ["versions", versions],
        ["latest", latest],
        ["delete", deleted],
        ["gone", gone],
    ]


@scenario
async def assistants_graph_and_schemas(c: Any) -> Obs:
    a = await default_assistant(c, "agent")
    ctx = await default_assistant(c, "ctx")
    return [
        ["graph", await c.assistants.get_graph(a["assistant_id"])],
        ["graph_by_name", await attempt(c.assistants.get_graph("agent"))],
        [
            "schemas_ctx_context",
            (await c.assistants.get_schemas(ctx["assistant_id"]))["context_schema"],
        ],
        ["subgraphs", await attempt(c.assistants.get_subgraphs(a["assistant_id"]))],
    ]


@scenario
async def assistants_create_unknown_graph(c: Any) -> Obs:
    return [["create", await attempt(c.assistants.create("no-such-graph"))]]


# --------------------------------------------------------------------------- threads
@scenario
async def threads_create_get(c: Any) -> Obs:
    t = await c.threads.create(metadata={"user": "alice"})
    return [["create", t], ["get", await c.threads.get(t["thread_id"])]]


@scenario
async def threads_create_if_exists(c: Any) -> Obs:
    t = await c.threads.create()
    return [
        ["again", await attempt(c.threads.create(thread_id=t["thread_id"]))],
        ["do_nothing", await c.threads.create(thread_id=t["thread_id"], if_exists="do_nothing")],
    ]


@scenario
async def threads_search_metadata_status_values(c: Any) -> Obs:
    tag = str(uuid.uuid4())
    a = await c.threads.create(metadata={"tag": tag})
    await c.runs.wait(a["thread_id"], "agent", input=HI)
    b = await c.threads.create(metadata={"tag": tag})
    await c.runs.wait(b["thread_id"], "steps", input={"n": 0})
    return [
        [
            "meta",
            [
                t["thread_id"]
                for t in await c.threads.search(
                    metadata={"tag": tag}, sort_by="created_at", sort_order="asc"
                )
            ],
        ],
        [
            "interrupted",
            [
                t["thread_id"]
                for t in await c.threads.search(metadata={"tag": tag}, status="interrupted")
            ],
        ],
        [
            "values",
            [
                t["thread_id"]
                for t in await c.threads.search(metadata={"tag": tag}, values={"n": 3})
            ],
        ],
        ["count", await c.threads.count(metadata={"tag": tag})],
        ["thread_after_run", await c.threads.get(a["thread_id"])],
    ]


@scenario
async def threads_update_copy_delete(c: Any) -> Obs:
    t = await c.threads.create(metadata={"a": 1})
    await c.runs.wait(t["thread_id"], "steps", input={"n": 0})
    upd = await c.threads.update(t["thread_id"], metadata={"b": 2})
    copy = await c.threads.copy(t["thread_id"])
    copy_state = await c.threads.get_state(copy["thread_id"])
    deleted = await attempt(c.threads.delete(t["thread_id"]))
    gone = await attempt(c.threads.get(t["thread_id"]))
    return [
        ["update", upd],
        ["copy_state_values", copy_state["values"]],
        ["delete", deleted],
        ["gone", gone],
    ]


@scenario
async def threads_state_and_history(c: Any) -> Obs:
    t = await c.threads.create()
    await c.runs.wait(t["thread_id"], "agent", input=HI)
    state = await c.threads.get_state(t["thread_id"])
    history = await c.threads.get_history(t["thread_id"], limit=10)
    return [["state", state], ["history", history]]


@scenario
async def threads_update_state(c: Any) -> Obs:
    t = await c.threads.create()
    await c.runs.wait(t["thread_id"], "agent", input=HI)
    out = await c.threads.update_state(t["thread_id"], {"count": 42})
    after = await c.threads.get_state(t["thread_id"])
    bad = await attempt(c.threads.update_state(t["thread_id"], {"count": 1}, as_node="missing"))
    return [
        ["update", out],
        ["state", after],
        ["bad_as_node", bad],
        ["thread", await c.threads.get(t["thread_id"])],
    ]


@scenario
async def threads_missing(c: Any) -> Obs:
    missing = str(uuid.uuid4())
    return [
        ["get", await attempt(c.threads.get(missing))],
        ["state", await attempt(c.threads.get_state(missing))],
        ["delete", await attempt(c.threads.delete(missing))],
    ]


@scenario
async def threads_fresh_state(c: Any) -> Obs:
    t = await c.threads.create()
    return [["state", await attempt(c.threads.get_state(t["thread_id"]))]]


# ------------------------------------------------------------------------------ runs
@scenario
async def runs_stream_values_updates(c: Any) -> Obs:
    t = await c.threads.create()
    evs = await events(
        c.runs.stream(t["thread_id"], "agent", input=HI, stream_mode=["values", "updates"])
    )
    return [["events", evs], ["thread", await c.threads.get(t["thread_id"])]]


@scenario
async def runs_stream_messages_tuple_custom(c: Any) -> Obs:
    t = await c.threads.create()
    evs = await events(
        c.runs.stream(t["thread_id"], "agent", input=HI, stream_mode=["messages-tuple", "custom"])
    )
    return [["events", evs]]


@scenario
async def runs_stream_messages(c: Any) -> Obs:
    t = await c.threads.create()
    evs = await events(c.runs.stream(t["thread_id"], "agent", input=HI, stream_mode="messages"))
    return [["events", evs]]


@scenario
async def runs_stream_tasks_checkpoints(c: Any) -> Obs:
    t = await c.threads.create()
    evs = await events(
        c.runs.stream(t["thread_id"], "steps", input={"n": 0}, stream_mode=["tasks", "checkpoints"])
    )
    return [["events", evs]]


@scenario
async def runs_stream_debug(c: Any) -> Obs:
    t = await c.threads.create()
    evs = await events(c.runs.stream(t["thread_id"], "steps", input={"n": 0}, stream_mode="debug"))
    return [["events", evs]]


@scenario
async def runs_stream_events(c: Any) -> Obs:
    t = await c.threads.create()
    evs = await events(c.runs.stream(t["thread_id"], "steps", input={"n": 0}, stream_mode="events"))
    return [["kinds", [[e, d.get("event"), d.get("name")] for e, d in evs if e == "events"]]]


@scenario
async def runs_stream_subgraphs(c: Any) -> Obs:
    t = await c.threads.create()
    evs = await events(
        c.runs.stream(
            t["thread_id"], "parent", input={"n": 1}, stream_mode=["updates"], stream_subgraphs=True
        )
    )
    return [["events", evs]]


@scenario
async def runs_resume_with_command(c: Any) -> Obs:
    t = await c.threads.create()
    first = await c.runs.wait(t["thread_id"], "agent", input=HI)
    second = await c.runs.wait(t["thread_id"], "agent", command={"resume": "yes"})
    return [["first", first], ["second", second], ["thread", await c.threads.get(t["thread_id"])]]


@scenario
async def runs_background_join_get_list(c: Any) -> Obs:
    t = await c.threads.create()
    run = await c.runs.create(t["thread_id"], "agent", input=HI)
    joined = await c.runs.join(t["thread_id"], run["run_id"])
    got = await c.runs.get(t["thread_id"], run["run_id"])
    listed = await c.runs.list(t["thread_id"])
    return [["create_status", run["status"]], ["join", joined], ["get", got], ["list", listed]]


@scenario
async def runs_join_stream_running(c: Any) -> Obs:
    t = await c.threads.create()
    run = await c.runs.create(t["thread_id"], "slow", input={"n": 0.3}, stream_mode="updates")
    evs = await events(c.runs.join_stream(t["thread_id"], run["run_id"]))
    return [["events", evs]]


@scenario
async def runs_cancel_interrupt(c: Any) -> Obs:
    t = await c.threads.create()
    run = await c.runs.create(t["thread_id"], "slow", input={"n": 5})
    await running(c, t["thread_id"], run["run_id"])
    cancel = await attempt(c.runs.cancel(t["thread_id"], run["run_id"], wait=True))
    return [
        ["cancel", cancel],
        ["run_status", (await c.runs.get(t["thread_id"], run["run_id"]))["status"]],
        ["thread", await c.threads.get(t["thread_id"])],
    ]


@scenario
async def runs_cancel_rollback(c: Any) -> Obs:
    t = await c.threads.create()
    run = await c.runs.create(t["thread_id"], "slow", input={"n": 5})
    await running(c, t["thread_id"], run["run_id"])
    await attempt(c.runs.cancel(t["thread_id"], run["run_id"], wait=True, action="rollback"))
    return [["get", await attempt(c.runs.get(t["thread_id"], run["run_id"]))]]


@scenario
async def runs_multitask(c: Any) -> Obs:
    t = await c.threads.create()
    tid = t["thread_id"]
    first = await c.runs.create(tid, "slow", input={"n": 0.5})
    reject = await attempt(c.runs.create(tid, "slow", input={"n": 0}, multitask_strategy="reject"))
    queued = await c.runs.create(tid, "slow", input={"n": 0.1}, multitask_strategy="enqueue")
    out = [
        ["reject", reject],
        ["queued_status", queued["status"]],
        ["enqueue_join", await c.runs.join(tid, queued["run_id"])],
    ]
    out.append(["first_status", (await c.runs.get(tid, first["run_id"]))["status"]])
    long = await c.runs.create(tid, "slow", input={"n": 5})
    await running(c, tid, long["run_id"])
    newer = await c.runs.create(tid, "slow", input={"n": 0.1}, multitask_strategy="interrupt")
    out.append(["interrupt_join", await c.runs.join(tid, newer["run_id"])])
    out.append(["interrupted_status", (await c.runs.get(tid, long["run_id"]))["status"]])
    doomed = await c.runs.create(tid, "slow", input={"n": 5})
    await running(c, tid, doomed["run_id"])
    last = await c.runs.create(tid, "slow", input={"n": 0.1}, multitask_strategy="rollback")
    out.append(["rollback_join", await c.runs.join(tid, last["run_id"])])
    out.append(["rolled_back", await attempt(c.runs.get(tid, doomed["run_id"]))])
    return out


@scenario
async def runs_failure(c: Any) -> Obs:
    t = await c.threads.create()
    evs = await events(c.runs.stream(t["thread_id"], "fail", input={"n": 1}))
    wait = await attempt(c.runs.wait(t["thread_id"], "fail", input={"n": 1}))
    listed = [r["status"] for r in await c.runs.list(t["thread_id"])]
    return [
        ["events", evs],
        ["wait", wait],
        ["statuses", listed],
        ["thread", await c.threads.get(t["thread_id"])],
    ]


@scenario
async def runs_refusals(c: Any) -> Obs:
    t = await c.threads.create()
    return [
        ["unknown_name", await attempt(c.runs.create(t["thread_id"], "nope", input={}))],
        ["unknown_uuid", await attempt(c.runs.create(t["thread_id"], str(uuid.uuid4()), input={}))],
        ["unknown_thread", await attempt(c.runs.create(str(uuid.uuid4()), "agent", input={}))],
        [
            "bad_mode",
            await attempt(c.runs.create(t["thread_id"], "agent", input={}, stream_mode="nope")),
        ],
    ]


@scenario
async def runs_if_not_exists(c: Any) -> Obs:
    tid = str(uuid.uuid4())
    run = await c.runs.create(tid, "steps", input={"n": 0}, if_not_exists="create")
    return [["join", await c.runs.join(tid, run["run_id"])], ["thread", await c.threads.get(tid)]]


@scenario
async def runs_stateless(c: Any) -> Obs:
    wait = await c.runs.wait(None, "steps", input={"n": 0})
    evs = await events(c.runs.stream(None, "steps", input={"n": 0}, stream_mode="updates"))
    return [["wait", wait], ["events", evs]]


@scenario
async def runs_fork_from_checkpoint(c: Any) -> Obs:
    t = await c.threads.create()
    await c.runs.wait(t["thread_id"], "steps", input={"n": 0})
    history = await c.threads.get_history(t["thread_id"], limit=10)
    mid = next(h for h in history if h["next"] == ["s1"])
    out = await c.runs.wait(
        t["thread_id"], "steps", input=None, checkpoint_id=mid["checkpoint"]["checkpoint_id"]
    )
    return [
        ["fork", out],
        ["history_len", len(await c.threads.get_history(t["thread_id"], limit=100))],
    ]


@scenario
async def runs_context_and_config(c: Any) -> Obs:
    a = await c.assistants.create("ctx", context={"model": "small"})
    one = await c.runs.wait(None, a["assistant_id"], input={"text": "hi"})
    two = await c.runs.wait(None, a["assistant_id"], input={"text": "hi"}, context={"model": "big"})
    return [["assistant_context", one], ["run_context", two]]


@scenario
async def runs_interrupt_before(c: Any) -> Obs:
    t = await c.threads.create()
    out = await c.runs.wait(t["thread_id"], "steps", input={"n": 0}, interrupt_before=["s1"])
    state = await c.threads.get_state(t["thread_id"])
    return [
        ["out", out],
        ["next", state["next"]],
        ["status", (await c.threads.get(t["thread_id"]))["status"]],
    ]


@scenario
async def runs_batch(c: Any) -> Obs:
    made = await c.runs.create_batch(
        [{"assistant_id": "steps", "input": {"n": 0}}, {"assistant_id": "steps", "input": {"n": 5}}]
    )
    return [["statuses", [r["status"] for r in made]]]


@scenario
async def runs_cancel_pending(c: Any) -> Obs:
    t = await c.threads.create()
    run = await c.runs.create(t["thread_id"], "steps", input={"n": 0}, after_seconds=30)
    await attempt(c.runs.cancel(t["thread_id"], run["run_id"]))
    await asyncio.sleep(0.5)
    return [
        ["status", (await c.runs.get(t["thread_id"], run["run_id"]))["status"]],
        ["thread_status", (await c.threads.get(t["thread_id"]))["status"]],
    ]


@scenario
async def counts(c: Any) -> Obs:
    tag = str(uuid.uuid4())
    await c.threads.create(metadata={"tag": tag})
    return [
        ["threads", await c.threads.count(metadata={"tag": tag})],
        [
            "assistants",
            await c.assistants.count(graph_id="agent", metadata={"created_by": "system"}),
        ],
    ]


@scenario
async def state_with_subgraphs(c: Any) -> Obs:
    t = await c.threads.create()
    await c.runs.wait(t["thread_id"], "parent", input={"n": 1})
    history = await c.threads.get_history(t["thread_id"], limit=10)
    return [
        ["history_steps", [h["metadata"]["step"] for h in history]],
        ["values", history[0]["values"]],
    ]


# ----------------------------------------------------------------------------- store
@scenario
async def store_items(c: Any) -> Obs:
    ns = ["users", str(uuid.uuid4())]
    await c.store.put_item(ns, "prefs", {"theme": "dark"})
    await c.store.put_item(ns, "other", {"theme": "light"})
    return [
        ["get", await c.store.get_item(ns, "prefs")],
        ["missing", await c.store.get_item(ns, "missing")],
        ["search", await c.store.search_items(ns, filter={"theme": "light"})],
        ["namespaces", ns in (await c.store.list_namespaces(prefix=["users"]))["namespaces"]],
        ["delete", await attempt(c.store.delete_item(ns, "prefs"))],
        ["after_delete", await c.store.get_item(ns, "prefs")],
    ]


@scenario
async def store_from_graph(c: Any) -> Obs:
    key = str(uuid.uuid4())
    one = await c.runs.wait(None, "memo", input={"key": key})
    two = await c.runs.wait(None, "memo", input={"key": key})
    return [["one", one], ["two", two], ["item", (await c.store.get_item(["memo"], key))["value"]]]


# ----------------------------------------------------------------------------- crons
@scenario
async def crons_lifecycle(c: Any) -> Obs:
    t = await c.threads.create()
    stateless = await c.crons.create("steps", schedule="0 0 * * *", input={"n": 0})
    on_thread = await c.crons.create_for_thread(
        t["thread_id"], "steps", schedule="0 0 * * *", input={"n": 0}
    )
    found = await c.crons.search(thread_id=t["thread_id"])
    deleted = await attempt(c.crons.delete(on_thread["cron_id"]))
    await c.crons.delete(stateless["cron_id"])
    after = await c.crons.search(thread_id=t["thread_id"])
    bad = await attempt(c.crons.create("steps", schedule="whenever", input={}))
    return [
        ["stateless", stateless],
        ["on_thread", on_thread],
        ["search", found],
        ["delete", deleted],
        ["after", after],
        ["bad_schedule", bad],
    ]


# ------------------------------------------------------------------------------ meta
@scenario
async def meta_ok(c: Any) -> Obs:
    return [["ok", await c.http.get("/ok")]]


async def main(url: str, out: str, names: list[str]) -> None:
    client = get_client(url=url)
    results: dict[str, Any] = {}
    for name, fn in SCENARIOS.items():
        if names and name not in names:
            continue
        try:
            results[name] = await fn(client)
        except Exception as exc:  # a scenario that broke is a difference too
            results[name] = [["scenario_failed", f"{type(exc).__name__}: {exc}"[:300]]]
    with open(out, "w") as fh:
        json.dump(results, fh, indent=1, default=str)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
