"""Typing of the functional API as a user writes it (checked, never run)."""

from __future__ import annotations

from typing import Any

from typing_extensions import assert_type

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.func import TaskFuture, entrypoint, task
from stategraph.pregel import Pregel
from stategraph.types import RetryPolicy


@task
def double(x: int) -> int:
    return x * 2


@task(retry_policy=RetryPolicy(max_attempts=3))
def shout(text: str, times: int = 1) -> str:
    return text.upper() * times


@task(name="fetch")
async def fetch(url: str) -> bytes:
    return url.encode()


@entrypoint(checkpointer=InMemorySaver())
def workflow(n: int, *, previous: int | None = None) -> entrypoint.final[int, int]:
    doubled = double(n)
    assert_type(doubled, TaskFuture[int])
    value: int = doubled.result()
    text = shout("a", times=2).result()
    assert_type(text, str)
    return entrypoint.final(value=value, save=value + (previous or 0))


assert_type(workflow, Pregel[Any, Any, Any, Any])


@entrypoint()
async def fetcher(url: str) -> bytes:
    data = await fetch(url)
    assert_type(data, bytes)
    return data


saved: entrypoint.final[str, list[int]] = entrypoint.final(value="done", save=[1, 2])
assert_type(saved.value, str)
assert_type(saved.save, list[int])
