"""The useStream example's agent (``examples/server/ui/chat_agent.py``) with
langchain-core loaded: ``add_messages`` then builds LangChain's message classes, and
the scripted model must still read the question and the tool's result (it once
checked stategraph's classes and answered for Paris whatever was asked)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("langchain_core")

from langchain_core.messages import HumanMessage, ToolMessage

AGENT = Path(__file__).resolve().parents[2] / "examples" / "server" / "ui" / "chat_agent.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_ui_agent_lc", AGENT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # the state schema's annotations resolve there
    spec.loader.exec_module(module)
    return module


def test_the_scripted_model_reads_langchain_messages() -> None:
    agent = _load()
    asked = agent._reply([HumanMessage("What is the weather in Lima?")])
    assert asked.content == "Let me look up the weather in Lima for you."
    assert asked.tool_calls[0]["args"] == {"city": "Lima"}
    answered = agent._reply([ToolMessage("Lima: cloudy, 17 °C", tool_call_id="c1")])
    assert answered.content == "Here is today's forecast for Lima: cloudy, 17 °C. Enjoy your day!"
    refused = agent._reply([ToolMessage("denied", tool_call_id="c1", status="error")])
    assert refused.content == "All right, I will not look it up (denied)."
