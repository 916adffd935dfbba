"""Import cost: the common entry points must not pull in heavy modules.

Each check runs in a fresh interpreter, so modules imported by other tests do not count.
On failure the message shows the ``-X importtime`` chain that led to the heavy module.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

HEAVY = ("asyncio", "pydantic", "sqlite3", "ormsgpack", "concurrent.futures")

_PROBE = textwrap.dedent(
    """
    import json, sys
    {code}
    print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
    """
)

TINY_GRAPH = """
import operator
from typing import Annotated, TypedDict
from stategraph.graph import StateGraph, START, END

class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]

g = StateGraph(S)
g.add_node("a", lambda s: {"x": s["x"] + 1, "log": ["a"]})
g.add_node("b", lambda s: {"log": ["b"]})
g.add_edge(START, "a")
g.add_edge("a", "b")
g.add_edge("b", END)
app = g.compile()
"""


def _import_chain(code: str, module: str) -> str:
    """The ``-X importtime`` lines from the start down to ``module``, for the report."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("import time:")]
    # importtime prints children before parents: the chain is the lines after the module
    # whose indentation is smaller, up to the top level
    for i, line in enumerate(lines):
        name = line.rsplit("|", 1)[-1]
        if name.strip() == module:
            depth = len(name) - len(name.lstrip())
            chain = [name.strip()]
            for later in lines[i + 1 :]:
                later_name = later.rsplit("|", 1)[-1]
                later_depth = len(later_name) - len(later_name.lstrip())
                if later_depth < depth:
                    chain.append(later_name.strip())
                    depth = later_depth
            return " <- ".join(chain)
    return f"{module} (not found in importtime output)"


def _heavy_after(code: str) -> list[str]:
    probe = _PROBE.format(code=textwrap.dedent(code), heavy=HEAVY)
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    loaded: list[str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return loaded


@pytest.mark.parametrize(
    "code",
    [
        "import stategraph",
        "import stategraph.graph",
        "from stategraph.graph import StateGraph, START, END",
        "from stategraph.pregel import Pregel, NodeBuilder",
        "import stategraph.channels",
        "import stategraph.types, stategraph.errors, stategraph.config, stategraph.runtime",
        TINY_GRAPH,
        TINY_GRAPH + "\nassert app.invoke({'x': 1}) == {'x': 2, 'log': ['a', 'b']}\n",
    ],
    ids=[
        "import-stategraph",
        "import-graph",
        "from-graph-import",
        "import-pregel",
        "import-channels",
        "import-vocabulary",
        "compile-tiny-graph",
        "invoke-tiny-graph",
    ],
)
def test_no_heavy_modules_imported(code: str) -> None:
    loaded = _heavy_after(code)
    if loaded:
        chains = "\n".join(_import_chain(code, m) for m in loaded)
        pytest.fail(f"heavy modules imported: {loaded}\nimport chains:\n{chains}")
    assert loaded == []


def test_probe_detects_a_heavy_import() -> None:
    # the check itself must be able to fail
    assert _heavy_after("import sqlite3") == ["sqlite3"]
    assert "sqlite3" in _import_chain("import sqlite3", "sqlite3")
