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


# Issue 23 (goal 5): what ``import stategraph.pregel, stategraph.graph`` may load. The
# first compile() needs the Pregel class and its nodes; reading/editing state, the run
# loop, leases, observers and most channel kinds load when first used. A module added
# here should be one the Pregel class cannot be defined without; otherwise import it
# where it is used (inside the function, or through ``stategraph._lazy``).
IMPORT_BUDGET = frozenset(
    {
        "stategraph",
        "stategraph._context",
        "stategraph._lazy",
        "stategraph._notes",
        "stategraph._typeddict_compat",
        "stategraph.channels",
        "stategraph.channels.base",
        "stategraph.constants",
        "stategraph.errors",
        "stategraph.graph",
        "stategraph.pregel",
        "stategraph.pregel._call",
        "stategraph.pregel._io",
        "stategraph.pregel._node_alone",
        "stategraph.pregel._pregel",
        "stategraph.pregel._pregel.base",
        "stategraph.pregel._pregel.config",
        "stategraph.pregel._pregel.marker",
        "stategraph.pregel._pregel.running",
        "stategraph.pregel._pregel.schemas",
        "stategraph.pregel._pregel.setup",
        "stategraph.pregel._run",
        "stategraph.pregel._schema",
        "stategraph.pregel._state",
        "stategraph.pregel._task",
        "stategraph.pregel.main",
        "stategraph.pregel.node",
        "stategraph.runtime",
        "stategraph.types",
        "stategraph.typing",
        "stategraph.warnings",
    }
)

# standard-library modules that neither the import nor a compile needs (uuid pulls in
# platform on 3.11; logging pulls traceback, textwrap and string)
STDLIB_NOT_AT_IMPORT = ("uuid", "platform", "logging", "random", "datetime", "asyncio")

# what compiling a graph must still not load: the loop, state reading and editing,
# leases and savers, the observer fan-out, and the channel kinds the graph does not use
NOT_AT_COMPILE = (
    "stategraph.pregel._loop",
    "stategraph.pregel._sync_shell",
    "stategraph.pregel._pregel.state_read",
    "stategraph.pregel._pregel.state_edit",
    "stategraph.pregel._lease_guard",
    "stategraph.pregel._state_lease",
    "stategraph.checkpoint",
    "stategraph.observe._fanout",
    "stategraph.channels.delta",
    "stategraph.channels.untracked_value",
    "stategraph._state_types",
    "stategraph._stream_parts",
    "uuid",
    "platform",
)


def _loaded_after(code: str) -> list[str]:
    """Every module (stategraph's and others) in ``sys.modules`` after ``code`` runs in a
    fresh interpreter."""
    probe = textwrap.dedent(code) + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    loaded: list[str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return loaded


def test_import_loads_only_the_budget() -> None:
    code = "import stategraph.pregel, stategraph.graph"
    loaded = _loaded_after(code)
    ours = {m for m in loaded if m == "stategraph" or m.startswith("stategraph.")}
    extra = sorted(ours - IMPORT_BUDGET)
    if extra:
        chains = "\n".join(_import_chain(code, m) for m in extra)
        pytest.fail(f"{code!r} loads modules beyond its budget: {extra}\n{chains}")
    # the Pregel class and the builder's package are there, and nothing of the stdlib
    # list: the budget is met by laziness, not by an import that failed
    assert {"stategraph.pregel.main", "stategraph.graph"} <= ours
    assert [m for m in STDLIB_NOT_AT_IMPORT if m in loaded] == []


def test_compile_does_not_load_the_run_machinery() -> None:
    loaded = set(_loaded_after(TINY_GRAPH))
    early = [m for m in NOT_AT_COMPILE if m in loaded]
    assert early == [], "\n".join(_import_chain(TINY_GRAPH, m) for m in early)
    assert "stategraph.graph._compile" in loaded
    # the loop and its saver glue load with the first run
    after_run = set(_loaded_after(TINY_GRAPH + "\napp.invoke({'x': 1})\n"))
    assert {"stategraph.pregel._loop.drive", "stategraph.pregel._sync_shell"} <= after_run


def test_lazy_names_resolve() -> None:
    # every name moved behind a lazy table is still importable from its public path
    code = """
    from stategraph.types import StateSnapshot, PregelTask, GraphOutput, StreamPart
    from stategraph.types import ValuesStreamPart, PregelExecutableTask, StateUpdate
    from stategraph.channels import Topic, DeltaChannel, AnyValue, UntrackedValue
    from stategraph.observe import aresolve, observers_for, RunObserver
    import stategraph.types as t
    assert StateSnapshot.__module__ == GraphOutput.__module__ == "stategraph.types"
    assert t.StreamPart is StreamPart and "PregelTask" in dir(t)
    """
    loaded = _loaded_after(code)
    assert "stategraph._state_types" in loaded and "stategraph.channels.topic" in loaded
