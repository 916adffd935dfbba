"""Bad lease settings are refused before the run starts, naming the setting."""

from __future__ import annotations

from typing import Any

import pytest
from lease_helpers import build, run_input

from stategraph.checkpoint.memory import InMemorySaver

CFG: dict[str, Any] = {"configurable": {"thread_id": "t"}}


@pytest.mark.parametrize("bad", ["queue", "REJECT", "", 1])
async def test_unknown_multitask_strategy(bad: Any) -> None:
    saver = InMemorySaver()
    app = build(saver, delay=0)
    for call in (
        lambda: app.invoke(run_input("m"), CFG, multitask_strategy=bad),
        lambda: list(app.stream(run_input("m"), CFG, multitask_strategy=bad)),
        lambda: app.invoke(run_input("m"), {**CFG, "multitask_strategy": bad}),
    ):
        with pytest.raises(ValueError, match=r"Unknown multitask_strategy.*enqueue"):
            call()
    with pytest.raises(ValueError, match="multitask_strategy"):
        await app.ainvoke(run_input("m"), CFG, multitask_strategy=bad)
    with pytest.raises(ValueError, match="multitask_strategy"):
        async for _ in app.astream(run_input("m"), CFG, multitask_strategy=bad):
            pass
    # nothing was saved, and no lease is left behind
    assert list(saver.list(None)) == []
    assert app.invoke(run_input("ok"), CFG)["log"] == ["ok", "a:ok", "b:ok"]


@pytest.mark.parametrize("bad", [0, -1, -0.5, float("inf"), float("nan"), "30", True, None])
async def test_lease_timeout_must_be_positive(bad: Any) -> None:
    saver = InMemorySaver()
    app = build(saver, delay=0)
    with pytest.raises(ValueError, match="lease_timeout"):
        app.invoke(run_input("m"), {**CFG, "lease_timeout": bad})
    with pytest.raises(ValueError, match="lease_timeout"):
        await app.ainvoke(run_input("m"), {**CFG, "lease_timeout": bad})
    assert list(saver.list(None)) == []


@pytest.mark.parametrize("bad", [-1, "10", True])
def test_enqueue_timeout_must_be_seconds(bad: Any) -> None:
    app = build(InMemorySaver(), delay=0)
    with pytest.raises(ValueError, match="enqueue_timeout"):
        app.invoke(run_input("m"), {**CFG, "enqueue_timeout": bad})


def test_settings_are_checked_without_a_checkpointer_too() -> None:
    app = build(None, delay=0)
    with pytest.raises(ValueError, match="Unknown multitask_strategy"):
        app.invoke(run_input("m"), multitask_strategy="later")
    assert app.invoke(run_input("m"), multitask_strategy="enqueue")["log"] == ["m", "a:m", "b:m"]


@pytest.mark.parametrize("bad", [0, -3, 2.0, "2", True])
async def test_max_concurrency_on_a_leased_thread(bad: Any) -> None:
    app = build(InMemorySaver(), delay=0)
    with pytest.raises(ValueError, match="max_concurrency must be a positive integer"):
        app.invoke(run_input("m"), {**CFG, "max_concurrency": bad})
    with pytest.raises(ValueError, match="max_concurrency must be a positive integer"):
        await app.ainvoke(run_input("m"), {**CFG, "max_concurrency": bad})
    assert app.invoke(run_input("ok"), CFG)["log"] == ["ok", "a:ok", "b:ok"]


def test_a_subgraph_with_a_checkpointer_of_its_own_runs_under_the_parent_lease() -> None:
    from lease_helpers import State

    from stategraph.graph import END, START, StateGraph

    inner = build(InMemorySaver(), delay=0)

    def call(state: State) -> dict[str, Any]:
        out = inner.invoke({"inbox": state["inbox"], "log": []})
        return {"log": [f"inner:{len(out['log'])}"]}

    builder = StateGraph(State)
    builder.add_node("call", call)
    builder.add_edge(START, "call")
    builder.add_edge("call", END)
    outer = builder.compile(checkpointer=InMemorySaver())
    assert outer.invoke(run_input("m"), CFG)["log"] == ["m", "inner:2"]
