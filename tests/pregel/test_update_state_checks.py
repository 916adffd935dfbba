"""``update_state`` speaks of itself: a value the reducer rejects names the key, an
unknown key warns (whichever node the update is applied as), nothing is saved on error."""

from __future__ import annotations

import operator
import warnings
from typing import Annotated, Any, TypedDict

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.errors import InvalidUpdateError
from stategraph.graph import START, StateGraph
from stategraph.types import interrupt


class Tally(TypedDict, total=False):
    n: Annotated[int, operator.add]
    note: str


def _app() -> Any:
    g = StateGraph(Tally)
    g.add_node("inc", lambda s: {"n": 1})
    g.add_node("ask", lambda s: {"note": interrupt("note?")})
    g.add_edge(START, "inc")
    g.add_edge("inc", "ask")
    return g.compile(checkpointer=InMemorySaver())


def test_a_value_the_reducer_rejects_names_the_key_and_saves_nothing() -> None:
    app = _app()
    cfg = {"configurable": {"thread_id": "reducer"}}
    app.invoke({"n": 1}, cfg)
    before = len(list(app.get_state_history(cfg)))
    with pytest.raises(
        InvalidUpdateError, match=r"update_state\(as_node='inc'\) value for key 'n'"
    ) as info:
        app.update_state(cfg, {"n": "many"}, as_node="inc")
    assert isinstance(info.value, TypeError)  # code that caught the reducer's error still does
    assert len(list(app.get_state_history(cfg))) == before
    assert app.get_state(cfg).values["n"] == 2


@pytest.mark.parametrize("as_node", [None, "inc", "__start__"])
def test_an_unknown_key_warns_in_update_state_words(as_node: str | None) -> None:
    app = _app()
    cfg = {"configurable": {"thread_id": f"unknown-{as_node}"}}
    app.invoke({"n": 1}, cfg)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        app.update_state(cfg, {"nn": 3}, as_node=as_node)
    messages = [str(w.message) for w in seen]
    assert len(messages) == 1, messages
    assert "update_state(as_node=" in messages[0] and "wrote key 'nn'" in messages[0]
    assert "returned" not in messages[0]
