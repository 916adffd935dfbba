"""The "Testing your graph" guide: its code blocks, in order, are a test module that
passes under pytest with the plugin's fixtures."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stategraph.testing import assert_path, trace_path

pytest_plugins = ["pytester"]

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def test_the_guide_is_a_passing_test_module(pytester: pytest.Pytester) -> None:
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    pytester.makepyfile(test_guide="\n\n".join(blocks))
    result = pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)  # pause_and_resume runs on both savers
    result.stdout.fnmatch_lines(
        ["*test_pause_and_resume[[]memory[]] PASSED*", "*test_pause_and_resume[[]sqlite[]] PASSED*"]
    )


def test_the_failure_message_shown_is_the_real_one() -> None:
    namespace: dict[str, object] = {}
    first = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)[0]
    exec(compile(first, "testing.md", "exec", dont_inherit=True), namespace)
    build_research = namespace["build_research"]
    path = trace_path(build_research().compile(), {"question": "hi", "notes": []})  # type: ignore[operator]
    with pytest.raises(AssertionError) as info:
        assert_path(path, ["plan", "search", "write"])
    shown = GUIDE.read_text().split("A failure reads:\n\n```\n", 1)[1].split("```", 1)[0]
    assert str(info.value).strip() == shown.strip().removeprefix("AssertionError: ")
