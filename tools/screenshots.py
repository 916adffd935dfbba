"""Regenerate the screenshots of the documentation (``docs/screenshots.md``).

    python tools/screenshots.py --out docs/screenshots [--only drawings notebook studio]

It needs the ``dev`` extra (Pillow, nbclient, nbconvert if installed, the studio),
Playwright for Python (``pip install playwright``; no browser download) and Debian's
Chromium (``apt-get install chromium``; another one with ``--chromium PATH``).

Three groups of pictures:

* ``drawings``: every example graph of ``examples/`` and the graphs of the seed labs
  (built below), each drawn by ``draw_png()`` (Pillow) and by ``draw_svg()`` (the SVG
  loaded in headless Chromium and photographed), plus the approval example paused at
  its interrupt drawn with ``state=snapshot``;
* ``notebook``: ``examples/notebook.ipynb`` executed with nbclient, turned into HTML
  (nbconvert, or the outputs' own HTML/SVG when nbconvert is missing), photographed;
* ``studio``: ``examples/studio_demo.py`` writes its database, ``stategraph studio``
  serves it, and Playwright drives each screen.

Every PNG is written with Pillow's ``optimize`` and made smaller (fewer colours, then
a smaller size) until it is at most ``--max-kb`` KB. The page ``docs/screenshots.md``
(``--page``) is written from the same list, so pictures and captions never drift.
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import io
import operator
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any, Literal, Optional

from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, StateGraph
from stategraph.types import Command, Send, interrupt

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
COMMAND = "python tools/screenshots.py --out docs/screenshots"
GROUPS = ("drawings", "notebook", "studio")


@dataclass
class Shot:
    """One picture written: its file name, its group and what it shows."""

    name: str
    group: str
    caption: str
    how: str
    size: int = 0
    notes: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------ PNG files


def save_png(data: bytes, path: Path, max_bytes: int) -> int:
    """Write the PNG ``data`` to ``path``, optimized and shrunk to at most ``max_bytes``.

    First Pillow's ``optimize``; then a 256-colour palette (drawings and pages use few
    colours); then the picture is scaled down by 10 % steps. Returns the size written.
    """
    from PIL import Image

    image: Image.Image = Image.open(io.BytesIO(data))
    image.load()
    if image.mode not in ("RGB", "RGBA", "P", "L"):
        image = image.convert("RGBA")
    candidates: list[Image.Image] = [image]
    if image.mode != "P":
        candidates.append(image.convert("RGB").quantize(colors=256, dither=Image.Dither.NONE))
    best = b""
    for candidate in candidates:
        best = _encode(candidate)
        if len(best) <= max_bytes:
            break
    scale = 1.0
    while len(best) > max_bytes:
        scale *= 0.9
        if scale < 0.3:
            raise RuntimeError(f"{path.name}: cannot get under {max_bytes} bytes")
        width, height = (max(1, int(v * scale)) for v in image.size)
        smaller = image.convert("RGB").resize((width, height), Image.Resampling.LANCZOS)
        best = _encode(smaller.quantize(colors=256, dither=Image.Dither.NONE))
    path.write_bytes(best)
    return len(best)


def _encode(image: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


# ------------------------------------------------------------------- example graphs


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` as a module (the examples are not a package)."""
    module_name = f"_screenshots_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load examples/{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def example_graphs() -> list[tuple[str, str, Any, bool]]:
    """``(name, caption, compiled graph, xray)`` for each example of ``examples/``."""
    from stategraph.prebuilt import create_react_agent
    from stategraph.store.memory import InMemoryStore
    from stategraph.testing import FakeChatModel

    approval = load_example("approval").build(InMemorySaver())
    memory = load_example("long_term_memory")
    chat = load_example("streaming_chat")
    chat_agent = create_react_agent(FakeChatModel(list(chat.SCRIPT)), [chat.get_weather])
    return [
        (
            "approval",
            "examples/approval.py: extract, validate, review (interrupt)",
            approval,
            False,
        ),
        (
            "map_reduce",
            "examples/map_reduce.py: Send fan-out to count_words",
            load_example("map_reduce").build(),
            False,
        ),
        (
            "react_agent",
            "examples/react_agent.py: the prebuilt ReAct agent",
            load_example("react_agent").build(),
            False,
        ),
        (
            "supervisor",
            "examples/supervisor.py with xray=True: the two team subgraphs drawn inside their nodes (each report returns `Command(graph=PARENT)` to the supervisor, which a drawing cannot see, so it is drawn to `__end__`)",
            load_example("supervisor").build(),
            True,
        ),
        (
            "streaming_chat",
            "examples/streaming_chat.py: the ReAct agent on FakeChatModel",
            chat_agent,
            False,
        ),
        (
            "long_term_memory",
            "examples/long_term_memory.py: a router from START to remember / answer",
            memory.build(InMemoryStore()),
            False,
        ),
    ]


# ---------------------------------------------------------------------- seed graphs
#
# The seed labs (/work/shared/seeds, recorded against LangGraph 1.2.16) describe
# these graphs; each is built here with our API, in our own code.


class Items(TypedDict):
    items: Annotated[list[str], operator.add]
    total: int


class Done(TypedDict):
    done: Annotated[list[str], operator.add]


class Numbers(TypedDict):
    numbers: list[int]
    squares: Annotated[list[int], operator.add]


class Intake(TypedDict, total=False):
    request_id: str
    text: str
    candidate: dict[str, Any]
    status: str
    receipt: str


class Question(TypedDict):
    question: str
    route: Optional[Literal["known", "unknown"]]
    answer: Optional[str]


class Approval(TypedDict, total=False):
    action: str
    approved: Optional[bool]
    result: Optional[str]


def seed_parallel() -> Any:
    """Seed 003, parallel branches: a and b in one step, ``join`` waits for both."""
    builder = StateGraph(Items)
    builder.add_node("a", lambda state: {"items": ["A"]})
    builder.add_node("b", lambda state: {"items": ["B"]})
    builder.add_node("join", lambda state: {"total": len(state["items"])})
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge(["a", "b"], "join")
    builder.add_edge("join", END)
    return builder.compile()


def seed_dispatch() -> Any:
    """Seed 003, dynamic fan-out: one ``Send`` to ``square`` per number."""

    def per_number(state: Numbers) -> list[Send]:
        return [Send("square", {"number": n}) for n in state["numbers"]]

    def square(job: dict[str, int]) -> dict[str, Any]:
        return {"squares": [job["number"] ** 2]}

    builder = StateGraph(Numbers)
    builder.add_node("square", square)
    builder.add_conditional_edges(START, per_number, ["square"])
    builder.add_edge("square", END)
    return builder.compile()


def seed_pending_writes() -> tuple[Any, Any]:
    """Seed 003, pending writes: a and b run together, b fails once.

    Returns the graph and the snapshot of its failed step (a's write saved, b next).
    """
    failures = {"b": 1}
    a_done = threading.Event()

    def a(state: Done) -> dict[str, Any]:
        a_done.set()
        return {"done": ["A"]}

    def b(state: Done) -> dict[str, Any]:
        if failures["b"]:
            failures["b"] -= 1
            a_done.wait(timeout=10)  # fail once the sibling has finished
            raise ValueError("b failed on its first try")
        return {"done": ["B"]}

    builder = StateGraph(Done)
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge("a", END)
    builder.add_edge("b", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "pending"}}
    try:
        graph.invoke({"done": []}, config, durability="sync")
    except ValueError:
        pass
    snapshot = graph.get_state(config)
    if snapshot.next != ("b",):
        raise RuntimeError(f"seed pending writes: expected b to run next, got {snapshot.next}")
    return graph, snapshot


def seed_intake() -> Any:
    """Seed 003, the intake lab: review's ``Command`` has no declared destinations."""

    def extract(state: Intake) -> dict[str, Any]:
        return {"candidate": {"person": state["text"].strip()}, "status": "extracted"}

    def validate(state: Intake) -> dict[str, Any]:
        return {"status": "valid" if state["candidate"]["person"] else "invalid"}

    def route(state: Intake) -> str:
        return "review" if state["status"] == "valid" else "reject"

    def review(state: Intake) -> Command[Any]:
        answer = interrupt({"candidate": state["candidate"]})
        ok = isinstance(answer, dict) and answer.get("approved") is True
        return Command(
            update={"status": "approved" if ok else "rejected"}, goto="submit" if ok else "reject"
        )

    builder = StateGraph(Intake)
    builder.add_node("extract", extract)
    builder.add_node("validate", validate)
    builder.add_node("review", review)
    builder.add_node("submit", lambda state: {"status": "submitted"})
    builder.add_node("reject", lambda state: {"status": "rejected"})
    builder.add_edge(START, "extract")
    builder.add_edge("extract", "validate")
    builder.add_conditional_edges("validate", route, {"review": "review", "reject": "reject"})
    builder.add_edge("submit", END)
    builder.add_edge("reject", END)
    return builder.compile(checkpointer=InMemorySaver())


def seed_restart() -> Any:
    """Seed 003, the cross-process experiment: one ``review`` node that interrupts."""

    class Item(TypedDict, total=False):
        item: str
        approved: bool

    def review(state: Item) -> dict[str, Any]:
        return {"approved": interrupt({"item": state["item"]}) is True}

    builder = StateGraph(Item)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=InMemorySaver())


def seed_question() -> Any:
    """Seed 004, part 10: ``classify`` routes by ``Command[Literal[...]]``."""

    def classify(state: Question) -> Command[Literal["known_answer", "ask_human"]]:
        known = "stategraph" in state["question"].lower()
        return Command(
            update={"route": "known" if known else "unknown"},
            goto="known_answer" if known else "ask_human",
        )

    def ask_human(state: Question) -> dict[str, Any]:
        return {"answer": interrupt({"question": state["question"]})}

    builder = StateGraph(Question)
    builder.add_node("classify", classify)
    builder.add_node("known_answer", lambda state: {"answer": "graphs of nodes over a state"})
    builder.add_node("ask_human", ask_human)
    builder.add_edge(START, "classify")
    builder.add_edge("known_answer", END)
    builder.add_edge("ask_human", END)
    return builder.compile()


def seed_approval() -> Any:
    """Seed 004, part 7: ``review`` interrupts, then goes to ``execute`` or ends."""

    def review(state: Approval) -> Command[Literal["execute", "__end__"]]:
        if interrupt({"action": state["action"], "message": "approve this action?"}):
            return Command(update={"approved": True}, goto="execute")
        return Command(update={"approved": False, "result": "refused"}, goto=END)

    builder = StateGraph(Approval)
    builder.add_node("review", review)
    builder.add_node("execute", lambda state: {"result": f"done: {state['action']}"})
    builder.add_edge(START, "review")
    builder.add_edge("execute", END)
    return builder.compile(checkpointer=InMemorySaver())


def seed_graphs() -> list[tuple[str, str, Any, bool]]:
    """``(name, caption, compiled graph, xray)`` for each seed lab graph."""
    return [
        (
            "seed003_parallel",
            "seed 003, parallel branches a and b joined by a barrier",
            seed_parallel(),
            False,
        ),
        ("seed003_dispatch", "seed 003, Send fan-out from START to square", seed_dispatch(), False),
        (
            "seed003_pending_writes",
            "seed 003, a and b in one step (b fails once; pending writes)",
            seed_pending_writes()[0],
            False,
        ),
        (
            "seed003_intake",
            "seed 003, intake lab: review's Command declares no destinations, so the drawing cannot know them (review is drawn to `__end__` and submit unlinked, as LangGraph draws it)",
            seed_intake(),
            False,
        ),
        (
            "seed003_restart",
            "seed 003, the cross-process interrupt/resume experiment",
            seed_restart(),
            False,
        ),
        (
            "seed004_approval",
            "seed 004 part 7, review interrupts then goes to execute or `END`",
            seed_approval(),
            False,
        ),
        (
            "seed004_question",
            "seed 004 part 10, classify routes with `Command[Literal[...]]`",
            seed_question(),
            False,
        ),
    ]


# -------------------------------------------------------------------------- browser


@contextmanager
def chromium(path: str) -> Iterator[Any]:
    """A headless Chromium (``path``) driven by Playwright."""
    if not Path(path).exists():
        raise SystemExit(f"Chromium not found at {path}: apt-get install chromium, or --chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def svg_to_png(browser: Any, svg: str) -> bytes:
    """Load ``svg`` in a blank page and photograph the drawing (at twice its size)."""
    context = browser.new_context(viewport={"width": 400, "height": 300}, device_scale_factor=2)
    try:
        page = context.new_page()
        page.set_content(
            "<!doctype html><html><body style='margin:0;background:#fff'>"
            f"<div id='drawing' style='display:inline-block;padding:8px'>{svg}</div>"
            "</body></html>"
        )
        return bytes(page.locator("#drawing").screenshot())
    finally:
        context.close()


# ------------------------------------------------------------------------- drawings


def render_drawings(out: Path, browser: Any, max_bytes: int) -> list[Shot]:
    """The ``draw_png()`` and ``draw_svg()`` pictures of every example and seed graph."""
    shots: list[Shot] = []
    for name, caption, graph, xray in example_graphs() + seed_graphs():
        drawing = graph.get_graph(xray=xray)
        call = f"get_graph(xray={xray})" if xray else "get_graph()"
        png = Shot(f"draw-{name}.png", "drawings", f"{caption} (draw_png)", f"{call}.draw_png()")
        png.size = save_png(drawing.draw_png(), out / png.name, max_bytes)
        svg = Shot(
            f"svg-{name}.png",
            "drawings",
            f"{caption} (draw_svg, photographed in Chromium)",
            f"{call}.draw_svg()",
        )
        svg.size = save_png(svg_to_png(browser, drawing.draw_svg()), out / svg.name, max_bytes)
        shots += [png, svg]

    approval = load_example("approval")
    graph = approval.build(InMemorySaver())
    config = {"configurable": {"thread_id": "screenshot"}}
    graph.invoke({"request_id": "r1", "text": " Alice "}, config)
    snapshot = graph.get_state(config)
    how = "get_graph().draw_svg(state=graph.get_state(config))"
    shot = Shot(
        "svg-approval-paused.png",
        "drawings",
        "examples/approval.py paused in review: the interrupted node and the pending value highlighted (draw_svg, state=snapshot)",
        how,
    )
    shot.size = save_png(
        svg_to_png(browser, graph.get_graph().draw_svg(state=snapshot)), out / shot.name, max_bytes
    )
    shots.append(shot)
    shot = Shot(
        "draw-approval-paused.png",
        "drawings",
        "the same paused thread drawn by draw_png(state=snapshot)",
        how.replace("svg", "png"),
    )
    shot.size = save_png(graph.get_graph().draw_png(state=snapshot), out / shot.name, max_bytes)
    shots.append(shot)

    failed, snapshot = seed_pending_writes()
    shot = Shot(
        "svg-seed003_pending_writes-failed.png",
        "drawings",
        "seed 003 pending writes after b failed: b is next, a's write is kept (draw_svg, state=snapshot)",
        "get_graph().draw_svg(state=graph.get_state(config))",
    )
    shot.size = save_png(
        svg_to_png(browser, failed.get_graph().draw_svg(state=snapshot)), out / shot.name, max_bytes
    )
    shots.append(shot)
    return shots


# ------------------------------------------------------------------------- notebook


def notebook_html(path: Path) -> tuple[str, str]:
    """Execute the notebook at ``path``; return its HTML and what converted it."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(str(path), as_version=4)
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    try:
        from nbconvert import HTMLExporter
    except ImportError:
        return _outputs_page(notebook), "the cells' own text/html and image/svg+xml outputs"
    body, _resources = HTMLExporter().from_notebook_node(notebook)
    return body, "nbconvert's HTMLExporter"


def _outputs_page(notebook: Any) -> str:
    """A plain page of the notebook's sources and rich outputs (nbconvert missing)."""
    parts = [
        "<!doctype html><meta charset='utf-8'><body style='font-family:sans-serif;max-width:960px;margin:auto'>"
    ]
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            parts.append(f"<pre style='white-space:pre-wrap'>{html.escape(cell.source)}</pre>")
            continue
        parts.append(
            f"<pre style='background:#f4f4f4;padding:8px'>{html.escape(cell.source)}</pre>"
        )
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "text/html" in data:
                parts.append(data["text/html"])
            elif "image/svg+xml" in data:
                parts.append(data["image/svg+xml"])
            elif "text/plain" in data:
                parts.append(f"<pre>{html.escape(data['text/plain'])}</pre>")
            elif output.get("output_type") == "stream":
                parts.append(f"<pre>{html.escape(output.get('text', ''))}</pre>")
    return "\n".join(parts)


def render_notebook(out: Path, browser: Any, max_bytes: int) -> list[Shot]:
    """Full-page picture of ``examples/notebook.ipynb`` executed and rendered to HTML."""
    page_html, converter = notebook_html(EXAMPLES / "notebook.ipynb")
    with tempfile.TemporaryDirectory(prefix="stategraph-shots-") as folder:
        page_file = Path(folder) / "notebook.html"
        page_file.write_text(page_html, encoding="utf-8")
        context = browser.new_context(viewport={"width": 1000, "height": 800})
        try:
            page = context.new_page()
            page.goto(page_file.as_uri())
            if page.locator("svg").count() == 0:
                raise RuntimeError("the executed notebook shows no SVG drawing")
            data = page.screenshot(full_page=True)
        finally:
            context.close()
    shot = Shot(
        "notebook.png",
        "notebook",
        f"examples/notebook.ipynb executed with nbclient, rendered by {converter}: the inline drawing and the paused thread's highlight",
        "NotebookClient(nb).execute(); HTMLExporter().from_notebook_node(nb)",
    )
    shot.size = save_png(data, out / shot.name, max_bytes)
    return [shot]


# --------------------------------------------------------------------------- studio


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def studio_server(db: str) -> Iterator[str]:
    """``stategraph studio`` on ``db`` (writes allowed), in a child process; yields its URL."""
    port = free_port()
    exe = Path(sys.executable).with_name("stategraph")
    cli = [str(exe)] if exe.exists() else [sys.executable, "-m", "stategraph.cli._main"]
    args = [f"{EXAMPLES / 'studio_demo.py'}:graph", "--sqlite", db, "--store", db + ".store"]
    args += ["--allow-writes", "--port", str(port)]
    process = subprocess.Popen(
        [*cli, "studio", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    output = process.stdout.read().decode() if process.stdout else ""
                    raise RuntimeError(f"stategraph studio did not start:\n{output}") from None
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def render_studio(out: Path, browser: Any, max_bytes: int) -> list[Shot]:
    """Each studio screen, on the demo database of ``examples/studio_demo.py``."""
    shots: list[Shot] = []
    with tempfile.TemporaryDirectory(prefix="stategraph-studio-") as folder:
        db = str(Path(folder) / "studio_demo.sqlite")
        subprocess.run(
            [sys.executable, str(EXAMPLES / "studio_demo.py"), db],
            check=True,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
        )
        with studio_server(db) as url:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()

            def take(name: str, caption: str, how: str, full: bool = True) -> None:
                shot = Shot(name, "studio", caption, how)
                shot.size = save_png(page.screenshot(full_page=full), out / name, max_bytes)
                shots.append(shot)

            try:
                _drive_studio(page, url, take)
            finally:
                context.close()
    return shots


def _drive_studio(page: Any, url: str, take: Callable[..., None]) -> None:
    page.goto(url + "/")
    page.locator("tr.thread-row").first.wait_for()
    take(
        "studio-threads.png",
        "Threads: the four demo threads with status, steps and next nodes",
        "open /",
    )

    page.goto(url + "/ui/threads/published")
    page.locator("tr.cp").first.wait_for()
    take(
        "studio-timeline.png",
        "A thread: the checkpoint timeline of `published`, its state and drawing",
        "open /ui/threads/published",
    )

    page.locator('tr.cp:has(td:text-is("1")) a').first.click()
    page.locator("#diff").filter(has_text="sources").wait_for()
    take(
        "studio-diff.png",
        "A state diff: step 1 of `published`, the research subgraph added the sources",
        "click the step-1 row of the timeline",
    )

    page.goto(url + "/ui/threads/waiting")
    form = page.locator("form.answer")
    form.wait_for()
    schema = page.locator("summary", has_text="response schema")
    if schema.count():
        schema.first.click()  # show the schema the answer is checked against
    form.locator("textarea").fill('{"approve": true}')
    form.locator("button").click()
    form.locator(".form-error").filter(has_text="required").wait_for()
    form.scroll_into_view_if_needed()
    take(
        "studio-interrupt-form.png",
        "The interrupt answer form of `waiting`: an answer rejected by the response_schema",
        'answer {"approve": true} to the pending interrupt',
        full=False,
    )

    form.locator("textarea").fill('{"approved": true, "comment": "looks good"}')
    with page.expect_navigation():
        form.locator("button").click()
    if page.locator("#next-nodes").inner_text() != "-":
        raise RuntimeError("the answered thread still has next nodes")
    take(
        "studio-answered.png",
        "The same thread after a valid answer: resumed and finished (no next node)",
        'answer {"approved": true, "comment": "looks good"}',
    )

    page.goto(url + "/ui/threads/published")
    row = page.locator('tr.cp:has(td:text-is("2"))').first
    with page.expect_navigation():
        row.locator("button.fork").click()
    if page.locator("#next-nodes").inner_text() != "review":
        raise RuntimeError("the fork did not make review the next node")
    take(
        "studio-fork.png",
        "Fork: the step-2 checkpoint of `published` made the new head (review runs next)",
        "press fork on the step-2 row",
    )

    page.goto(url + "/ui/threads/rejected")
    run = page.locator("form.run-form")
    run.locator('input[value="values"]').check()
    run.locator("textarea").fill("null")
    run.locator("button").click()
    page.locator('#run-status[data-done="ok"]').wait_for(timeout=60_000)
    page.locator("#events").scroll_into_view_if_needed()
    take(
        "studio-live-run.png",
        "A live run watched: `rejected` continued with input null, its events streamed (SSE)",
        "start a run (input null, modes updates + values)",
    )

    page.goto(url + "/ui/graph")
    page.locator(".drawing svg").wait_for()
    take(
        "studio-graph.png",
        "Graph: the demo graph drawn with its research subgraph expanded",
        "open /ui/graph",
    )


# ----------------------------------------------------------------------------- page


def write_page(path: Path, out: Path, shots: list[Shot], groups: list[str]) -> None:
    """The documentation page showing every picture with its caption and command."""
    relative = os.path.relpath(out, path.parent)
    titles = {
        "drawings": (
            "Drawings",
            "`get_graph()` of each example and seed-lab graph: `draw_png()` painted by Pillow, `draw_svg()` photographed in headless Chromium.",
        ),
        "notebook": (
            "Notebook",
            "The example notebook executed with nbclient and rendered to HTML.",
        ),
        "studio": (
            "Studio",
            "`stategraph studio` on the database of `examples/studio_demo.py`, driven by Playwright in Debian's Chromium.",
        ),
    }
    lines = [
        "# Screenshots",
        "",
        "Real pictures of the drawings, the notebook display and the studio, made by",
        f"`tools/screenshots.py`. Regenerate them all with `{COMMAND}`",
        "(it needs the `dev` extra, `pip install playwright` and Debian's `chromium`).",
        "Under each picture: what it shows, the call or the action that made it, and the",
        "command that regenerates its group.",
        "",
    ]
    for group in groups:
        title, intro = titles[group]
        lines += [f"## {title}", "", intro, ""]
        # drawings are photographed at twice their size: show them at a readable one
        size = '{ style="max-height: 560px" }' if group == "drawings" else ""
        for shot in (s for s in shots if s.group == group):
            lines += [
                f"![{re.sub(r'[][`*]', '', shot.caption)}]({relative}/{shot.name}){size}",
                "",
                f"**{shot.caption}**: `{shot.how}`, by `{COMMAND} --only {group}`",
                "",
            ]
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> list[Shot]:
    """Write the pictures (and the page) as the command line asks; return them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder of the PNG files")
    parser.add_argument("--only", nargs="+", choices=GROUPS, default=list(GROUPS))
    parser.add_argument("--page", type=Path, help="the Markdown page (default: OUT.md)")
    parser.add_argument(
        "--chromium", default=os.environ.get("STATEGRAPH_CHROMIUM", "/usr/bin/chromium")
    )
    parser.add_argument("--max-kb", type=int, default=250, help="largest PNG, in KB")
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    max_bytes = args.max_kb * 1024
    renderers = {"drawings": render_drawings, "notebook": render_notebook, "studio": render_studio}
    shots: list[Shot] = []
    with chromium(args.chromium) as browser:
        for group in GROUPS:
            if group in args.only:
                shots += renderers[group](out, browser, max_bytes)
    for shot in shots:
        print(f"{shot.size / 1024:6.1f} KB  {out / shot.name}  {shot.caption}")
    if set(args.only) == set(GROUPS):
        write_page(args.page or out.with_suffix(".md"), out, shots, list(GROUPS))
    return shots


if __name__ == "__main__":
    main()
