"""Options of the renderers: edge curves, node colours, how Mermaid PNGs are made."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["CurveStyle", "NodeStyles", "MermaidDrawMethod"]


class CurveStyle(Enum):
    """How Mermaid bends edges (its ``flowchart.curve`` setting)."""

    BASIS = "basis"
    BUMP_X = "bumpX"
    BUMP_Y = "bumpY"
    CARDINAL = "cardinal"
    CATMULL_ROM = "catmullRom"
    LINEAR = "linear"
    MONOTONE_X = "monotoneX"
    MONOTONE_Y = "monotoneY"
    NATURAL = "natural"
    STEP = "step"
    STEP_AFTER = "stepAfter"
    STEP_BEFORE = "stepBefore"


@dataclass
class NodeStyles:
    """CSS of ordinary nodes (``default``), of the first node and of the last node."""

    default: str = "fill:#f2f0ff,line-height:1.2"
    first: str = "fill-opacity:0"
    last: str = "fill:#bfb6fc"


class MermaidDrawMethod(Enum):
    """Accepted for compatibility: stategraph always renders Mermaid PNGs locally."""

    PYPPETEER = "pyppeteer"
    API = "api"
