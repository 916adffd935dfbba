"""Pure helpers of the scheduling core: ``null_version_of``, ``triggered``, task ids."""

from __future__ import annotations

from stategraph.channels import EphemeralValue, LastValue
from stategraph.constants import PULL, PUSH
from stategraph.pregel._algo import increment, make_task_id, null_version_of, triggered


def test_null_version_follows_the_type_of_versions() -> None:
    assert null_version_of({}) is None
    assert null_version_of({"a": 3}) == 0
    assert type(null_version_of({"a": 3})) is int
    assert null_version_of({"a": "0001.abc"}) == ""
    assert null_version_of({"a": 1.5}) == 0.0
    assert type(null_version_of({"a": 1.5})) is float


def test_never_run_node_triggers_on_any_available_trigger() -> None:
    channels = {"a": LastValue(int).from_checkpoint(1), "b": LastValue(int)}
    assert triggered(["b", "a"], channels, {"a": 1}, None, 0)
    # an unavailable trigger does not fire even with a version
    assert not triggered(["b"], channels, {"a": 1, "b": 4}, None, 0)
    # unknown channels are ignored
    assert not triggered(["zz"], channels, {"a": 1}, None, 0)


def test_trigger_fires_only_when_version_is_newer_than_seen() -> None:
    channels = {"a": LastValue(int).from_checkpoint(1), "b": LastValue(int).from_checkpoint(2)}
    versions = {"a": 3, "b": 5}
    assert not triggered(["a", "b"], channels, versions, {"a": 3, "b": 5}, 0)
    assert triggered(["a", "b"], channels, versions, {"a": 3, "b": 4}, 0)
    assert triggered(["a"], channels, versions, {"a": 2}, 0)
    # a channel the node never saw counts as seen at the null version
    assert triggered(["b"], channels, versions, {"a": 3}, 0)


def test_trigger_rule_with_string_versions() -> None:
    channels = {"a": LastValue(int).from_checkpoint(1)}
    v9 = f"{9:032d}.x"
    v10 = f"{10:032d}.y"
    assert triggered(["a"], channels, {"a": v10}, {"a": v9}, "")
    assert not triggered(["a"], channels, {"a": v10}, {"a": v10}, "")
    assert triggered(["a"], channels, {"a": v9}, {}, "")


def test_unavailable_channel_never_triggers_even_with_newer_version() -> None:
    channels = {"e": EphemeralValue(int)}
    assert not triggered(["e"], channels, {"e": 9}, {"e": 1}, 0)


def test_make_task_id_is_deterministic_and_uuid_shaped() -> None:
    first = make_task_id("cp-1", "", 3, "node", PULL, "a")
    assert first == make_task_id("cp-1", "", 3, "node", PULL, "a")
    parts = first.split("-")
    assert [len(p) for p in parts] == [8, 4, 4, 4, 12]
    assert all(c in "0123456789abcdef" for c in first.replace("-", ""))
    others = {
        make_task_id("cp-2", "", 3, "node", PULL, "a"),
        make_task_id("cp-1", "ns", 3, "node", PULL, "a"),
        make_task_id("cp-1", "", 4, "node", PULL, "a"),
        make_task_id("cp-1", "", 3, "other", PULL, "a"),
        make_task_id("cp-1", "", 3, "node", PUSH, 0),
        # the parts are separated: moving a character across a boundary changes the id
        make_task_id("cp-1", "", 3, "nod", "e" + PULL, "a"),
    }
    assert first not in others
    assert len(others) == 6


def test_default_version_function_counts_integers() -> None:
    assert increment(None) == 1
    assert increment(1) == 2
    assert increment(41) == 42


def test_a_task_id_key_joins_so_a_constant_tail_can_be_made_once() -> None:
    from stategraph._task_ids import task_id_key, task_id_of_key

    tail = task_id_key(("node", PULL, "a", "b"))
    assert tail == f"node\x00{PULL}\x00a\x00b"
    key = f"{task_id_key(('cp-1', 'ns', 3))}\x00{tail}"
    assert task_id_of_key(key) == make_task_id("cp-1", "ns", 3, "node", PULL, "a", "b")


def test_a_pull_task_runs_with_the_id_made_from_its_parts() -> None:
    from typing_extensions import TypedDict

    from stategraph.checkpoint.memory import InMemorySaver
    from stategraph.config import get_config
    from stategraph.graph import END, START, StateGraph

    class State(TypedDict):
        n: int

    seen: list[tuple[str, str]] = []

    def work(state: State) -> State:
        conf = get_config()["configurable"]
        seen.append((conf["__pregel_task_id"], conf["checkpoint_ns"]))
        return {"n": state["n"] + 1}

    builder = StateGraph(State)
    builder.add_node("work", work)
    builder.add_edge(START, "work")
    builder.add_edge("work", END)
    graph = builder.compile(checkpointer=InMemorySaver(), interrupt_before=["work"])
    assert graph.pull_id_keys["work"] == f"work\x00{PULL}\x00branch:to:work"
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"n": 1}, config)
    paused = graph.get_state(config)
    expected = graph.pull_task_ids(
        paused.config["configurable"]["checkpoint_id"], "", paused.metadata["step"] + 1, "work"
    )
    assert expected is not None
    assert [t.id for t in paused.tasks] == [expected[0]]
    assert graph.invoke(None, config) == {"n": 2}
    assert seen == [(expected[0], f"work:{expected[0]}")]
