"""The README demo (examples/approval.py) runs end to end in two processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_approval_demo_pauses_then_resumes_in_another_process() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "approval.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    paused_text, resumed_text = out.split("Resumed in a separate process, approved:")
    paused = json.loads(paused_text.split("Paused, waiting for review:")[1])
    resumed = json.loads(resumed_text)
    assert paused["next"] == ["review"]
    assert paused["pending_request"] == {
        "request_id": "r1",
        "candidate": {"action": "add", "person": "Alice"},
    }
    assert resumed["status"] == "submitted"
    assert resumed["receipt"] == "DEMO-r1"
    assert resumed["next"] == []
    assert resumed["pid"] != paused["pid"]


def test_streaming_chat_example_prints_tokens_for_both_models() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "streaming_chat.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    fake, rest = out.split("== ChatOpenAI")
    for section in (fake, rest):
        assert "[agent] Let me check the weather.(calling get_weather)" in section
        assert "[tools] It is sunny and 21 degrees in Oslo." in section
        assert "[agent] Good news: it is sunny and 21 degrees in Oslo today." in section
    assert out.count("final answer: Good news: it is sunny and 21 degrees in Oslo today.") == 2


def test_streaming_chat_example_streams_one_token_per_chunk() -> None:
    """The example's models really stream: the reply arrives as many chunks."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "streaming_chat", ROOT / "examples" / "streaming_chat.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from stategraph.messages import AIMessageChunk
    from stategraph.prebuilt import create_react_agent
    from stategraph.testing import FakeChatModel

    agent = create_react_agent(FakeChatModel(module.SCRIPT), [module.get_weather])
    chunks = [
        m
        for m, meta in agent.stream({"messages": [("user", "?")]}, stream_mode="messages")
        if isinstance(m, AIMessageChunk) and meta["langgraph_node"] == "agent"
    ]
    assert len(chunks) > 20
