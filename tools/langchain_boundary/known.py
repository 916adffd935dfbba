"""Known differences between LangGraph and stategraph in the boundary scenarios.

``CAUSES`` names each cause (the item of issue 22 and where it lives; the runtime ones
are diagnosed in RUNTIME_DIFFS.md); ``KNOWN`` lists, per scenario, the causes of its
differences. ``compare.py`` and ``tests/interop/test_langchain_boundary.py`` fail when
a scenario differs without a listed cause, or matches while a cause is still listed.
"""

from __future__ import annotations

__all__ = ["CAUSES", "KNOWN"]

CAUSES: dict[str, str] = {}

KNOWN: dict[str, list[str]] = {}
