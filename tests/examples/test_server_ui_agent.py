"""The agent behind ``examples/server/ui`` (the useStream page), run in process: it
streams its tokens, stops for approval before its tool, and answers from the result
(or the refusal). The page itself is tested in ``tests/server/test_ui_browser.py``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.types import Command

AGENT = Path(__file__).resolve().parents[2] / "examples" / "server" / "ui" / "chat_agent.py"


@pytest.fixture(scope="module")
def agent() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_server_ui_agent", AGENT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    module.TOKEN_DELAY = 0.0
    return module


def _texts(state: Any) -> list[tuple[str, Any]]:
    return [(type(m).__name__, m.content) for m in state.values["messages"]]


async def test_approved_the_tool_runs_and_the_answer_uses_it(agent: ModuleType) -> None:
    graph = agent.builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "approve"}}
    tokens = []
    async for message, _meta in graph.astream(
        {"messages": [("user", "What is the weather in Oslo?")]}, config, stream_mode="messages"
    ):
        tokens.append(message.content)
    assert "".join(tokens) == "Let me look up the weather in Oslo for you."
    assert len([t for t in tokens if t]) > 10  # one chunk per word or space
    paused = await graph.aget_state(config)
    (question,) = paused.interrupts
    assert question.value["question"] == "Call get_weather({'city': 'Oslo'})?"
    assert question.value["tool_call"]["args"] == {"city": "Oslo"}
    await graph.ainvoke(Command(resume={"approved": True}), config)
    done = await graph.aget_state(config)
    assert _texts(done)[2:] == [
        ("ToolMessage", "Oslo: snow, -3 °C"),
        ("AIMessage", "Here is today's forecast for Oslo: snow, -3 °C. Enjoy your day!"),
    ]
    assert done.next == ()


@pytest.mark.parametrize("answer", [{"approved": False}, "yes", False])
async def test_anything_but_an_approval_is_a_refusal(agent: ModuleType, answer: Any) -> None:
    graph = agent.builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": f"deny-{answer}"}}
    await graph.ainvoke({"messages": [("user", "weather in Lima?")]}, config)
    await graph.ainvoke(Command(resume=answer), config)
    done = await graph.aget_state(config)
    tool = done.values["messages"][2]
    assert (tool.status, tool.content) == ("error", "the user declined the call")
    assert done.values["messages"][-1].content == (
        "All right, I will not look it up (the user declined the call)."
    )


def test_the_city_defaults_to_paris(agent: ModuleType) -> None:
    assert agent._city("what's the weather like?") == "Paris"
    assert agent._city("How about Lima, then?") == "Lima"
    assert agent.get_weather("Atlantis") == "Atlantis: mild, 15 °C"
