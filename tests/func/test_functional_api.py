"""The functional API: @entrypoint workflows and @task calls, sync and async."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.func import entrypoint, task
from stategraph.types import Command, RetryPolicy, interrupt


def _cfg(tid: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": tid}}


def test_entrypoint_with_tasks_interrupt_and_resume_does_not_rerun_tasks() -> None:
    calls = {"essay": 0, "title": 0}

    @task
    def write_essay(topic: str) -> str:
        calls["essay"] += 1
        return f"An essay about {topic}"

    @task()
    def make_title(topic: str) -> str:
        calls["title"] += 1
        return topic.title()

    @entrypoint(checkpointer=InMemorySaver())
    def workflow(topic: str) -> dict[str, Any]:
        essay = write_essay(topic)
        title = make_title(topic)
        approved = interrupt({"essay": essay.result(), "title": title.result()})
        return {"essay": essay.result(), "title": title.result(), "approved": approved}

    paused = workflow.invoke("cats", _cfg("1"))
    assert list(paused) == ["__interrupt__"]
    assert paused["__interrupt__"][0].value == {"essay": "An essay about cats", "title": "Cats"}
    final = workflow.invoke(Command(resume=True), _cfg("1"))
    assert final == {"essay": "An essay about cats", "title": "Cats", "approved": True}
    assert calls == {"essay": 1, "title": 1}


def test_stream_shows_task_results_and_the_interrupt() -> None:
    @task
    def double(x: int) -> int:
        return x * 2

    @entrypoint(checkpointer=InMemorySaver())
    def workflow(x: int) -> int:
        y = double(x).result()
        return int(interrupt(y)) + y

    chunks = list(workflow.stream(4, _cfg("s")))
    assert chunks[0] == {"double": 8}
    assert chunks[1]["__interrupt__"][0].value == 8
    assert list(workflow.stream(Command(resume="1"), _cfg("s"))) == [{"workflow": 9}]


def test_previous_and_final_across_runs_of_a_thread() -> None:
    @entrypoint(checkpointer=InMemorySaver())
    def counter(n: int, *, previous: Any = None) -> Any:
        total = (previous or 0) + n
        return entrypoint.final(value=f"total={total}", save=total)

    assert counter.invoke(1, _cfg("c")) == "total=1"
    assert counter.invoke(5, _cfg("c")) == "total=6"
    assert counter.invoke(10, _cfg("other")) == "total=10"
    assert counter.get_state(_cfg("c")).values == "total=6"


def test_entrypoint_receives_config_writer_and_store() -> None:
    from stategraph.store.memory import InMemoryStore

    store = InMemoryStore()
    store.put(("prefs",), "u", {"lang": "fr"})

    @entrypoint(store=store)
    def workflow(x: str, *, config: Any, writer: Any, store: Any) -> str:
        writer({"progress": x})
        return (
            f"{x}:{config['configurable']['thread_id']}:{store.get(('prefs',), 'u').value['lang']}"
        )

    out = list(workflow.stream("hi", _cfg("w"), stream_mode=["custom", "values"]))
    assert out == [("custom", {"progress": "hi"}), ("values", "hi:w:fr")]


def test_task_retry_policy() -> None:
    attempts = {"n": 0}

    @task(retry_policy=RetryPolicy(initial_interval=0.001, jitter=False, max_attempts=3))
    def flaky() -> str:
        attempts["n"] += 1
        if attempts["n"] < 3:
            raise ConnectionError("temporary")
        return "ok"

    @entrypoint()
    def workflow(_: Any) -> str:
        return flaky().result()

    assert workflow.invoke(1) == "ok"
    assert attempts["n"] == 3


def test_failed_workflow_resumes_without_rerunning_finished_tasks() -> None:
    calls = {"a": 0, "fail": 0}

    @task
    def step_a() -> str:
        calls["a"] += 1
        return "A"

    @entrypoint(checkpointer=InMemorySaver())
    def workflow(_: int) -> str:
        a = step_a().result()
        calls["fail"] += 1
        if calls["fail"] == 1:
            raise ValueError("boom")
        return a + "!"

    with pytest.raises(ValueError, match="boom"):
        workflow.invoke(1, _cfg("f"))
    assert workflow.invoke(None, _cfg("f")) == "A!"
    assert calls == {"a": 1, "fail": 2}


def test_task_outside_a_graph_is_a_clear_error() -> None:
    @task
    def lonely() -> int:
        return 1

    with pytest.raises(RuntimeError, match="outside a running graph"):
        lonely()


def test_entrypoint_needs_one_input_parameter() -> None:
    with pytest.raises(ValueError, match="exactly one positional input"):

        @entrypoint()
        def bad(a: int, b: int) -> int:
            return a + b


async def test_async_entrypoint_with_async_and_sync_tasks() -> None:
    @task
    async def add_one(x: int) -> int:
        await asyncio.sleep(0)
        return x + 1

    @task
    def square(x: int) -> int:
        return x * x

    @entrypoint(checkpointer=InMemorySaver())
    async def workflow(n: int) -> list[int]:
        ones = [add_one(i) for i in range(n)]
        squares = [square(i) for i in range(n)]
        return [await f for f in ones] + [await f for f in squares]

    assert await workflow.ainvoke(3, _cfg("a")) == [1, 2, 3, 0, 1, 4]


async def test_async_interrupt_and_resume_reuses_task_results() -> None:
    calls = {"n": 0}

    @task
    async def fetch(x: int) -> int:
        calls["n"] += 1
        return x * 10

    @entrypoint(checkpointer=InMemorySaver())
    async def workflow(x: int) -> dict[str, Any]:
        value = await fetch(x)
        answer = interrupt(f"ok {value}?")
        return {"value": value, "answer": answer}

    paused = await workflow.ainvoke(2, _cfg("ar"))
    assert paused["__interrupt__"][0].value == "ok 20?"
    assert await workflow.ainvoke(Command(resume="yes"), _cfg("ar")) == {
        "value": 20,
        "answer": "yes",
    }
    assert calls["n"] == 1
