"""What a saved checkpoint's metadata takes from the run's config (as in LangGraph).

The config's ``metadata`` and the plain values of ``configurable`` (not private keys, not
the ones that say where a checkpoint is, not objects) are saved with every checkpoint, so
``get_state`` shows them and ``list(filter=...)`` finds a user's checkpoints; the
``checkpoints`` stream payloads show only what the loop says of the checkpoint.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph


class Count(TypedDict):
    n: Annotated[int, operator.add]


def _app() -> Any:
    g = StateGraph(Count)
    g.add_node("inc", lambda s: {"n": 1})
    g.add_edge(START, "inc")
    return g.compile(checkpointer=InMemorySaver())


CONFIG: dict[str, Any] = {
    "configurable": {
        "thread_id": "meta",
        "user_id": "from-configurable",
        "tenant": "acme",
        "retries": 3,
        "ratio": 0.5,
        "beta": True,
        "client": {"not": "plain"},
        "nothing": None,
        "__private": "hidden",
    },
    "metadata": {"user_id": "from-metadata", "origin": "test"},
}


def test_saved_metadata_takes_the_runs_plain_config_values() -> None:
    app = _app()
    payloads = list(app.stream({"n": 0}, CONFIG, stream_mode="checkpoints"))
    saved = app.get_state({"configurable": {"thread_id": "meta"}}).metadata
    assert saved == {
        "source": "loop",
        "step": 1,
        "parents": {},
        "user_id": "from-metadata",  # the config's metadata comes first
        "origin": "test",
        "tenant": "acme",
        "retries": 3,
        "ratio": 0.5,
        "beta": True,
    }
    # the stream shows what the loop says of each checkpoint, nothing from the config
    assert [p["metadata"] for p in payloads] == [
        {"source": "input", "step": -1, "parents": {}},
        {"source": "loop", "step": 0, "parents": {}},
        {"source": "loop", "step": 1, "parents": {}},
    ]


def test_checkpoints_are_found_by_a_configurable_value() -> None:
    app = _app()
    app.invoke({"n": 0}, CONFIG)
    app.invoke({"n": 0}, {"configurable": {"thread_id": "other", "tenant": "globex"}})
    found = list(app.checkpointer.list(None, filter={"tenant": "acme"}))
    assert {c.config["configurable"]["thread_id"] for c in found} == {"meta"}
    assert len(found) == 3


def test_checkpoint_payload_configs_carry_the_runs_configurable() -> None:
    app = _app()
    payloads = list(app.stream({"n": 0}, CONFIG, stream_mode="checkpoints"))
    for p in payloads:
        conf = p["config"]["configurable"]
        assert {k: conf[k] for k in ("thread_id", "user_id", "client", "__private")} == {
            "thread_id": "meta",
            "user_id": "from-configurable",
            "client": {"not": "plain"},
            "__private": "hidden",
        }
        assert conf["checkpoint_ns"] == "" and conf["checkpoint_id"]
    assert payloads[0]["parent_config"] is None
    assert payloads[1]["parent_config"]["configurable"]["tenant"] == "acme"
    assert (
        payloads[1]["parent_config"]["configurable"]["checkpoint_id"]
        == payloads[0]["config"]["configurable"]["checkpoint_id"]
    )


def test_the_runs_own_run_id_is_not_saved_but_a_metadata_run_id_is() -> None:
    # LangGraph saves the config's metadata, not the LangChain run id of the call
    app = _app()
    own = {"configurable": {"thread_id": "own"}, "run_id": "4f8e7c1a-0000-4000-8000-000000000001"}
    payloads = list(app.stream({"n": 0}, own, stream_mode="checkpoints"))
    assert payloads and all("run_id" not in p["metadata"] for p in payloads)
    history = list(app.get_state_history({"configurable": {"thread_id": "own"}}))
    assert len(history) == 3 and all("run_id" not in s.metadata for s in history)

    served = {"configurable": {"thread_id": "served"}, "metadata": {"run_id": "run-7"}}
    payloads = list(app.stream({"n": 0}, served, stream_mode="checkpoints"))
    assert all("run_id" not in p["metadata"] for p in payloads)
    history = list(app.get_state_history({"configurable": {"thread_id": "served"}}))
    assert [s.metadata["run_id"] for s in history] == ["run-7"] * 3
