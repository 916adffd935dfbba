"""What ``checkpoints``/``debug`` payloads say about a checkpoint's unfinished tasks, and
the ``tasks`` result of an entrypoint stopped by ``interrupt``.

Checked black-box against LangGraph 1.2: when a run starts from a checkpoint whose
step was cut short, the first checkpoint payload shows, per task, the saved error, or
the pending interrupts and the result of a task that already finished.
"""

from __future__ import annotations

import operator
import threading
import time
from typing import Annotated, Any, TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.func import entrypoint, task
from stategraph.graph import START, StateGraph
from stategraph.types import Command, interrupt


class Bag(TypedDict):
    items: Annotated[list[str], operator.add]


def _two_branches(second: Any, steady_done: threading.Event | None = None) -> Any:
    def steady(s: Bag) -> dict[str, Any]:
        if steady_done is not None:
            steady_done.set()
        return {"items": ["steady"]}

    g = StateGraph(Bag)
    g.add_node("steady", steady)
    g.add_node("second", second)
    g.add_edge(START, "steady")
    g.add_edge(START, "second")
    return g.compile(checkpointer=InMemorySaver())


def _by_name(payload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in payload["tasks"]}


def test_resumed_checkpoint_shows_pending_interrupt_and_finished_sibling(runner: Any) -> None:
    app = _two_branches(lambda s: {"items": [interrupt("which?")]})
    cfg = {"configurable": {"thread_id": "pending-interrupt"}}
    runner.stream(app, {"items": []}, cfg)
    first = runner.stream(app, Command(resume="blue"), cfg, stream_mode="checkpoints")[0]
    tasks = _by_name(first)
    asked = tasks["second"]
    assert [i["value"] for i in asked["interrupts"]] == ["which?"]
    assert asked["interrupts"][0]["id"] and asked["interrupts"][0]["response_schema"] is None
    assert "result" not in asked and "error" not in asked
    assert tasks["steady"]["interrupts"] == ()
    assert tasks["steady"]["result"] == {"items": ["steady"]}
    assert sorted(runner.get_state(app, cfg).values["items"]) == ["blue", "steady"]


def test_resumed_checkpoint_shows_the_saved_error(runner: Any) -> None:
    failing = {"on": True}
    steady_done = threading.Event()

    def flaky(s: Bag) -> dict[str, Any]:
        if failing["on"]:
            # fail only once the sibling has finished: an error cancels the tasks still
            # running, and this test is about the result of one that already finished
            steady_done.wait(timeout=5)
            time.sleep(0.1)  # let the sibling's return reach the runner
            raise KeyError("gone")
        return {"items": ["flaky"]}

    app = _two_branches(flaky, steady_done)
    cfg = {"configurable": {"thread_id": "pending-error"}}
    try:
        runner.stream(app, {"items": []}, cfg)
    except KeyError:
        pass
    else:  # pragma: no cover - the node must fail on the first run
        raise AssertionError("the first run should fail")
    failing["on"] = False
    first = runner.stream(app, None, cfg, stream_mode="checkpoints")[0]
    failed = _by_name(first)["second"]
    assert failed["error"] == "KeyError('gone')"
    assert "interrupts" not in failed and "result" not in failed
    assert _by_name(first)["steady"]["result"] == {"items": ["steady"]}


def test_fresh_checkpoints_have_no_pending_details(runner: Any) -> None:
    app = _two_branches(lambda s: {"items": ["second"]})
    cfg = {"configurable": {"thread_id": "fresh"}}
    for payload in runner.stream(app, {"items": []}, cfg, stream_mode="checkpoints"):
        for entry in payload["tasks"]:
            assert entry["interrupts"] == () and "result" not in entry and "error" not in entry


def test_interrupted_entrypoint_task_result_is_empty(runner: Any) -> None:
    @task
    def nothing() -> bool:
        return False

    @entrypoint(checkpointer=InMemorySaver())
    def flow(inputs: dict[str, Any]) -> None:
        nothing().result()
        interrupt("go on?")

    cfg = {"configurable": {"thread_id": "flow"}}
    first = runner.stream(flow, {"n": 1}, cfg, stream_mode="tasks")
    results = {p["name"]: p for p in first if "result" in p}
    # the task's False return is a real result; the paused entrypoint returned nothing
    assert results["nothing"]["result"] == {"__return__": False}
    assert results["flow"]["result"] == {}
    assert [i["value"] for i in results["flow"]["interrupts"]] == ["go on?"]
    again = runner.stream(flow, Command(resume=True), cfg, stream_mode="tasks")
    done = [p for p in again if p["name"] == "flow" and "result" in p]
    # finishing, it returns None: that is a written value, shown under the output key
    assert done[-1]["result"] == {"__end__": None}
