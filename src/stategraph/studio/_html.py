"""Small helpers for the server-rendered pages: escaping and the page frame."""

from __future__ import annotations

from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from stategraph.studio._context import Studio
from stategraph.studio._jsonio import dumps

__all__ = ["h", "pretty", "page", "url", "thread_url"]


def h(value: Any) -> str:
    """``value`` as text, escaped for HTML text and attribute values."""
    return escape("" if value is None else str(value), quote=True)


def pretty(value: Any, limit: int = 20_000) -> str:
    """Indented JSON of ``value``, escaped, inside ``<pre>`` (long values cut)."""
    text = dumps(value, indent=2)
    if len(text) > limit:
        text = text[:limit] + "\n… (cut)"
    return f'<pre class="json">{h(text)}</pre>'


def url(path: str, **params: Any) -> str:
    """``path`` with the non-empty ``params`` as a query string."""
    query = {k: v for k, v in params.items() if v not in (None, "")}
    return path + ("?" + urlencode(query) if query else "")


def thread_url(thread_id: str, **params: Any) -> str:
    """The page of a thread (the id percent-encoded), with ``params``."""
    return url("/ui/threads/" + quote(thread_id, safe=""), **params)


def page(studio: Studio, title: str, body: str, *, active: str = "") -> str:
    """The HTML document: navigation, mode badge, CSRF meta tag, the studio's CSS and JS."""
    mode = "writes allowed" if studio.allow_writes else "read-only"
    graph = "graph loaded" if studio.graph is not None else "no graph"
    nav = "".join(
        f'<a href="{href}" class="{"active" if key == active else ""}">{label}</a>'
        for key, href, label in (
            ("threads", "/", "Threads"),
            ("graph", "/ui/graph", "Graph"),
            ("store", "/ui/store", "Store"),
        )
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="{h(studio.csrf_secret)}">
<title>{h(title)} · stategraph studio</title>
<link rel="stylesheet" href="/static/studio.css">
<script src="/static/studio.js" defer></script>
</head><body>
<header><span class="brand">stategraph studio</span><nav>{nav}</nav>
<span class="badge {"rw" if studio.allow_writes else "ro"}">{mode}</span>
<span class="badge">{graph}</span></header>
<main>{body}</main>
</body></html>"""
