"""A resume that answers no waiting interrupt is refused, naming what is waiting.

Before, ``Command(resume={id: value})`` with an id that is not waiting returned
normally and left the thread waiting: the answer was silently lost.
"""

from __future__ import annotations

from typing import Any, TypedDict

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.errors import UnknownInterruptError
from stategraph.graph import START, StateGraph
from stategraph.types import Command, interrupt


class Answer(TypedDict, total=False):
    answer: str


def _asking() -> Any:
    def ask(s: Answer) -> Answer:
        return {"answer": interrupt("colour?")}

    g = StateGraph(Answer)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    return g.compile(checkpointer=InMemorySaver())


def test_an_unknown_id_is_refused_and_the_interrupt_still_waits(runner: Any) -> None:
    app = _asking()
    cfg = {"configurable": {"thread_id": "unknown-id"}}
    waiting = runner.invoke(app, {}, cfg)["__interrupt__"][0].id
    stranger = "0" * 32
    with pytest.raises(UnknownInterruptError) as info:
        runner.invoke(app, Command(resume={stranger: "blue"}), cfg)
    err = info.value
    assert (err.reason, err.interrupt_ids, err.pending_ids) == (
        "not_pending",
        (stranger,),
        (waiting,),
    )
    assert stranger in str(err) and waiting in str(err) and "'colour?'" in str(err)
    state = runner.get_state(app, cfg)
    assert state.next == ("ask",) and [i.id for i in state.interrupts] == [waiting]
    assert runner.invoke(app, Command(resume={waiting: "blue"}), cfg) == {"answer": "blue"}


def test_an_empty_resume_map_is_refused(runner: Any) -> None:
    app = _asking()
    cfg = {"configurable": {"thread_id": "empty-map"}}
    waiting = runner.invoke(app, {}, cfg)["__interrupt__"][0].id
    with pytest.raises(UnknownInterruptError) as info:
        runner.invoke(app, Command(resume={}), cfg)
    assert info.value.reason == "empty_map" and info.value.pending_ids == (waiting,)
    assert runner.get_state(app, cfg).next == ("ask",)
