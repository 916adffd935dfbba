"""``stategraph serve`` / ``stategraph worker`` refuse bad set-ups before starting."""

from __future__ import annotations

from pathlib import Path

import pytest

from stategraph.cli._main import main

pytestmark = pytest.mark.server

APP = Path(__file__).resolve().parents[2] / "tools" / "server_differential" / "app" / "graphs.py"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve"], "No langgraph.json"),
        (["serve", "nope.py:graph"], "no such file"),
        (["serve", f"{APP}:nothing"], "has no attribute 'nothing'"),
        (["serve", f"{APP}:agent", "--host", "0.0.0.0"], "give --token"),
        (["serve", f"{APP}:agent", "--workers", "-1"], "--workers must be >= 0"),
        (["serve", f"{APP}:agent", "--config", "x.json"], "not both"),
        (["worker", f"{APP}:agent", "--concurrency", "0"], "--concurrency must be >= 1"),
    ],
)
def test_bad_setups_exit_2_with_a_message(
    argv: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert message in capsys.readouterr().err
