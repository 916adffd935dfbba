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
