"""The React page of ``examples/server/ui`` (LangGraph's ``useStream`` hook) in a real
headless Chromium, served by ``stategraph serve --ui``.

The page is built with the machine's Node.js/npm: ``npm ci`` once per
``package-lock.json`` (cached in ``$STATEGRAPH_UI_CACHE``, default
``~/.cache/stategraph/server-ui``) and ``npm run build`` once per version of the page's
sources. Chromium is Debian's (``$STATEGRAPH_CHROMIUM``), driven by Playwright for
Python without a browser download. Run with ``make server-browser``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.server.conftest import BACKENDS, PG, ServerProcess, reset_postgres

pytestmark = [pytest.mark.browser, pytest.mark.server]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "server" / "ui"
SOURCES = ("package.json", "package-lock.json", "index.html", "vite.config.js", "src")
CHROMIUM = os.environ.get("STATEGRAPH_CHROMIUM", "/usr/bin/chromium")
CACHE = Path(
    os.environ.get("STATEGRAPH_UI_CACHE", Path.home() / ".cache" / "stategraph" / "server-ui")
)
FINAL = "Here is today's forecast for Oslo: snow, -3 °C. Enjoy your day!"


def _digest(paths: list[Path]) -> str:
    sha = hashlib.sha256()
    for path in paths:
        sha.update(str(path.relative_to(EXAMPLE)).encode() + b"\0" + path.read_bytes())
    return sha.hexdigest()[:16]


def _npm(args: list[str], cwd: Path) -> None:
    done = subprocess.run(
        ["npm", "--no-audit", "--no-fund", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0:
        pytest.fail(f"npm {' '.join(args)} failed in {cwd}:\n{done.stdout[-2000:]}\n{done.stderr}")


def build_page() -> Path:
    """The page's build folder: node_modules per package-lock.json, the build per
    version of the sources, both cached outside the repository."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("Node.js and npm are needed to build examples/server/ui (apt-get install npm)")
    work = CACHE / f"lock-{_digest([EXAMPLE / 'package-lock.json'])}"
    if not (work / "node_modules" / ".package-lock.json").is_file():
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(EXAMPLE / name, work / name)
        _npm(["ci"], work)
    files = sorted(
        p for name in SOURCES for p in [EXAMPLE / name, *(EXAMPLE / name).rglob("*")] if p.is_file()
    )
    dist = work / f"dist-{_digest(files)}"
    if not (dist / "index.html").is_file():
        shutil.rmtree(work / "src", ignore_errors=True)
        shutil.copytree(EXAMPLE / "src", work / "src")
        for name in ("index.html", "vite.config.js"):
            shutil.copyfile(EXAMPLE / name, work / name)
        _npm(["run", "build", "--", "--outDir", str(dist), "--emptyOutDir"], work)
    return dist


@pytest.fixture(scope="module")
def page_dist() -> Path:
    return build_page()


@pytest.fixture(scope="module", params=BACKENDS)
def chat_server(
    request: pytest.FixtureRequest, page_dist: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    data = tmp_path_factory.mktemp(f"ui-{request.param}")
    postgres = PG if request.param == "postgres" else None
    if postgres:
        postgres = reset_postgres(postgres)
    proc = ServerProcess(
        data / "data",
        postgres=postgres,
        config=EXAMPLE / "langgraph.json",
        extra=["--ui", str(page_dist)],
    )
    yield proc
    proc.stop()
    shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: run `make server-browser` (installs it).")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    tab = context.new_page()
    tab.errors = []  # type: ignore[attr-defined]
    tab.on("pageerror", lambda exc: tab.errors.append(str(exc)))
    yield tab
    context.close()


# Records every text the first assistant message shows, as it changes.
WATCH = """() => {
  window.__seen = [];
  new MutationObserver(() => {
    const node = document.querySelector('[data-testid=message-ai] [data-testid=content]');
    const text = node ? node.textContent : null;
    if (text && window.__seen[window.__seen.length - 1] !== text) window.__seen.push(text);
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def ask(page: Any, server: ServerProcess, question: str) -> str:
    """Open the page, send ``question``, wait for the approval; the thread's id."""
    page.goto(server.url + "/app/")
    page.wait_for_selector("[data-testid=input]")
    page.evaluate(WATCH)
    page.fill("[data-testid=input]", question)
    page.click("[data-testid=send]")
    page.wait_for_selector("[data-testid=interrupt]", timeout=30_000)
    return str(page.locator("[data-testid=thread-id]").inner_text())


def wait_idle(page: Any, ai_messages: int) -> None:
    page.wait_for_function(
        "n => document.querySelector('[data-testid=status]').textContent === 'idle'"
        " && document.querySelectorAll('[data-testid=message-ai]').length === n",
        arg=ai_messages,
        timeout=30_000,
    )


def state_of(server: ServerProcess, thread_id: str) -> tuple[dict[str, Any], list[Any]]:
    """The thread's state and its runs, read with LangGraph's Python SDK."""
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=server.url)
    return dict(client.threads.get_state(thread_id)), list(client.runs.list(thread_id))


def test_a_streamed_chat_with_a_tool_call_approved_from_the_page(
    chat_server: ServerProcess, page: Any
) -> None:
    thread_id = ask(page, chat_server, "What is the weather in Oslo?")
    # the first answer streamed in token by token before the question came up
    first = "Let me look up the weather in Oslo for you."
    seen = page.evaluate("window.__seen")
    assert seen[-1] == first
    partial = [text for text in seen if text != first]
    assert len(partial) >= 3, seen  # several renders before the last token
    assert all(first.startswith(text) for text in partial), seen
    assert [len(text) for text in seen] == sorted({len(text) for text in seen})
    # the tool call shows, waiting for the user's answer
    call = page.locator("[data-testid=tool-call]")
    assert call.count() == 1 and call.get_attribute("data-state") == "pending"
    assert 'get_weather({"city":"Oslo"})' in call.inner_text()
    assert (
        "Call get_weather({'city': 'Oslo'})?"
        in page.locator("[data-testid=interrupt]").inner_text()
    )
    assert page.locator("[data-testid=send]").is_disabled()

    page.click("[data-testid=approve]")
    wait_idle(page, 2)
    assert page.locator("[data-testid=interrupt]").count() == 0
    assert call.get_attribute("data-state") == "completed"
    assert page.locator("[data-testid=tool-result]").inner_text() == "Oslo: snow, -3 °C"
    texts = page.locator("[data-testid=message-ai] [data-testid=content]").all_inner_texts()
    assert texts == [first, FINAL]
    assert page.errors == []

    state, runs = state_of(chat_server, thread_id)
    kinds = [(m["type"], m.get("content")) for m in state["values"]["messages"]]
    assert kinds == [
        ("human", "What is the weather in Oslo?"),
        ("ai", first),
        ("tool", "Oslo: snow, -3 °C"),
        ("ai", FINAL),
    ]
    asked = state["values"]["messages"][1]["tool_calls"]
    assert [(c["name"], c["args"]) for c in asked] == [("get_weather", {"city": "Oslo"})]
    assert state["next"] == [] and state["tasks"] == []
    assert sorted(r["status"] for r in runs) == ["success", "success"]

    # the same thread, opened again, shows from the stored state
    page.goto(f"{chat_server.url}/app/?thread={thread_id}")
    page.wait_for_function(
        "document.querySelectorAll('[data-testid=message-ai]').length === 2", timeout=30_000
    )
    assert page.locator("[data-testid=tool-result]").inner_text() == "Oslo: snow, -3 °C"


def test_a_tool_call_denied_from_the_page(chat_server: ServerProcess, page: Any) -> None:
    thread_id = ask(page, chat_server, "And in Lima?")
    page.click("[data-testid=deny]")
    wait_idle(page, 2)
    call = page.locator("[data-testid=tool-call]")
    assert call.get_attribute("data-state") == "error"
    assert page.locator("[data-testid=tool-result]").inner_text() == "the user declined the call"
    last = page.locator("[data-testid=message-ai] [data-testid=content]").last.inner_text()
    assert last == "All right, I will not look it up (the user declined the call)."
    state, _runs = state_of(chat_server, thread_id)
    tool = state["values"]["messages"][2]
    assert (tool["type"], tool["status"]) == ("tool", "error")
    assert page.errors == []


def test_the_page_and_the_api_share_the_server(chat_server: ServerProcess, page: Any) -> None:
    page.goto(chat_server.url + "/app")  # redirected to /app/
    assert page.url == chat_server.url + "/app/"
    assert page.title() == "stategraph chat"
    assert page.locator("[data-testid=status]").inner_text() == "idle"
    assert page.locator("[data-testid=message-ai]").count() == 0
