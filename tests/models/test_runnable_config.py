"""RunnableConfig: the typed config dict, accepted wherever a config is."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from stategraph.config import RunnableConfig, get_config
from stategraph.graph import START, StateGraph
from stategraph.graph.message import MessagesState
from stategraph.testing import FakeChatModel


def test_a_runnable_config_runs_graphs_nodes_and_models() -> None:
    seen: list[Any] = []

    def node(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        seen.append((config["configurable"]["user"], get_config()["metadata"]["origin"]))
        return {"messages": [model.invoke(state["messages"], config)]}

    model = FakeChatModel(["hi"])
    builder = StateGraph(MessagesState)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    config: RunnableConfig = {
        "configurable": {"user": "ann"},
        "metadata": {"origin": "test"},
        "tags": ["t"],
        "recursion_limit": 5,
    }
    out = builder.compile().invoke({"messages": [("user", "q")]}, config)
    assert out["messages"][-1].content == "hi"
    assert seen == [("ann", "test")]
    assert RunnableConfig.__optional_keys__ >= {"configurable", "tags", "metadata", "callbacks"}


@pytest.mark.slow
def test_mypy_accepts_a_runnable_config_where_configs_go(tmp_path: Any) -> None:
    source = tmp_path / "typed.py"
    source.write_text(
        "from stategraph.config import RunnableConfig\n"
        "from stategraph.graph import START, StateGraph\n"
        "from stategraph.graph.message import MessagesState\n"
        "def node(state: MessagesState, config: RunnableConfig) -> dict:\n"
        "    return {}\n"
        "builder: StateGraph = StateGraph(MessagesState)\n"
        "builder.add_node('n', node)\n"
        "builder.add_edge(START, 'n')\n"
        "graph = builder.compile()\n"
        "cfg: RunnableConfig = {'configurable': {'thread_id': '1'}}\n"
        "graph.invoke({'messages': []}, cfg)\n"
        "for _ in graph.stream({'messages': []}, cfg): pass\n"
        "graph.with_config(cfg)\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--ignore-missing-imports", "--no-incremental", str(source)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
