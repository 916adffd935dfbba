"""MkDocs hooks for the documentation site (``hooks:`` in mkdocs.yml).

``404.html`` is the one page MkDocs renders (from the theme's static template) with
root-absolute links (``/assets/...``) when no ``site_url`` is set: opened from disk, or
served under a path (``https://host/stategraph/``), it loses its styles and scripts.
Every other page links relatively. :func:`on_post_template` makes the 404 page do the
same; it lives at the site's root, so its links are relative to the root. With a
``site_url`` configured, MkDocs builds correct absolute links and nothing is changed.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["on_post_template"]

_ROOT_LINK = re.compile(r'(\s(?:href|src))="/(?!/)([^"]*)"')
_THEME_BASE = re.compile(r'"base":\s*"/"')  # Material's client-side config (search...)


def on_post_template(output: str, template_name: str, config: Any, **kwargs: Any) -> str:
    """Make the 404 page's root-absolute links relative (when no site_url is set)."""
    if config.get("site_url") or template_name != "404.html":
        return output

    def relative(match: re.Match[str]) -> str:
        target = match.group(2) or "."
        return f'{match.group(1)}="{target}"'

    return _THEME_BASE.sub('"base": "."', _ROOT_LINK.sub(relative, output))
