"""The studio's LangGraph-Server-style API, through Starlette's TestClient."""

from __future__ import annotations

import json
import sqlite3

from stategraph.checkpoint.sqlite import SqliteSaver

from .conftest import csrf_of


def _events(text: str) -> list[tuple[str, object]]:
    out = []
    for block in text.strip().split("\n\n"):
        lines = block.split("\n")
        event = lines[0].removeprefix("event: ")
        data = json.loads(lines[1].removeprefix("data: "))
        out.append((event, data))
    return out


def test_assistant_graph_and_schemas(make_client):
    client = make_client()
    assert [a["assistant_id"] for a in client.post("/assistants/search", json={}).json()] == [
        "agent"
    ]
    graph = client.get("/assistants/agent/graph").json()
    ids = {n["id"] for n in graph["nodes"]}
    assert {"__start__", "research", "write", "review", "publish", "__end__"} <= ids
    assert {"source": "write", "target": "review"} in graph["edges"]
    xray = client.get("/assistants/agent/graph", params={"xray": "true"}).json()
    assert "research:search" in {n["id"] for n in xray["nodes"]}
    assert client.get("/assistants/nope").status_code == 404
    schemas = client.get("/assistants/agent/schemas").json()
    assert "topic" in schemas["input_schema"]["properties"]


def test_threads_search_newest_first_with_status_and_metadata(make_client):
    client = make_client()
    threads = client.post("/threads/search", json={"limit": 10}).json()
    assert [t["thread_id"] for t in threads] == ["waiting", "failed", "rejected", "published"]
    by_id = {t["thread_id"]: t for t in threads}
    assert by_id["waiting"]["status"] == "interrupted"
    assert by_id["failed"]["status"] == "error"
    assert by_id["published"]["status"] == "idle"
    assert by_id["published"]["values"]["status"] == "published"
    assert by_id["waiting"]["metadata"] == {"user": "ada"}
    ada = client.post("/threads/search", json={"metadata": {"user": "ada"}}).json()
    assert [t["thread_id"] for t in ada] == ["waiting", "published"]
    page2 = client.post("/threads/search", json={"limit": 2, "offset": 2}).json()
    assert [t["thread_id"] for t in page2] == ["rejected", "published"]
    interrupted = client.post("/threads/search", json={"status": "interrupted"}).json()
    assert [t["thread_id"] for t in interrupted] == ["waiting"]
    idle = client.post("/threads/search", json={"status": "idle", "limit": 1, "offset": 1})
    assert [t["thread_id"] for t in idle.json()] == ["published"]  # after "rejected"
    bare = make_client(with_graph=False)
    failed = bare.post("/threads/search", json={"status": "error"}).json()
    assert [t["thread_id"] for t in failed] == ["failed"]
    assert "press refused" in bare.get("/threads/failed/state").json()["tasks"][0]["error"]


def test_state_history_and_checkpoint_reads(make_client):
    client = make_client()
    state = client.get("/threads/waiting/state").json()
    assert state["next"] == ["review"]
    assert state["values"]["topic"] == "Volcanoes"
    [task] = state["tasks"]
    assert task["name"] == "review"
    assert task["interrupts"][0]["value"]["question"] == "Publish this draft?"
    assert task["interrupts"][0]["response_schema"]["required"] == ["approved"]
    assert state["interrupts"] == task["interrupts"]
    history = client.post("/threads/waiting/history", json={"limit": 3}).json()
    assert len(history) == 3
    assert history[0]["checkpoint"] == state["checkpoint"]
    older = history[1]["checkpoint"]["checkpoint_id"]
    assert (
        client.get(f"/threads/waiting/state/{older}").json()["checkpoint"]
        == history[1]["checkpoint"]
    )
    via_post = client.post(
        "/threads/waiting/state/checkpoint", json={"checkpoint": history[2]["checkpoint"]}
    ).json()
    assert via_post["checkpoint"] == history[2]["checkpoint"]
    before = client.post(
        "/threads/waiting/history", json={"limit": 10, "before": {"checkpoint_id": older}}
    ).json()
    assert before[0]["checkpoint"]["checkpoint_id"] < older
    sub = client.get("/threads/waiting/state", params={"subgraphs": "true"}).json()
    assert sub["values"] == state["values"]
    assert client.get("/threads/nope/state").status_code == 404
    assert client.get("/threads/nope").status_code == 404


def test_reads_without_a_graph(make_client):
    client = make_client(with_graph=False)
    state = client.get("/threads/waiting/state").json()
    assert state["next"] == ["review"]
    assert state["interrupts"][0]["value"]["draft"].startswith("Volcanoes")
    assert client.post("/assistants/search", json={}).json() == []
    refused = client.post("/threads/waiting/runs/wait", json={"input": None})
    assert refused.status_code == 403  # read-only first
    history = client.get("/threads/published/history", params={"limit": 2}).json()
    assert len(history) == 2


def test_read_only_refuses_every_write_and_leaves_the_file_alone(make_client, demo_db):
    client = make_client(allow_writes=False)
    token = csrf_of(client)
    headers = {"X-CSRF-Token": token}
    before = sqlite3.connect(demo_db).execute("SELECT COUNT(*) FROM checkpoints").fetchone()
    for method, path, body in [
        ("POST", "/threads/waiting/state", {"values": {"topic": "x"}}),
        ("POST", "/threads/waiting/runs/stream", {"command": {"resume": {"approved": True}}}),
        ("POST", "/threads/waiting/runs/wait", {"input": None}),
        ("DELETE", "/threads/waiting", None),
        ("PUT", "/store/items", {"namespace": ["a"], "key": "k", "value": {}}),
        ("POST", "/studio/api/fork", {"thread_id": "waiting", "checkpoint_id": "x"}),
    ]:
        resp = client.request(method, path, json=body, headers=headers)
        assert resp.status_code == 403, (path, resp.text)
        assert "--allow-writes" in resp.json()["detail"]
    after = sqlite3.connect(demo_db).execute("SELECT COUNT(*) FROM checkpoints").fetchone()
    assert before == after


def test_mutations_need_the_csrf_token_from_browsers(make_client):
    client = make_client(allow_writes=True)
    browser = {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
    resp = client.post("/threads/waiting/state", json={"values": {}}, headers=browser)
    assert resp.status_code == 403 and "CSRF" in resp.json()["detail"]
    resp = client.post(
        "/threads/waiting/state",
        json={"values": {"comment": "x"}, "as_node": "review"},
        headers={**browser, "X-CSRF-Token": "wrong"},
    )
    assert resp.status_code == 403
    # a form post (not JSON) from a page that is not the studio's
    resp = client.post("/studio/api/fork", data={"thread_id": "waiting"})
    assert resp.status_code == 403
    ok = client.post(
        "/threads/waiting/state",
        json={"values": {"comment": "x"}, "as_node": "review"},
        headers={**browser, "X-CSRF-Token": csrf_of(client)},
    )
    assert ok.status_code == 200
    # read-only searches are POSTs too, and need no token
    assert client.post("/threads/search", json={}, headers=browser).status_code == 200


def test_token_protects_everything(make_client):
    client = make_client(token="s3cret")
    assert client.get("/").status_code == 401
    assert client.get("/threads/waiting/state").status_code == 401
    assert client.get("/ok", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    assert client.get("/ok", headers={"x-api-key": "s3cret"}).status_code == 200
    assert client.get("/ok", headers={"x-api-key": "wrong"}).status_code == 401
    first = client.get("/ui/threads/waiting?token=s3cret", follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/ui/threads/waiting"
    assert "HttpOnly" in first.headers["set-cookie"]
    assert client.get("/ui/threads/waiting").status_code == 200  # the cookie now


def test_update_state_then_history_shows_it(make_client):
    client = make_client(allow_writes=True)
    resp = client.post(
        "/threads/waiting/state",
        json={"values": {"comment": "edited"}, "as_node": "review"},
    )
    assert resp.status_code == 200
    new_id = resp.json()["checkpoint"]["checkpoint_id"]
    state = client.get("/threads/waiting/state").json()
    assert state["checkpoint"]["checkpoint_id"] == new_id
    assert state["values"]["comment"] == "edited"
    assert state["metadata"]["source"] == "update"
    bad = client.post("/threads/waiting/state", json={"values": {"x": 1}, "as_node": "nope"})
    assert bad.status_code == 422 and "nope" in bad.json()["detail"]


def test_streaming_run_resumes_an_interrupt(make_client, demo_db):
    client = make_client(allow_writes=True)
    resp = client.post(
        "/threads/waiting/runs/stream",
        json={
            "assistant_id": "agent",
            "command": {"resume": {"approved": True, "comment": "ship it"}},
            "stream_mode": ["updates", "values"],
        },
    )
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/event-stream")
    events = _events(resp.text)
    assert events[0][0] == "metadata" and "run_id" in events[0][1]
    updates = [d for e, d in events if e == "updates"]
    assert updates == [
        {"review": {"approved": True, "comment": "ship it"}},
        {"publish": {"status": "published"}},
    ]
    assert [e for e, _ in events if e == "values"]
    with SqliteSaver.from_conn_string(demo_db) as saver:
        latest = saver.get_tuple({"configurable": {"thread_id": "waiting"}})
        assert latest.checkpoint["channel_values"]["status"] == "published"
        assert latest.checkpoint["channel_values"]["comment"] == "ship it"


def test_streaming_run_with_subgraph_events_and_errors(make_client):
    client = make_client(allow_writes=True)
    resp = client.post(
        "/threads/new-1/runs/stream",
        json={"input": {"topic": "Owls"}, "stream_mode": "updates", "stream_subgraphs": True},
    )
    events = _events(resp.text)
    names = [e for e, _ in events]
    assert any(n.startswith("updates|research:") for n in names)
    assert (
        "updates",
        {"write": {"draft": "Owls: a short article citing encyclopedia: Owls, expert on Owls."}},
    ) in events
    resp = client.post(
        "/threads/new-2/runs/stream",
        json={"input": {"topic": "forbidden"}, "stream_mode": ["updates"]},
    )
    resume = client.post(
        "/threads/new-2/runs/stream",
        json={"command": {"resume": {"approved": True}}, "stream_mode": ["updates"]},
    )
    last_event, last_data = _events(resume.text)[-1]
    assert last_event == "error"
    assert last_data["error"] == "RuntimeError" and "forbidden" in last_data["message"]
    bad = client.post("/threads/x/runs/stream", json={"input": {}, "stream_mode": "bogus"})
    assert bad.status_code == 422 and "bogus" in bad.json()["detail"]


def test_wait_run_and_stateless_run(make_client):
    client = make_client(allow_writes=True)
    out = client.post("/threads/w1/runs/wait", json={"input": {"topic": "Moss"}}).json()
    assert out["draft"].startswith("Moss")
    assert out["__interrupt__"][0]["value"]["question"] == "Publish this draft?"
    events = _events(
        client.post("/runs/stream", json={"input": {"topic": "Fern"}, "stream_mode": "values"}).text
    )
    assert events[-1][1]["__interrupt__"][0]["value"]["draft"].startswith("Fern")


def test_threads_create_get_delete(make_client):
    client = make_client(allow_writes=True)
    made = client.post("/threads", json={"thread_id": "fresh", "metadata": {"a": 1}}).json()
    assert made["thread_id"] == "fresh" and made["status"] == "idle"
    assert client.get("/threads/fresh").status_code == 200
    assert client.get("/threads/fresh/state").json()["values"] == {}
    assert client.delete("/threads/published").status_code == 204
    assert client.get("/threads/published").status_code == 404


def test_store_endpoints(make_client):
    client = make_client(allow_writes=True)
    spaces = client.post("/store/namespaces", json={}).json()["namespaces"]
    assert ["users", "ada"] in spaces and ["style"] in spaces
    items = client.post("/store/items/search", json={"namespace_prefix": ["users"]}).json()
    assert {i["key"] for i in items["items"]} == {"profile"}
    assert len(items["items"]) == 2
    got = client.get("/store/items", params={"namespace": "users.ada", "key": "profile"}).json()
    assert got["value"]["name"] == "Ada"
    assert (
        client.put(
            "/store/items", json={"namespace": ["notes"], "key": "n1", "value": {"t": 1}}
        ).status_code
        == 204
    )
    assert client.get("/store/items", params={"namespace": "notes", "key": "n1"}).json()[
        "value"
    ] == {"t": 1}


def test_only_loopback_names_are_served_without_a_token(make_client):
    client = make_client()
    for host in ("evil.example", "evil.example:2024", "127.0.0.1.evil.example", "10.0.0.5"):
        resp = client.get("/", headers={"Host": host})
        assert resp.status_code == 403 and "--token" in resp.json()["detail"], host
    for host in ("127.0.0.1:2024", "localhost:2024", "[::1]:2024"):
        assert client.get("/ok", headers={"Host": host}).status_code == 200, host
    # with a token, the token decides (the studio may be reached by any name)
    guarded = make_client(token="t0k")
    assert guarded.get("/ok", headers={"Host": "studio.lan", "x-api-key": "t0k"}).status_code == 200
