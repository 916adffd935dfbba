"""The opt-in ``langgraph`` alias (issue 22, item 12): langgraph-swarm,
langgraph-supervisor and LangChain 1.x's ``create_agent`` run on stategraph.

``data/langgraph_ecosystem.json`` is what the three apps of
``tools/langchain_boundary/ecosystem.py`` give on LangGraph 1.2.22 (recorded with
``python ecosystem.py`` in a venv with LangGraph; ids masked); the test runs them here,
through the alias, in a fresh interpreter (the alias changes ``sys.modules``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "langchain_boundary"
EXPECTED = Path(__file__).parent / "data" / "langgraph_ecosystem.json"

needs_ecosystem = pytest.mark.skipif(
    not all(
        importlib.util.find_spec(m)
        for m in ("langgraph_swarm", "langgraph_supervisor", "langchain")
    ),
    reason="langgraph-swarm, langgraph-supervisor and langchain are installed --no-deps by "
    "`make .venv-test-langchain/.installed`",
)


def _python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env,
    )


@needs_ecosystem
def test_swarm_supervisor_and_create_agent_give_langgraphs_results() -> None:
    done = subprocess.run(
        [sys.executable, str(TOOLS / "ecosystem.py"), "--alias"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout)
    expected = json.loads(EXPECTED.read_text())
    for app in ("swarm", "supervisor", "agent"):
        assert got[app] == expected[app], app
    # spot checks, so the recorded file cannot drift unnoticed
    swarm_turn_2 = got["swarm"]["states"][1]
    assert swarm_turn_2["active_agent"] == "Alice"
    assert swarm_turn_2["messages"][-1] == {"content": "5 + 7 = 12", "name": "Alice", "type": "ai"}
    assert got["swarm"]["active_agent_in_schema"] is True
    assert (
        got["supervisor"]["states"][0]["messages"][-1]["content"] == "Together: 231317 employees."
    )


def test_the_alias_resolves_langgraph_names_to_stategraph_modules() -> None:
    done = _python(
        """
        import stategraph.compat as compat
        compat.install_langgraph_alias()
        compat.install_langgraph_alias()  # idempotent
        import langgraph.graph, stategraph.graph
        from langgraph.prebuilt.chat_agent_executor import Prompt, StructuredResponseSchema
        from langgraph._internal._config import patch_configurable
        from langgraph._internal._runnable import RunnableCallable
        from langgraph._internal._typing import DeprecatedKwargs
        from langgraph.prebuilt import ToolCallTransformer
        from langgraph.types import omit_payload
        assert langgraph.graph is stategraph.graph
        assert langgraph.graph.StateGraph is stategraph.graph.StateGraph
        assert patch_configurable({"configurable": {"a": 1}}, {"b": 2}) == {"configurable": {"a": 1, "b": 2}}
        try:
            import langgraph.nope
        except ModuleNotFoundError as exc:
            print("missing:", exc)
        compat.uninstall_langgraph_alias()
        import sys
        assert not any(n == "langgraph" or n.startswith("langgraph.") for n in sys.modules)
        print("ok")
        """
    )
    assert done.returncode == 0, done.stderr
    assert "ok" in done.stdout
    assert (
        "missing: No module named 'langgraph.nope': the LangGraph alias maps it to " in done.stdout
    )


def test_the_alias_refuses_when_langgraph_itself_is_installed(tmp_path: Path) -> None:
    fake = tmp_path / "langgraph"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    done = _python(
        """
        import stategraph.compat as compat
        try:
            compat.install_langgraph_alias()
        except compat.LangGraphInstalledError as exc:
            print(exc)
        else:
            raise SystemExit("the alias did not refuse")
        import langgraph
        assert "stategraph" not in (langgraph.__file__ or "")
        assert not compat.alias_installed()
        """,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},  # a fake LangGraph is importable
    )
    assert done.returncode == 0, done.stderr
    assert "LangGraph itself is installed" in done.stdout
    assert "pip uninstall langgraph" in done.stdout


def test_runnable_callable_runs_the_async_twin_in_async_runs() -> None:
    from typing_extensions import TypedDict

    from stategraph.compat._langgraph_internal._runnable import RunnableCallable
    from stategraph.graph import START, StateGraph

    class State(TypedDict):
        seen: str

    def sync_node(state: State, config: dict) -> dict:
        return {"seen": f"sync:{config['configurable']['who']}"}

    async def async_node(state: State, config: dict) -> dict:
        return {"seen": f"async:{config['configurable']['who']}"}

    builder = StateGraph(State)
    builder.add_node("n", RunnableCallable(sync_node, async_node, trace=False))
    builder.add_edge(START, "n")
    graph = builder.compile()
    cfg = {"configurable": {"who": "me"}}
    import asyncio

    assert graph.invoke({"seen": ""}, cfg) == {"seen": "sync:me"}
    assert asyncio.run(graph.ainvoke({"seen": ""}, cfg)) == {"seen": "async:me"}
    assert RunnableCallable(sync_node).invoke({"seen": ""}, cfg) == {"seen": "sync:me"}
