"""The typing corpus (tests/typing_corpus) under mypy --strict, and pyright when installed.

`make typing` runs the same checks; running them here as well makes a typing regression
fail the test suite too.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "typing_corpus"

pytestmark = pytest.mark.slow


def mypy(*paths: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy")
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *paths],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_corpus_passes_mypy_strict() -> None:
    proc = mypy(str(CORPUS))
    assert proc.returncode == 0, proc.stdout
    files = len(list(CORPUS.glob("*.py")))
    assert f"Success: no issues found in {files} source files" in proc.stdout


def test_mypy_strict_catches_a_wrong_type(tmp_path: Path) -> None:
    """The corpus is not vacuous: the same checks reject code that is wrong."""
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        textwrap.dedent(
            """
            from typing_extensions import TypedDict, assert_type
            from stategraph.func import entrypoint, task
            from stategraph.graph import StateGraph

            class State(TypedDict):
                n: int

            @task
            def double(x: int) -> int:
                return x * 2

            saved: entrypoint.final[str, int] = entrypoint.final(value="v", save=1)
            number: int = saved.value
            assert_type(double(1), int)
            assert_type(StateGraph(State), StateGraph[State, int, State, State])
            """
        )
    )
    proc = mypy(str(wrong), cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.count("error:") == 3, proc.stdout


def test_corpus_passes_pyright_strict() -> None:
    pyright = shutil.which("pyright", path=str(Path(sys.executable).parent))
    if pyright is None:
        pytest.skip("pyright is not installed (the dev extra has it)")
    proc = subprocess.run(
        [pyright, "--pythonpath", sys.executable],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout
    assert "0 errors" in proc.stdout
