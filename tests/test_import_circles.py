"""No import circle of more than two modules in ``stategraph`` (issue 21).

Imports are read from the source, as ``lint-imports`` reads them: every ``import``
statement counts, inside functions too. The first test leaves out those under
``if TYPE_CHECKING:``; the second counts them too, since an annotation that names a
module higher up ties the order of the modules just as an import that runs does (a
small protocol naming what the annotated code reads keeps it one-way). A circle of
two modules (a module and a helper that imports it back lazily) is allowed; a longer
one means a room's parts no longer have an order a reader can follow.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

grimp = pytest.importorskip("grimp")

# Circles that another change removes; listed so that no new one can join them.
_BEING_REMOVED: set[frozenset[str]] = set()


def _circles(graph: Any) -> list[frozenset[str]]:
    """The strongly connected components of more than two modules (Tarjan)."""
    modules = sorted(graph.modules)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 2:
                found.append(frozenset(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(modules)))
    try:
        for m in modules:
            if m not in index:
                visit(m)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_no_import_circle_of_more_than_two_modules() -> None:
    graph = grimp.build_graph("stategraph", exclude_type_checking_imports=True, cache_dir=None)
    circles = [c for c in _circles(graph) if c not in _BEING_REMOVED]
    assert circles == [], "import circles of more than two modules: " + "; ".join(
        " <-> ".join(sorted(c)) for c in circles
    )


# Circles through ``if TYPE_CHECKING:`` imports that stay, each with the reason.
_TYPE_ONLY_KEPT: set[frozenset[str]] = {
    # Not a circle through three modules but two pairs joined at stategraph.types:
    # types -> _state_types and types -> _stream_parts are the TYPE_CHECKING imports
    # that give type checkers the names types loads lazily from its two halves; each
    # half imports back at run time the public types it is made of (Interrupt,
    # RetryPolicy, ...). Removing it means merging the halves or moving those types
    # below stategraph.types, more than this circle is worth.
    frozenset({"stategraph.types", "stategraph._state_types", "stategraph._stream_parts"}),
}


def test_no_circle_of_more_than_two_modules_counting_type_only_imports() -> None:
    graph = grimp.build_graph("stategraph", exclude_type_checking_imports=False, cache_dir=None)
    circles = [c for c in _circles(graph) if c not in _TYPE_ONLY_KEPT]
    assert circles == [], "import circles (type-only imports counted): " + "; ".join(
        " <-> ".join(sorted(c)) for c in circles
    )


def test_the_circle_finder_finds_a_circle_of_three() -> None:
    class Graph:
        modules = {"a", "b", "c", "d"}

        def find_modules_directly_imported_by(self, m: str) -> set[str]:
            return {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}[m]

    assert _circles(Graph()) == [frozenset({"a", "b", "c"})]
