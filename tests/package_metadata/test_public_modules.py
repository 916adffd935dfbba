"""Public means documented: a module without a leading underscore is one the docs name.

The site (``docs/``) is the contract with users. A module whose dotted path has no
component starting with ``_`` is importable by convention, so it must be named on the
site: in the reference (``::: stategraph...``), in a guide, or in the porting table of
LangGraph's module paths. Everything else is internal and carries an underscore, so a
reader can tell at the import line whether a path may change.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "stategraph"
DOCS = ROOT / "docs"
DOTTED = re.compile(r"stategraph(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def module_paths() -> list[str]:
    """Every module and package of ``src/stategraph`` as a dotted path."""
    found = []
    for file in PACKAGE.rglob("*.py"):
        parts = list(file.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found.append(".".join(parts))
    return sorted(found)


def is_public(module: str) -> bool:
    return not any(part.startswith("_") for part in module.split("."))


def documented_names() -> set[str]:
    """Every dotted ``stategraph...`` name written anywhere on the site."""
    names: set[str] = set()
    for page in DOCS.rglob("*.md"):
        names.update(DOTTED.findall(page.read_text(encoding="utf-8")))
    return names


def is_documented(module: str, names: set[str]) -> bool:
    return module in names or any(name.startswith(module + ".") for name in names)


def test_the_walk_sees_the_package() -> None:
    modules = module_paths()
    # the walk reaches nested packages and tells private from public
    assert "stategraph.checkpoint.sqlite.aio" in modules
    assert "stategraph.pregel._loop.drive" in modules
    assert is_public("stategraph.checkpoint.sqlite.aio")
    assert not is_public("stategraph.pregel._loop.drive")
    assert not is_public("stategraph._lazy")


def test_every_public_module_is_documented() -> None:
    names = documented_names()
    undocumented = [m for m in module_paths() if is_public(m) and not is_documented(m, names)]
    assert not undocumented, (
        "these modules have public names but no page of docs/ mentions them: "
        + ", ".join(undocumented)
        + ". Document each (reference entry, guide, or the porting table of "
        "LangGraph's paths in docs/porting.md), or rename it with a leading underscore."
    )


def test_documentation_is_not_satisfied_by_a_longer_unrelated_name() -> None:
    # "stategraph.pregel.main" must not count as documenting "stategraph.pregel.mai"
    names = {"stategraph.pregel.main.Pregel"}
    assert is_documented("stategraph.pregel.main", names)
    assert not is_documented("stategraph.pregel.mai", names)
