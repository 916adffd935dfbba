"""Config mistakes get a clear error before the run starts, and lease settings given in
``configurable`` (where LangGraph apps keep their settings) are honoured."""

from __future__ import annotations

import operator
import uuid
from typing import Annotated, Any, TypedDict

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.pregel._lease_guard import lease_settings


class Count(TypedDict):
    n: Annotated[int, operator.add]


def _app() -> Any:
    g = StateGraph(Count)
    g.add_node("inc", lambda s: {"n": 1})
    g.add_edge(START, "inc")
    return g.compile(checkpointer=InMemorySaver())


def test_a_thread_id_that_is_not_an_id_is_refused_before_anything_is_saved() -> None:
    app = _app()
    saver = app.checkpointer
    with pytest.raises(TypeError, match=r"configurable\['thread_id'\] must be a string"):
        app.invoke({"n": 0}, {"configurable": {"thread_id": {"user": 1}}})
    assert list(saver.list(None)) == []


def test_string_int_and_uuid_thread_ids_work() -> None:
    app = _app()
    for tid in ("t", 7, uuid.UUID(int=5)):
        assert app.invoke({"n": 0}, {"configurable": {"thread_id": tid}}) == {"n": 1}


def test_a_config_that_is_not_a_mapping_is_refused() -> None:
    with pytest.raises(TypeError, match=r"config must be a mapping.*got list"):
        _app().invoke({"n": 0}, [("configurable", {"thread_id": "x"})])


def test_lease_settings_are_read_from_configurable_too() -> None:
    got = lease_settings(
        {"configurable": {"lease_timeout": 4, "multitask_strategy": "enqueue"}}, None
    )
    assert (got.lease_timeout, got.strategy) == (4.0, "enqueue")
    top = lease_settings({"lease_timeout": 9, "configurable": {"lease_timeout": 4}}, None)
    assert top.lease_timeout == 9.0  # the top level wins


def test_a_bad_lease_timeout_in_configurable_is_refused() -> None:
    with pytest.raises(ValueError, match="lease_timeout must be a number of seconds"):
        _app().invoke({"n": 0}, {"configurable": {"thread_id": "l", "lease_timeout": "soon"}})
