"""The studio in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

Run with ``make studio-browser`` (or ``pytest -m browser tests/studio``). Set
``STATEGRAPH_STUDIO_SHOTS=DIR`` to keep a PNG of each screen.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stategraph.checkpoint.sqlite import SqliteSaver

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("STATEGRAPH_CHROMIUM", "/usr/bin/chromium")
SHOTS = os.environ.get("STATEGRAPH_STUDIO_SHOTS")
HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>&amp;"\''


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.fail(f"Chromium not found at {CHROMIUM}: run `make studio-browser` (installs it).")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    tab.dialogs: list[str] = []  # type: ignore[attr-defined]
    tab.on("dialog", lambda d: (tab.dialogs.append(d.message), d.dismiss()))
    yield tab
    context.close()


def shot(page: Any, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def latest(db: str, thread: str) -> Any:
    with SqliteSaver.from_conn_string(db) as saver:
        return saver.get_tuple({"configurable": {"thread_id": thread}})


def test_list_search_filter_and_open_a_thread(live_studio, page):
    server, _db = live_studio
    page.goto(server.url + "/")
    rows = page.locator("tr.thread-row")
    assert rows.count() == 4
    assert rows.nth(0).get_attribute("data-thread") == "waiting"
    assert "interrupted" in rows.nth(0).inner_text()
    assert "error" in page.locator('tr[data-thread="failed"]').inner_text()
    shot(page, "01-threads")
    page.fill('input[name="q"]', "fail")
    page.click("form.filters button")
    assert [r.get_attribute("data-thread") for r in rows.all()] == ["failed"]
    page.fill('input[name="q"]', "")
    page.fill('input[name="meta"]', "user=ada")
    page.click("form.filters button")
    assert [r.get_attribute("data-thread") for r in rows.all()] == ["waiting", "published"]
    shot(page, "02-threads-filtered")
    page.click('a:text-is("waiting")')
    assert page.locator("#thread-id").inner_text() == "waiting"
    assert page.locator("#next-nodes").inner_text() == "review"
    assert page.locator(".drawing svg").count() == 1


def test_read_a_state_diff(live_studio, page):
    server, _db = live_studio
    page.goto(server.url + "/ui/threads/published")
    timeline = page.locator("tr.cp")
    assert timeline.count() == 6
    # step 1: the research subgraph added the sources
    page.locator('tr.cp:has(td:text-is("1")) a').first.click()
    diff = page.locator("#diff")
    assert "added" in diff.inner_text() and "sources" in diff.inner_text()
    assert "encyclopedia: Tides" in diff.inner_text()
    # the last step changed nothing but status
    page.locator('tr.cp:has(td:text-is("4")) a').first.click()
    rows = page.locator("#diff tbody tr")
    assert rows.count() == 1 and "status" in rows.first.inner_text()
    assert '"published"' in rows.first.inner_text()
    shot(page, "03-thread-diff")
    # subgraph namespace
    page.locator("a.ns", has_text="research:").click()
    assert page.locator("tr.cp").count() >= 3
    shot(page, "04-subgraph-namespace")


def test_answer_an_interrupt(live_studio, page):
    server, db = live_studio
    page.goto(server.url + "/ui/threads/waiting")
    shot(page, "05-thread-waiting")
    form = page.locator("form.answer")
    errors = form.locator(".form-error")
    form.locator("textarea").fill("{not json")
    form.locator("button").click()
    errors.filter(has_text="not valid JSON").wait_for()
    form.locator("textarea").fill('{"approve": true}')
    form.locator("button").click()
    errors.filter(has_text="'approved' is a required property").wait_for()
    assert "additional" in errors.inner_text().lower()
    shot(page, "06-answer-rejected-by-schema")
    assert latest(db, "waiting").metadata["step"] == 2  # nothing was written
    form.locator("textarea").fill('{"approved": true, "comment": "from the browser"}')
    with page.expect_navigation():
        form.locator("button").click()
    assert page.locator("form.answer").count() == 0
    assert page.locator("#next-nodes").inner_text() == "-"
    shot(page, "07-after-answer")
    values = latest(db, "waiting").checkpoint["channel_values"]
    assert values["status"] == "published"
    assert values["approved"] is True and values["comment"] == "from the browser"


def test_fork_from_a_checkpoint(live_studio, page):
    server, db = live_studio
    page.goto(server.url + "/ui/threads/published")
    row = page.locator('tr.cp:has(td:text-is("2"))').first
    fork_from = row.get_attribute("data-checkpoint")
    shown = page.locator("#checkpoint").get_attribute("data-checkpoint")
    with page.expect_navigation():
        row.locator("button.fork").click()
    assert page.locator("#checkpoint").get_attribute("data-checkpoint") != shown
    head = latest(db, "published")
    assert head.parent_config["configurable"]["checkpoint_id"] == fork_from
    assert head.metadata["source"] in ("update", "fork")
    assert (
        page.locator("#checkpoint").get_attribute("data-checkpoint")
        == head.config["configurable"]["checkpoint_id"]
    )
    assert page.locator("#next-nodes").inner_text() == "review"
    shot(page, "08-forked")


def test_watch_a_live_run(live_studio, page):
    server, db = live_studio
    page.goto(server.url + "/ui/threads/rejected")
    form = page.locator("form.run-form")
    form.locator('input[value="values"]').check()
    form.locator("textarea").fill("null")
    form.locator("button").click()
    page.locator('#run-status[data-done="ok"]').wait_for()
    events = page.locator("#events li").all_inner_texts()
    assert events[0].startswith("metadata")
    assert any(e.startswith("updates") and '"publish"' in e for e in events)
    assert any(e.startswith("values") and '"status":"rejected"' in e for e in events)
    shot(page, "09-live-run")
    assert latest(db, "rejected").checkpoint["channel_values"]["status"] == "rejected"


def test_hostile_state_is_shown_as_text(live_studio, page, demo):
    server, db = live_studio
    with SqliteSaver.from_conn_string(db) as saver:
        app = demo.builder.compile(checkpointer=saver)
        app.invoke({"topic": HOSTILE}, {"configurable": {"thread_id": HOSTILE}})
    page.goto(server.url + "/")
    page.locator("tr.thread-row").first.locator("a").click()
    assert page.locator("#thread-id").inner_text() == HOSTILE
    assert json.dumps(HOSTILE, ensure_ascii=False) in page.locator("#state").inner_text()
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img[src=x]").count() == 0
    assert page.dialogs == []
    shot(page, "10-hostile-values")


def test_store_browser_and_graph(live_studio, page):
    server, _db = live_studio
    page.goto(server.url + "/ui/store")
    page.locator("#store-namespaces a", has_text="users / ada").click()
    items = page.locator("#store-items tr.item")
    assert items.count() == 1 and '"Ada"' in items.first.inner_text()
    shot(page, "11-store")
    page.goto(server.url + "/ui/graph")
    assert page.locator(".drawing svg g").count() > 3
    shot(page, "12-graph")
