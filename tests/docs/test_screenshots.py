"""``tools/screenshots.py`` and the pictures it committed under ``docs/screenshots/``.

The browser part (Chromium) is not run here; this checks what can be checked without
it: the size limit, the seed-lab graphs the script builds, and that the page and the
folder agree.
"""

from __future__ import annotations

import importlib.util
import io
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "screenshots.md"
FOLDER = ROOT / "docs" / "screenshots"
LIMIT = 250 * 1024


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "_screenshots_tool", ROOT / "tools" / "screenshots.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_screenshots_tool"] = module
    spec.loader.exec_module(module)
    return module


def test_save_png_gets_a_large_picture_under_the_limit(tool, tmp_path):
    image_mod = pytest.importorskip("PIL.Image")
    import random

    rng = random.Random(7)
    noisy = image_mod.new("RGB", (900, 700))
    noisy.putdata(
        [(rng.randrange(256), rng.randrange(256), rng.randrange(256)) for _ in range(900 * 700)]
    )
    raw = io.BytesIO()
    noisy.save(raw, format="PNG")
    assert len(raw.getvalue()) > 1_000_000
    target = tmp_path / "noisy.png"
    size = tool.save_png(raw.getvalue(), target, 200 * 1024)
    assert size == target.stat().st_size <= 200 * 1024
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert image_mod.open(target).width < 900  # it had to be scaled down


def test_save_png_keeps_a_small_picture_as_it_is(tool, tmp_path):
    image_mod = pytest.importorskip("PIL.Image")
    plain = image_mod.new("RGB", (300, 200), "white")
    raw = io.BytesIO()
    plain.save(raw, format="PNG")
    target = tmp_path / "plain.png"
    tool.save_png(raw.getvalue(), target, LIMIT)
    assert image_mod.open(target).size == (300, 200)


def test_seed_graphs_have_the_shapes_the_seeds_describe(tool):
    edges = {
        name: {(e.source, e.target, e.conditional) for e in graph.get_graph().edges}
        for name, _caption, graph, _xray in tool.seed_graphs()
    }
    assert {("a", "join", False), ("b", "join", False), ("join", "__end__", False)} <= edges[
        "seed003_parallel"
    ]
    assert ("__start__", "square", True) in edges["seed003_dispatch"]
    assert {("__start__", "a", False), ("__start__", "b", False)} <= edges["seed003_pending_writes"]
    assert {("review", "execute", True), ("review", "__end__", True)} <= edges["seed004_approval"]
    assert {("classify", "known_answer", True), ("classify", "ask_human", True)} <= edges[
        "seed004_question"
    ]


def test_the_pending_writes_lab_stops_with_b_next_and_a_saved(tool):
    _graph, snapshot = tool.seed_pending_writes()
    assert snapshot.next == ("b",)
    assert snapshot.values == {"done": ["A"]}


def test_the_page_shows_every_committed_picture_and_each_is_small():
    shown = re.findall(r"!\[[^\]]*\]\(screenshots/([^)]+)\)", PAGE.read_text(encoding="utf-8"))
    files = sorted(p.name for p in FOLDER.glob("*.png"))
    assert sorted(shown) == files
    assert len(files) >= 30
    for path in FOLDER.glob("*.png"):
        assert path.stat().st_size <= LIMIT, path.name
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", path.name
