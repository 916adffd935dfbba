"""Colours, fonts and text measurement shared by the SVG and PNG renderers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from stategraph.drawing._mermaid import _metadata_lines
from stategraph.drawing._styles import NodeStyles

if TYPE_CHECKING:
    from stategraph.drawing._elements import Node

__all__ = [
    "Palette",
    "PALETTE",
    "parse_css",
    "text_width",
    "node_lines",
    "node_role",
]


@dataclass(frozen=True)
class Palette:
    """The colours of a drawing (Mermaid's default theme, plus highlight colours)."""

    stroke: str = "#9370db"
    text: str = "#333333"
    edge: str = "#333333"
    label_bg: str = "#e8e8e8"
    cluster_fill: str = "#ffffde"
    cluster_stroke: str = "#aaaa33"
    next_stroke: str = "#e8590c"
    next_fill: str = "#fff4e6"
    interrupt_stroke: str = "#c92a2a"
    interrupt_fill: str = "#fff5f5"
    background: str = "white"


PALETTE = Palette()


def parse_css(style: str) -> dict[str, str]:
    """``"fill:#f2f0ff,line-height:1.2"`` (a Mermaid ``classDef``) as a dict."""
    out: dict[str, str] = {}
    depth = 0
    current = ""
    parts: list[str] = []
    for ch in style:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch in ",;" and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    for part in parts:
        if ":" in part:
            key, value = part.split(":", 1)
            out[key.strip()] = value.strip()
    return out


# Approximate advance widths (in em) of a sans-serif font, for SVG layout without fonts.
_NARROW = set("iljtfrI1!.,:;'|() []")
_WIDE = set("mwMW@%")


def text_width(text: str, size: float) -> float:
    """Estimated width of ``text`` at font ``size`` in a sans-serif font."""
    total = 0.0
    for ch in text:
        if ch in _NARROW:
            total += 0.3
        elif ch in _WIDE:
            total += 0.88
        elif ch.isupper():
            total += 0.68
        elif ch == "_":
            total += 0.55
        else:
            total += 0.56
    return total * size


def node_lines(node: Node) -> tuple[str, list[str]]:
    """The title of a node and the metadata lines shown under it."""
    title = node.name.split(":")[-1]
    return title, _metadata_lines(node.metadata)


def node_role(node: Node, first: Node | None, last: Node | None) -> str:
    """``first``, ``last`` or ``default``: which :class:`NodeStyles` entry applies."""
    if first is not None and node.id == first.id:
        return "first"
    if last is not None and node.id == last.id:
        return "last"
    return "default"


def role_style(styles: NodeStyles, role: str) -> dict[str, str]:
    """The CSS of ``role`` (``first``/``last`` styles add to the default one)."""
    base = parse_css(styles.default)
    if role != "default":
        base.update(parse_css(getattr(styles, role)))
    return base
