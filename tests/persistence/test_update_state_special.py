"""The special ``as_node`` values of ``update_state`` / ``bulk_update_state``.

``"__input__"`` saves the values as a new input checkpoint, ``"__copy__"`` forks a
checkpoint as a sibling (``source="fork"``, optionally applying a list of updates to
the copy), and ``"__end__"`` with no values ends the tasks still to run. Expected
values were checked against LangGraph 1.2 as a black box.
"""

from __future__ import annotations

from typing import Any

import pytest
from persistence_helpers import Harness, Runs, cfg, chain_builder, cp_id, shape

from stategraph.errors import InvalidUpdateError
from stategraph.types import StateUpdate

FIRST_CHAIN = {"log": ["in"], "last": "in"}
DONE = {"log": ["in", "a", "b", "c"], "last": "c"}


def _paused_before_b(h: Harness, runs: Runs | None = None) -> Any:
    graph = chain_builder(runs or Runs()).compile(checkpointer=h.saver, interrupt_before=["b"])
    h.invoke(graph, FIRST_CHAIN, cfg("t"), durability="sync")
    assert h.get_state(graph, cfg("t")).next == ("b",)
    return graph


def test_end_with_no_values_ends_the_pending_tasks(h: Harness) -> None:
    runs = Runs()
    graph = _paused_before_b(h, runs)
    h.update_state(graph, cfg("t"), None, as_node="__end__")
    snap = h.get_state(graph, cfg("t"))
    assert snap.next == ()
    assert snap.values == {"log": ["in", "a"], "last": "a"}
    assert snap.metadata == {"source": "update", "step": 2, "parents": {}}
    # nothing is left to run
    runs.clear()
    assert h.invoke(graph, None, cfg("t"), durability="sync") == {
        "log": ["in", "a"],
        "last": "a",
    }
    assert runs.order == []


def test_input_update_saves_a_new_input_checkpoint(h: Harness) -> None:
    runs = Runs()
    graph = chain_builder(runs).compile(checkpointer=h.saver)
    h.invoke(graph, FIRST_CHAIN, cfg("t"), durability="sync")
    h.update_state(graph, cfg("t"), {"log": ["again"], "last": "again"}, as_node="__input__")
    snap = h.get_state(graph, cfg("t"))
    assert snap.next == ("__start__",)
    assert snap.metadata == {"source": "input", "step": 4, "parents": {}}
    # the input reaches the state when the run continues, as a new input would
    runs.clear()
    out = h.invoke(graph, None, cfg("t"), durability="sync")
    assert out == {"log": ["in", "a", "b", "c", "again", "a", "b", "c"], "last": "c"}
    assert runs.order == ["a", "b", "c"]


def test_input_update_on_a_new_thread_is_step_minus_one(h: Harness) -> None:
    graph = chain_builder(Runs()).compile(checkpointer=h.saver)
    h.update_state(graph, cfg("new"), {"log": ["s"]}, as_node="__input__")
    snap = h.get_state(graph, cfg("new"))
    assert snap.metadata == {"source": "input", "step": -1, "parents": {}}
    assert h.invoke(graph, None, cfg("new"), durability="sync") == {
        "log": ["s", "a", "b", "c"],
        "last": "c",
    }


def test_copy_forks_a_sibling_of_the_checkpoint(h: Harness) -> None:
    runs = Runs()
    graph = chain_builder(runs).compile(checkpointer=h.saver)
    h.invoke(graph, FIRST_CHAIN, cfg("t"), durability="sync")
    original = h.history(graph, cfg("t"))
    at_b = original[2]  # step 1, next=("b",)
    assert at_b.next == ("b",)
    copy_cfg = h.update_state(graph, at_b.config, None, as_node="__copy__")
    copy = h.get_state(graph, copy_cfg)
    assert cp_id(copy_cfg) != cp_id(at_b.config)
    assert copy.values == at_b.values
    assert copy.next == ("b",)
    assert copy.metadata == {"source": "fork", "step": 2, "parents": {}}
    # a sibling: same parent as the checkpoint copied
    assert copy.parent_config == at_b.parent_config
    runs.clear()
    assert h.invoke(graph, None, copy_cfg, durability="sync") == DONE
    assert runs.order == ["b", "c"]


def test_copy_with_updates_applies_them_to_the_copy_as_the_pending_task(h: Harness) -> None:
    graph = chain_builder(Runs()).compile(checkpointer=h.saver)
    h.invoke(graph, FIRST_CHAIN, cfg("t"), durability="sync")
    at_b = h.history(graph, cfg("t"))[2]
    new_cfg = h.update_state(
        graph, at_b.config, [StateUpdate({"log": ["B*"], "last": "B*"}, "b")], as_node="__copy__"
    )
    history = h.history(graph, cfg("t"))
    assert history[0].config == new_cfg
    assert shape(history[:2]) == [("update", 3, ("c",)), ("fork", 2, ("b",))]
    assert history[0].values == {"log": ["in", "a", "B*"], "last": "B*"}
    # the update is recorded as the result of the fork's pending task "b"
    assert [(t.name, t.result) for t in history[1].tasks] == [("b", {"log": ["B*"], "last": "B*"})]


def test_update_as_a_pending_node_becomes_that_tasks_result(h: Harness) -> None:
    graph = _paused_before_b(h)
    before = h.get_state(graph, cfg("t"))
    h.update_state(graph, cfg("t"), {"log": ["B"]}, as_node="b")
    previous = h.history(graph, cfg("t"))[1]
    assert previous.config == before.config
    assert [(t.id, t.name, t.result) for t in previous.tasks] == [
        (before.tasks[0].id, "b", {"log": ["B"]})
    ]


@pytest.mark.parametrize("special", ["__input__", "__copy__", "__end__"])
def test_special_update_must_be_alone_in_its_superstep(h: Harness, special: str) -> None:
    graph = _paused_before_b(h)
    before = [s.config for s in h.history(graph, cfg("t"))]
    with pytest.raises(InvalidUpdateError, match=special):
        h.bulk_update_state(
            graph, cfg("t"), [[StateUpdate(None, special), StateUpdate({"log": ["x"]}, "a")]]
        )
    assert [s.config for s in h.history(graph, cfg("t"))] == before


def test_copy_of_a_thread_without_checkpoints_is_rejected(h: Harness) -> None:
    graph = chain_builder(Runs()).compile(checkpointer=h.saver)
    with pytest.raises(InvalidUpdateError, match="no checkpoint to copy"):
        h.update_state(graph, cfg("empty"), None, as_node="__copy__")


def test_bulk_update_rejects_an_empty_superstep_before_saving(h: Harness) -> None:
    graph = _paused_before_b(h)
    before = [s.config for s in h.history(graph, cfg("t"))]
    with pytest.raises(ValueError, match="No updates provided"):
        h.bulk_update_state(graph, cfg("t"), [[StateUpdate({"log": ["x"]}, "b")], []])
    with pytest.raises(ValueError, match="No supersteps provided"):
        h.bulk_update_state(graph, cfg("t"), [])
    assert [s.config for s in h.history(graph, cfg("t"))] == before


def test_several_updates_in_a_superstep_each_need_as_node(h: Harness) -> None:
    graph = _paused_before_b(h)
    with pytest.raises(InvalidUpdateError, match="as_node"):
        h.bulk_update_state(
            graph, cfg("t"), [[StateUpdate({"log": ["x"]}), StateUpdate({"log": ["y"]})]]
        )
