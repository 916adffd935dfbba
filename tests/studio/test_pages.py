"""The studio's HTML pages and page actions, through Starlette's TestClient."""

from __future__ import annotations

import re
import sqlite3

from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.store.sqlite import SqliteStore

from .conftest import csrf_of

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>&lt;"\''


def _hostile_thread(db: str, demo) -> None:
    with SqliteSaver.from_conn_string(db) as saver:
        app = demo.builder.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": HOSTILE}, "metadata": {"who": HOSTILE}}
        app.invoke({"topic": HOSTILE}, config)
    with SqliteStore.from_conn_string(db + ".store") as store:
        store.put(("evil", HOSTILE), HOSTILE, {"v": HOSTILE})


def _no_raw_markup(html: str) -> None:
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "onerror=alert(1)>" not in html.replace("onerror=alert(1)&gt;", "")


def test_hostile_values_are_escaped_everywhere(make_client, demo_db, demo):
    _hostile_thread(demo_db, demo)
    client = make_client(allow_writes=True)
    listing = client.get("/").text
    _no_raw_markup(listing)
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in listing
    page = client.get("/ui/threads/" + re.sub("/", "%2F", HOSTILE)).text
    _no_raw_markup(page)
    # the state, the diff, the interrupt value, the metadata: all escaped text
    assert page.count("&lt;script&gt;alert") >= 4
    _no_raw_markup(client.get("/ui/store", params={"ns": "evil." + HOSTILE}).text)
    _no_raw_markup(client.get("/", params={"q": HOSTILE}).text)
    headers = client.get("/").headers
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"


def test_threads_page_pagination_search_and_filters(make_client, demo_db, demo):
    with SqliteSaver.from_conn_string(demo_db) as saver:
        app = demo.builder.compile(checkpointer=saver)
        for i in range(55):
            app.invoke({"topic": f"t{i}"}, {"configurable": {"thread_id": f"bulk-{i:02d}"}})
    client = make_client()
    first = client.get("/").text
    assert "59 thread(s), showing 1-50" in first
    assert first.index('data-thread="bulk-54"') < first.index('data-thread="bulk-53"')
    assert 'id="next-page"' in first and 'id="prev-page"' not in first
    second = client.get("/", params={"offset": 50}).text
    assert "showing 51-59" in second and 'data-thread="published"' in second
    assert 'id="prev-page"' in second
    found = client.get("/", params={"q": "bulk-1"}).text
    assert found.count('class="thread-row"') == 10
    eve = client.get("/", params={"meta": "user=eve"}).text
    assert re.findall(r'data-thread="([^"]+)"', eve) == ["failed"]
    bad = client.get("/", params={"meta": "nonsense"})
    assert bad.status_code == 400 and "key=value" in bad.text


def test_thread_page_shows_timeline_diff_errors_and_namespaces(make_client):
    client = make_client()
    page = client.get("/ui/threads/failed").text
    assert page.count('class="cp ') == 5
    assert "Failed tasks" in page and "the press refused" in page
    assert "publish: status" not in page  # publish failed: it wrote nothing
    assert "research: topic, sources" in page
    assert re.search(r'class="ns " href="/ui/threads/failed\?ns=research%3A', page)
    assert "Actions are off (read-only)" in page
    assert "<form" not in page.split("<h1>")[1].split("Actions are off")[0].replace(
        '<form class="filters"', ""
    )
    diff_page = client.get("/ui/threads/published").text
    assert 'class="diff-added"' in diff_page and "status" in diff_page
    missing = client.get("/ui/threads/nope")
    assert missing.status_code == 404 and "No thread" in missing.text


def test_answer_is_checked_against_the_response_schema(make_client, demo_db):
    client = make_client(allow_writes=True)
    headers = {"X-CSRF-Token": csrf_of(client)}
    page = client.get("/ui/threads/waiting").text
    interrupt_id = re.search(r'data-interrupt="([0-9a-f]+)"', page).group(1)
    count = sqlite3.connect(demo_db).execute("SELECT COUNT(*) FROM checkpoints").fetchone()
    bad = client.post(
        "/studio/api/answer",
        json={"thread_id": "waiting", "interrupt_id": interrupt_id, "value": {"approved": "yes"}},
        headers=headers,
    )
    assert bad.status_code == 422
    assert bad.json()["errors"] == ["approved: 'yes' is not of type 'boolean'"]
    assert sqlite3.connect(demo_db).execute("SELECT COUNT(*) FROM checkpoints").fetchone() == count
    good = client.post(
        "/studio/api/answer",
        json={"thread_id": "waiting", "interrupt_id": interrupt_id, "value": {"approved": True}},
        headers=headers,
    )
    assert good.status_code == 200 and good.json()["redirect"] == "/ui/threads/waiting"
    with SqliteSaver.from_conn_string(demo_db) as saver:
        latest = saver.get_tuple({"configurable": {"thread_id": "waiting"}})
        assert latest.checkpoint["channel_values"]["status"] == "published"
    again = client.post(
        "/studio/api/answer",
        json={"thread_id": "waiting", "interrupt_id": interrupt_id, "value": {"approved": True}},
        headers=headers,
    )
    assert again.status_code == 409 and "not pending" in again.json()["detail"]


def test_update_and_fork_actions(make_client, demo_db):
    client = make_client(allow_writes=True)
    headers = {"X-CSRF-Token": csrf_of(client)}
    refused = client.post(
        "/studio/api/update",
        json={"thread_id": "published", "values": [1, 2], "as_node": "write"},
        headers=headers,
    )
    assert refused.status_code == 422 and "JSON object" in refused.json()["errors"][0]
    unknown = client.post(
        "/studio/api/update",
        json={"thread_id": "published", "values": {"draft": "x"}, "as_node": "ghost"},
        headers=headers,
    )
    assert unknown.status_code == 422 and "ghost" in unknown.json()["errors"][0]
    done = client.post(
        "/studio/api/update",
        json={"thread_id": "published", "values": {"draft": "edited"}, "as_node": "write"},
        headers=headers,
    )
    assert done.status_code == 200
    with SqliteSaver.from_conn_string(demo_db) as saver:
        history = list(saver.list({"configurable": {"thread_id": "published"}}))
        head = history[0]
        assert head.checkpoint["channel_values"]["draft"] == "edited"
        assert done.json()["redirect"].endswith(head.config["configurable"]["checkpoint_id"])
        step1 = next(t for t in history if t.metadata["step"] == 1)
    fork_id = step1.config["configurable"]["checkpoint_id"]
    forked = client.post(
        "/studio/api/fork",
        json={"thread_id": "published", "checkpoint_id": fork_id},
        headers=headers,
    )
    assert forked.status_code == 200
    with SqliteSaver.from_conn_string(demo_db) as saver:
        head = saver.get_tuple({"configurable": {"thread_id": "published"}})
        assert head.parent_config["configurable"]["checkpoint_id"] == fork_id
        assert head.checkpoint["channel_values"]["sources"] == [
            "encyclopedia: Tides",
            "expert on Tides",
        ]
    no_graph = make_client(allow_writes=True, with_graph=False)
    resp = no_graph.post(
        "/studio/api/fork",
        json={"thread_id": "published", "checkpoint_id": fork_id},
        headers={"X-CSRF-Token": csrf_of(no_graph)},
    )
    assert resp.status_code == 409 and "needs the graph" in resp.json()["detail"]


def test_graph_store_and_static_assets(make_client):
    client = make_client()
    graph = client.get("/ui/graph").text
    assert "<svg" in graph and "review" in graph
    store = client.get("/ui/store").text
    assert "users / ada" in store and "style" in store
    items = client.get("/ui/store", params={"ns": "users.bob"}).text
    assert "Bob" in items and "Ada" not in items
    js = client.get("/static/studio.js")
    assert js.status_code == 200 and "textContent" in js.text and "eval(" not in js.text
    assert "innerHTML" not in js.text
    assert client.get("/static/studio.css").status_code == 200
    no_store = make_client(with_store=False).get("/ui/store").text
    assert "No store" in no_store


def test_timeline_pages_through_older_checkpoints(make_client, monkeypatch):
    from stategraph.studio import _pages as pages

    monkeypatch.setattr(pages, "TIMELINE_PAGE", 4)
    client = make_client()
    first = client.get("/ui/threads/published").text
    assert first.count('class="cp ') == 4 and 'id="newer-checkpoints"' not in first
    older = re.search(r'id="older-checkpoints" href="([^"]+)"', first).group(1)
    rest = client.get(older.replace("&amp;", "&")).text
    assert rest.count('class="cp ') == 2
    assert 'id="newer-checkpoints"' in rest and 'id="older-checkpoints"' not in rest


def test_answer_form_starts_from_the_schema_and_pages_work_without_a_graph(make_client):
    from stategraph.studio._answers import example_answer

    assert example_answer(None) is True
    assert example_answer({"type": "object", "properties": {"n": {"type": "integer"}},
                           "required": ["n"]}) == {"n": 0}  # fmt: skip
    assert example_answer({"enum": ["yes", "no"]}) == "yes"
    page = make_client(allow_writes=True).get("/ui/threads/waiting").text
    assert '<textarea name="value" rows="3">{&quot;approved&quot;: true}</textarea>' in page
    bare = make_client(with_graph=False).get("/ui/threads/waiting").text
    assert "Pending interrupts" in bare and "<svg" not in bare
    assert "Actions are off (read-only)" in bare
    graphless = make_client(with_graph=False).get("/ui/graph").text
    assert "No graph loaded" in graphless
