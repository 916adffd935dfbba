"""Assertion helpers shared by the StateGraph builder tests."""

from typing import Any


def _key(chunk: Any) -> str:
    return repr(chunk)


def assert_steps(chunks: list[Any], steps: list[list[Any]]) -> None:
    """Assert ``chunks`` is exactly ``steps`` flattened, in step order.

    Chunks of tasks that ran in the same super-step may come in any order (the async
    API emits them as tasks finish), so each step is compared as a multiset while the
    order of the steps themselves is exact.
    """
    assert len(chunks) == sum(len(step) for step in steps), chunks
    position = 0
    for index, step in enumerate(steps):
        got = chunks[position : position + len(step)]
        assert sorted(map(_key, got)) == sorted(map(_key, step)), (index, got, step)
        position += len(step)
