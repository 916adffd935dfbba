"""Random StateGraph programs whose LangGraph 1.2.24 observations were recorded.

``recorded_programs.json`` was written by ``tools/differential/record.py``: for each
generated program (a spec, see ``tools/differential/graphs.py``) it holds what
LangGraph 1.2.24 returned, streamed, saved and executed in every run mode. Here the
same programs run on stategraph and must give the same observations, compared the way
the differential fuzzer compares them (lists of parallel writes as multisets, known and
classified differences masked; see ``tools/differential/compare.py``).
"""

from __future__ import annotations

import json
import signal
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

TOOLS = Path(__file__).resolve().parents[2] / "tools" / "differential"
sys.path.insert(0, str(TOOLS))

from compare import compare  # noqa: E402
from graphs import namespace  # noqa: E402
from worker import _alarm, run_spec  # noqa: E402

RECORDED = json.loads((Path(__file__).parent / "recorded_programs.json").read_text())
PROGRAMS = RECORDED["programs"]


@pytest.fixture(scope="module")
def ns() -> Any:
    return namespace("stategraph")


def test_recording_is_from_langgraph_1_2_24() -> None:
    assert RECORDED["langgraph"] == "1.2.24"
    assert len(PROGRAMS) >= 40


@pytest.mark.parametrize("entry", PROGRAMS, ids=[f"seed{p['seed']}" for p in PROGRAMS])
def test_program_matches_langgraph(entry: dict, ns: Any) -> None:
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = run_spec(entry["spec"], ns, timeout=10.0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert compare(entry["langgraph"], got, entry["spec"]) == []
