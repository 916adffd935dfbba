"""``RetryPolicy``: intervals, attempts, jitter, ``retry_on`` forms and what is never retried."""

from __future__ import annotations

import asyncio
import operator
import sys
import time
from typing import Annotated, Any, TypedDict

import pytest

from stategraph.channels import LastValue, Topic
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.pregel import NodeBuilder, Pregel
from stategraph.types import RetryPolicy, default_retry_on, interrupt

# the same assertions on threads, a local Ray and a local Dask cluster
pytestmark = pytest.mark.executors

FAST = {"initial_interval": 0.001, "jitter": False}


class State(TypedDict):
    x: int
    log: Annotated[list[str], operator.add]


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record the retry waits instead of sleeping (both shells)."""
    recorded: list[float] = []
    real_sleep = time.sleep
    real_async_sleep = asyncio.sleep

    def by_the_runtime() -> bool:
        # only the shells' waits (a Ray or Dask client sleeps in its own threads too)
        caller = sys._getframe(2).f_globals.get("__name__", "")
        return str(caller).startswith("stategraph.")

    def fake_sleep(delay: float) -> None:
        if by_the_runtime():
            recorded.append(delay)
        else:
            real_sleep(delay)

    async def fake_async_sleep(delay: float, *args: Any, **kwargs: Any) -> Any:
        if by_the_runtime():
            recorded.append(delay)
            return await real_async_sleep(0)
        return await real_async_sleep(delay, *args, **kwargs)

    monkeypatch.setattr(time, "sleep", fake_sleep)
    monkeypatch.setattr(asyncio, "sleep", fake_async_sleep)
    return recorded


def _graph(node: Any, policy: Any, *, checkpointer: Any = None) -> Any:
    g = StateGraph(State)
    g.add_node("flaky", node, retry_policy=policy)
    g.add_edge(START, "flaky")
    return g.compile(checkpointer=checkpointer)


def _always(exc: BaseException, calls: list[int]) -> Any:
    def node(s: State) -> dict[str, Any]:
        calls.append(1)
        raise exc

    return node


def _fails_then_succeeds(failures: int, exc: type[Exception], calls: list[int]) -> Any:
    def node(s: State) -> dict[str, Any]:
        calls.append(1)
        if len(calls) <= failures:
            raise exc(f"attempt {len(calls)}")
        return {"x": len(calls), "log": [f"attempt {len(calls)}"]}

    return node


# --------------------------------------------------------------------------- default_retry_on


@pytest.mark.parametrize(
    "exc",
    [
        ValueError(),
        TypeError(),
        ArithmeticError(),
        ZeroDivisionError(),
        ImportError(),
        ModuleNotFoundError(),
        LookupError(),
        KeyError(),
        IndexError(),
        NameError(),
        SyntaxError(),
        RuntimeError(),
        NotImplementedError(),
        ReferenceError(),
        StopIteration(),
        StopAsyncIteration(),
        OSError(),
        FileNotFoundError(),
        TimeoutError(),
    ],
)
def test_default_retry_on_does_not_retry_programming_errors(exc: Exception) -> None:
    assert default_retry_on(exc) is False


@pytest.mark.parametrize(
    "exc",
    [
        ConnectionError(),
        ConnectionResetError(),
        BrokenPipeError(),
        Exception(),
        type("Custom", (Exception,), {})(),
    ],
)
def test_default_retry_on_retries_connection_and_unknown_errors(exc: Exception) -> None:
    assert default_retry_on(exc) is True


def test_retry_policy_defaults() -> None:
    policy = RetryPolicy()
    assert policy.initial_interval == 0.5
    assert policy.backoff_factor == 2.0
    assert policy.max_interval == 128.0
    assert policy.max_attempts == 3
    assert policy.jitter is True
    assert policy.retry_on is default_retry_on


# --------------------------------------------------------------------------- attempts and waits


def test_max_attempts_counts_the_first_try(runner: Any, sleeps: list[float]) -> None:
    calls: list[int] = runner.log()
    app = _graph(_always(ConnectionError("down"), calls), RetryPolicy(max_attempts=3, **FAST))
    with pytest.raises(ConnectionError, match="down"):
        runner.invoke(app, {"x": 0})
    assert len(calls) == 3
    assert sleeps == [0.001, 0.002]


def test_max_attempts_one_means_no_retry(runner: Any, sleeps: list[float]) -> None:
    calls: list[int] = runner.log()
    app = _graph(_always(ConnectionError("down"), calls), RetryPolicy(max_attempts=1, **FAST))
    with pytest.raises(ConnectionError):
        runner.invoke(app, {"x": 0})
    assert len(calls) == 1
    assert sleeps == []


def test_backoff_and_max_interval(runner: Any, sleeps: list[float]) -> None:
    calls: list[int] = runner.log()
    policy = RetryPolicy(
        initial_interval=1.0, backoff_factor=3.0, max_interval=5.0, max_attempts=5, jitter=False
    )
    app = _graph(_always(ConnectionError("down"), calls), policy)
    with pytest.raises(ConnectionError):
        runner.invoke(app, {"x": 0})
    assert len(calls) == 5
    assert sleeps == [1.0, 3.0, 5.0, 5.0]


def test_jitter_adds_up_to_one_second(runner: Any, sleeps: list[float]) -> None:
    calls: list[int] = runner.log()
    policy = RetryPolicy(initial_interval=1.0, backoff_factor=2.0, max_attempts=6, jitter=True)
    app = _graph(_always(ConnectionError("down"), calls), policy)
    with pytest.raises(ConnectionError):
        runner.invoke(app, {"x": 0})
    base = [1.0, 2.0, 4.0, 8.0, 16.0]
    assert len(sleeps) == 5
    for waited, interval in zip(sleeps, base, strict=True):
        assert interval <= waited <= interval + 1.0
    assert sleeps != base


def test_success_after_retries_keeps_only_the_good_attempt(
    runner: Any, sleeps: list[float]
) -> None:
    calls: list[int] = runner.log()
    app = _graph(
        _fails_then_succeeds(2, ConnectionError, calls), RetryPolicy(max_attempts=3, **FAST)
    )
    assert runner.invoke(app, {"x": 0, "log": []}) == {"x": 3, "log": ["attempt 3"]}
    assert len(calls) == 3


def test_writes_of_a_failed_attempt_are_discarded(runner: Any, sleeps: list[float]) -> None:
    # the first writer succeeds, the second raises: the partial write must not survive
    attempts: list[int] = runner.log()

    def node(x: int) -> int:
        attempts.append(1)
        return len(attempts)

    def picky(out: int) -> int:
        if out < 3:
            raise ConnectionError("flaky")
        return out * 10

    builder = (
        NodeBuilder()
        .subscribe_only("a")
        .do(node)
        .write_to("b", c=picky)
        .add_retry_policies(RetryPolicy(**FAST))
    )
    app = Pregel(
        nodes={"n": builder},
        channels={"a": LastValue(int), "b": Topic(int, accumulate=True), "c": LastValue(int)},
        input_channels="a",
        output_channels=["b", "c"],
    )
    assert runner.invoke(app, 1) == {"b": [3], "c": 30}
    assert len(attempts) == 3


def test_graph_level_retry_policy_applies_to_nodes_without_one(
    runner: Any, sleeps: list[float]
) -> None:
    attempts: list[int] = runner.log()

    def node(x: int) -> int:
        attempts.append(1)
        if len(attempts) < 4:
            raise ConnectionError("flaky")
        return len(attempts)

    app = Pregel(
        nodes={"n": NodeBuilder().subscribe_only("a").do(node).write_to("b")},
        channels={"a": LastValue(int), "b": LastValue(int)},
        input_channels="a",
        output_channels="b",
        retry_policy=RetryPolicy(max_attempts=4, **FAST),
    )
    assert runner.invoke(app, 1) == 4
    assert len(sleeps) == 3


# --------------------------------------------------------------------------- retry_on forms


def test_default_policy_does_not_retry_value_error(runner: Any, sleeps: list[float]) -> None:
    calls: list[int] = runner.log()
    app = _graph(_always(ValueError("bad"), calls), RetryPolicy(max_attempts=4, **FAST))
    with pytest.raises(ValueError, match="bad"):
        runner.invoke(app, {"x": 0})
    assert len(calls) == 1
    assert sleeps == []


def test_retry_on_exception_class(runner: Any, sleeps: list[float]) -> None:
    calls: list[int] = runner.log()
    policy = RetryPolicy(retry_on=KeyError, max_attempts=5, **FAST)
    app = _graph(_fails_then_succeeds(3, KeyError, calls), policy)
    assert runner.invoke(app, {"x": 0, "log": []})["x"] == 4
    calls.clear()
    app = _graph(_always(ValueError("other"), calls), policy)
    with pytest.raises(ValueError):
        runner.invoke(app, {"x": 0})
    assert len(calls) == 1


def test_retry_on_tuple_of_classes(runner: Any, sleeps: list[float]) -> None:
    calls: list[int] = runner.log()
    policy = RetryPolicy(retry_on=(KeyError, ValueError), max_attempts=3, **FAST)
    app = _graph(_always(ValueError("v"), calls), policy)
    with pytest.raises(ValueError):
        runner.invoke(app, {"x": 0})
    assert len(calls) == 3
    calls.clear()
    app = _graph(_always(TypeError("t"), calls), policy)
    with pytest.raises(TypeError):
        runner.invoke(app, {"x": 0})
    assert len(calls) == 1


def test_retry_on_predicate(runner: Any, sleeps: list[float]) -> None:
    calls: list[int] = runner.log()

    def node(s: State) -> dict[str, Any]:
        calls.append(1)
        raise ValueError("retry-me" if len(calls) < 3 else "stop")

    policy = RetryPolicy(retry_on=lambda e: "retry-me" in str(e), max_attempts=10, **FAST)
    with pytest.raises(ValueError, match="stop"):
        runner.invoke(_graph(node, policy), {"x": 0})
    assert len(calls) == 3


def test_first_matching_policy_of_a_list_decides(runner: Any, sleeps: list[float]) -> None:
    calls: list[int] = runner.log()
    policies = [
        RetryPolicy(retry_on=KeyError, max_attempts=2, **FAST),
        RetryPolicy(retry_on=ValueError, max_attempts=4, **FAST),
        RetryPolicy(retry_on=ValueError, max_attempts=7, **FAST),
    ]
    with pytest.raises(ValueError):
        runner.invoke(_graph(_always(ValueError("v"), calls), policies), {"x": 0})
    assert len(calls) == 4
    calls.clear()
    with pytest.raises(KeyError):
        runner.invoke(_graph(_always(KeyError("k"), calls), policies), {"x": 0})
    assert len(calls) == 2
    calls.clear()
    with pytest.raises(TypeError):
        runner.invoke(_graph(_always(TypeError("t"), calls), policies), {"x": 0})
    assert len(calls) == 1


def test_async_node_is_retried(sleeps: list[float]) -> None:
    calls: list[int] = []

    async def node(s: State) -> dict[str, Any]:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("down")
        return {"x": len(calls)}

    app = _graph(node, RetryPolicy(**FAST))
    assert asyncio.run(app.ainvoke({"x": 0})) == {"x": 3, "log": []}
    assert sleeps == [0.001, 0.002]


# --------------------------------------------------------------------------- control flow


def test_interrupt_is_never_retried(runner: Any, sleeps: list[float]) -> None:
    calls: list[int] = runner.log()

    def asks(s: State) -> dict[str, Any]:
        calls.append(1)
        interrupt("question")
        return {"x": 1}

    policy = RetryPolicy(retry_on=lambda e: True, max_attempts=5, **FAST)
    app = _graph(asks, policy, checkpointer=InMemorySaver())
    out = runner.invoke(app, {"x": 0}, {"configurable": {"thread_id": "t"}})
    assert [i.value for i in out["__interrupt__"]] == ["question"]
    assert len(calls) == 1
    assert sleeps == []
