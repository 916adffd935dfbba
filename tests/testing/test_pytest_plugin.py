"""The pytest plugin's fixtures, used from a test project run by pytest itself."""

from __future__ import annotations

import textwrap

import pytest

pytest_plugins = ["pytester"]

PROJECT_TEST = textwrap.dedent(
    """
    import operator
    from typing import Annotated
    from typing_extensions import TypedDict
    from stategraph.graph import START, StateGraph
    from stategraph.types import Command, interrupt

    class State(TypedDict):
        log: Annotated[list[str], operator.add]

    def build(saver):
        b = StateGraph(State)
        b.add_node("ask", lambda s: {"log": [interrupt("ok?")]})
        b.add_edge(START, "ask")
        return b.compile(checkpointer=saver)

    seen_threads = []

    def test_pause_and_resume(checkpointer, thread_config):
        graph = build(checkpointer)
        seen_threads.append(thread_config["configurable"]["thread_id"])
        assert "__interrupt__" in graph.invoke({"log": []}, thread_config)
        assert graph.invoke(Command(resume="yes"), thread_config) == {"log": ["yes"]}

    async def test_async_saver(async_checkpointer, thread_config):
        graph = build(async_checkpointer)
        await graph.ainvoke({"log": []}, thread_config)
        assert (await graph.ainvoke(Command(resume="y"), thread_config)) == {"log": ["y"]}

    def test_threads_are_fresh():
        assert len(set(seen_threads)) == 2

    def test_ids(deterministic_ids, thread_config):
        from stategraph.checkpoint.memory import InMemorySaver
        graph = build(InMemorySaver())
        graph.invoke({"log": []}, thread_config)
        assert graph.get_state(thread_config).created_at.startswith("2024-01-01T00:00:00")
    """
)


def test_fixtures_parametrise_savers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_project=PROJECT_TEST)
    pytester.makeini("[pytest]\nasyncio_mode = auto\n")
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["*6 passed*"])


STRICT_MODE_TEST = textwrap.dedent(
    """
    import pytest
    from stategraph.graph import START, StateGraph
    from typing_extensions import TypedDict

    class State(TypedDict):
        n: int

    @pytest.mark.asyncio
    async def test_async_saver_in_strict_mode(async_checkpointer, thread_config):
        b = StateGraph(State)
        b.add_node("inc", lambda s: {"n": s["n"] + 1})
        b.add_edge(START, "inc")
        graph = b.compile(checkpointer=async_checkpointer)
        assert await graph.ainvoke({"n": 1}, thread_config) == {"n": 2}
        assert (await graph.aget_state(thread_config)).values == {"n": 2}
    """
)


def test_async_saver_fixture_in_pytest_asyncio_strict_mode(pytester: pytest.Pytester) -> None:
    """pytest-asyncio's default mode runs only async fixtures declared with its own
    decorator: the plugin's async fixture must work there too (no ini setting)."""
    pytester.makepyfile(test_strict=STRICT_MODE_TEST)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    result = pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*[[]memory[]] PASSED*", "*[[]sqlite[]] PASSED*"])
