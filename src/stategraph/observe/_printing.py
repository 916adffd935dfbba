"""``debug=True`` and ``print_mode=``: print stream chunks as the run produces them.

As in LangGraph, each chunk of a printed mode is written to standard output as
``[mode] payload`` (the mode in bold), with ``[graph=(namespace...)]`` before the
payload for chunks of subgraphs. ``debug=True`` prints ``values`` and ``updates``;
``print_mode`` adds modes. Printing never changes what ``stream()`` yields or what
``invoke()`` returns.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["print_modes", "print_chunk"]

_DEBUG_MODES = frozenset({"values", "updates"})


def print_modes(print_mode: Any, debug: bool, valid: frozenset[str]) -> frozenset[str]:
    """The modes to print for ``print_mode`` (a mode or a list) and ``debug``."""
    if print_mode is None or print_mode == ():
        modes: frozenset[str] = frozenset()
    elif isinstance(print_mode, str):
        modes = frozenset([print_mode])
    else:
        modes = frozenset(print_mode)
    bad = modes - valid
    if bad:
        raise ValueError(f"Unknown print_mode {sorted(bad)!r}; choose from {sorted(valid)}.")
    return modes | _DEBUG_MODES if debug else modes


def print_chunk(ns: tuple[str, ...], mode: str, payload: Any) -> None:
    """Print one chunk the way LangGraph's debug output looks."""
    head = f"\x1b[1m[{mode}]\x1b[0m"
    if ns:
        head = f"{head} \x1b[1;30;33m[graph={ns!r}]\x1b[0m"
    print(f"{head} {payload}", file=sys.stdout, flush=True)
