"""examples/langchain_events_agent.py: a LangChain-model ReAct agent streamed through
astream_events prints each token once (issue 22, acceptance).

LangGraph 1.2.22 prints exactly EXPECTED (checked with the same file, importing
``create_react_agent`` from ``langgraph.prebuilt``). stategraph used to report every
LangChain model call and tool call twice in events v2 (issue 22 items 1 and 2), so the
tokens came twice; each call is now one run, nested under its node.
"""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langchain_events_agent.py"

EXPECTED = (
    "Let me check.\n"
    "[calling get_weather({'city': 'Oslo'})]\n"
    "It is sunny and 21 degrees in Oslo today.\n"
)


def _load() -> object:
    spec = importlib.util.spec_from_file_location("example_langchain_events_agent", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_example_runs_and_streams_the_answer() -> None:
    import asyncio

    out = io.StringIO()
    printed = asyncio.run(_load().stream_answer("What's the weather in Oslo?", out))  # type: ignore[attr-defined]
    assert printed == out.getvalue()
    assert "It" in printed and "Oslo" in printed and "[calling get_weather(" in printed


def test_each_token_is_printed_once_as_in_langgraph() -> None:
    import asyncio

    out = io.StringIO()
    printed = asyncio.run(_load().stream_answer("What's the weather in Oslo?", out))  # type: ignore[attr-defined]
    assert printed == EXPECTED
