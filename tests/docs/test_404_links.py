"""The built site's 404 page links its assets relatively, like every other page
(issue 22, item 13): opened from disk or served under a path it keeps its styles."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]
PAGE = """<link rel="icon" href="/assets/images/favicon.png">
<script src="/assets/javascripts/bundle.js"></script>
<a href="/.">home</a> <a href="https://github.com/x">repo</a> <a href="//cdn.x/y">cdn</a>
<script id="__config" type="application/json">{"base": "/", "features": []}</script>"""


def _hooks() -> SimpleNamespace:
    spec = importlib.util.spec_from_file_location(
        "mkdocs_hooks", ROOT / "tools" / "mkdocs_hooks.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return SimpleNamespace(on_post_template=module.on_post_template)


def test_the_404_page_links_relatively() -> None:
    out = _hooks().on_post_template(PAGE, template_name="404.html", config={"site_url": None})
    assert 'href="assets/images/favicon.png"' in out
    assert 'src="assets/javascripts/bundle.js"' in out
    assert 'href="."' in out and '"base": "."' in out
    assert 'href="https://github.com/x"' in out and 'href="//cdn.x/y"' in out
    assert not re.search(r'(href|src)="/[^/]', out)


def test_other_templates_and_configured_sites_are_left_alone() -> None:
    hooks = _hooks()
    assert hooks.on_post_template(PAGE, template_name="sitemap.xml", config={}) == PAGE
    with_url = {"site_url": "https://example.org/stategraph/"}
    assert hooks.on_post_template(PAGE, template_name="404.html", config=with_url) == PAGE


def test_mkdocs_uses_the_hook() -> None:
    text = (ROOT / "mkdocs.yml").read_text()
    assert "hooks:\n  - tools/mkdocs_hooks.py" in text
