"""Version tracking and task preparation.

``channel_versions`` / ``versions_seen`` in saved checkpoints, the trigger rule, the
"never written" version, pluggable ``get_next_version`` (ints, zero-padded strings,
custom strings), PULL/PUSH tasks and deterministic task ids and paths.
"""

from __future__ import annotations

import copy
import operator
import time
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

from stategraph.channels import LastValue, Topic
from stategraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.constants import PULL, PUSH
from stategraph.graph import START, StateGraph
from stategraph.pregel import NodeBuilder, Pregel
from stategraph.types import Send

THREAD = {"configurable": {"thread_id": "t1"}}


class IntSaver(InMemorySaver):
    """An in-memory saver that counts versions with plain ints and records its calls."""

    def __init__(self) -> None:
        super().__init__()
        self.version_calls: list[Any] = []

    def get_next_version(self, current: Any, channel: None) -> Any:
        self.version_calls.append(current)
        return (int(current) if current else 0) + 1


class PrefixedSaver(InMemorySaver):
    """Monotonic string versions of its own format: ``v000001``, ``v000002``, ..."""

    def get_next_version(self, current: Any, channel: None) -> Any:
        n = int(current[1:]) if current else 0
        return f"v{n + 1:06d}"


class SlowIntSaver(IntSaver):
    """Like :class:`IntSaver`, but ``put`` takes a while (a remote database, say)."""

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        time.sleep(0.02)
        return super().put(config, checkpoint, metadata, new_versions)

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        import asyncio

        await asyncio.sleep(0.02)
        return await super().aput(config, checkpoint, metadata, new_versions)


class DictSaver(BaseCheckpointSaver):
    """A minimal third-party saver: keeps deep copies in a dict, default version scheme."""

    def __init__(self) -> None:
        super().__init__()
        self.saved: dict[str, CheckpointTuple] = {}
        self.order: list[str] = []
        self.writes: dict[str, list[tuple[str, str, Any]]] = {}

    def get_tuple(self, config: Any) -> CheckpointTuple | None:
        conf = config["configurable"]
        cid = conf.get("checkpoint_id") or (self.order[-1] if self.order else None)
        if cid is None or cid not in self.saved:
            return None
        tup = self.saved[cid]
        return tup._replace(pending_writes=list(self.writes.get(cid, [])))

    def list(self, config: Any, **kwargs: Any) -> Iterator[CheckpointTuple]:
        for cid in reversed(self.order):
            yield self.saved[cid]._replace(pending_writes=list(self.writes.get(cid, [])))

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        conf = config["configurable"]
        cp = copy.deepcopy(checkpoint)
        new_conf = {
            "configurable": {
                "thread_id": conf["thread_id"],
                "checkpoint_ns": conf.get("checkpoint_ns", ""),
                "checkpoint_id": cp["id"],
            }
        }
        parent = {"configurable": dict(conf)} if conf.get("checkpoint_id") else None
        self.saved[cp["id"]] = CheckpointTuple(new_conf, cp, copy.deepcopy(metadata), parent)
        self.order.append(cp["id"])
        return new_conf

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        cid = config["configurable"]["checkpoint_id"]
        self.writes.setdefault(cid, []).extend((task_id, c, v) for c, v in writes)

    async def aget_tuple(self, config: Any) -> CheckpointTuple | None:
        return self.get_tuple(config)

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: Any, writes: Any, task_id: str, task_path: str = ""
    ) -> None:
        self.put_writes(config, writes, task_id, task_path)


def _chain(saver: Any) -> Pregel:
    n1 = NodeBuilder().subscribe_only("a").do(lambda x: x + 1).write_to("b")
    n2 = NodeBuilder().subscribe_only("b").do(lambda x: x + 1).write_to("c")
    return Pregel(
        nodes={"n1": n1, "n2": n2},
        channels={k: LastValue(int) for k in "abc"},
        input_channels="a",
        output_channels="c",
        checkpointer=saver,
    )


def _seen(cp: dict[str, Any]) -> dict[str, Any]:
    # LangGraph also records an empty entry for the input pseudo-task; not part of the contract
    return {k: v for k, v in cp["versions_seen"].items() if k != "__input__"}


# --------------------------------------------------------------------------- saved versions


def test_int_versions_in_saved_checkpoints(runner: Any) -> None:
    saver = IntSaver()
    app = _chain(saver)
    assert runner.invoke(app, 1, THREAD) == 3
    history = list(app.get_state_history(THREAD))
    assert [h.metadata["step"] for h in history] == [1, 0, -1]
    saved = [saver.get_tuple(h.config).checkpoint for h in reversed(history)]
    assert [cp["channel_versions"] for cp in saved] == [
        {"a": 1},
        {"a": 1, "b": 2},
        {"a": 1, "b": 2, "c": 3},
    ]
    assert [_seen(cp) for cp in saved] == [
        {},
        {"n1": {"a": 1}},
        {"n1": {"a": 1}, "n2": {"b": 2}},
    ]
    # each call gets the current maximum version (None before the first write)
    assert saver.version_calls == [None, 1, 2]


def test_third_party_saver_gets_default_int_versions(runner: Any) -> None:
    saver = DictSaver()
    app = _chain(saver)
    assert runner.invoke(app, 1, THREAD) == 3
    saved = [saver.saved[cid].checkpoint for cid in saver.order]
    assert [cp["channel_versions"] for cp in saved] == [
        {"a": 1},
        {"a": 1, "b": 2},
        {"a": 1, "b": 2, "c": 3},
    ]
    assert _seen(saved[-1]) == {"n1": {"a": 1}, "n2": {"b": 2}}
    # a second run of the thread continues from the saved versions
    assert runner.invoke(app, 5, THREAD) == 7
    assert saver.saved[saver.order[-1]].checkpoint["channel_versions"] == {"a": 4, "b": 5, "c": 6}


def test_saved_checkpoints_are_not_changed_by_later_steps(runner: Any) -> None:
    # the checkpoint handed to a slow saver must be a snapshot of its own step
    saver = SlowIntSaver()
    app = _chain(saver)
    assert runner.invoke(app, 1, THREAD) == 3
    history = list(app.get_state_history(THREAD))
    assert [(h.metadata["step"], h.next, h.values) for h in history] == [
        (1, (), {"a": 1, "b": 2, "c": 3}),
        (0, ("n2",), {"a": 1, "b": 2}),
        (-1, ("n1",), {"a": 1}),
    ]
    saved = [saver.get_tuple(h.config).checkpoint for h in reversed(history)]
    assert [cp["channel_versions"] for cp in saved] == [
        {"a": 1},
        {"a": 1, "b": 2},
        {"a": 1, "b": 2, "c": 3},
    ]


def test_saved_checkpoints_record_updated_channels(runner: Any) -> None:
    # the input checkpoint lists the input channels, like every later one its writes
    saver = IntSaver()
    app = _chain(saver)
    runner.invoke(app, 1, THREAD)
    history = list(app.get_state_history(THREAD))
    saved = [saver.get_tuple(h.config).checkpoint for h in reversed(history)]
    assert [cp["updated_channels"] for cp in saved] == [["a"], ["b"], ["c"]]


def test_in_memory_saver_string_versions_over_many_steps(runner: Any) -> None:
    # 12 steps: "10" < "9" as plain strings, so versions must be zero-padded
    saver = InMemorySaver()
    node = NodeBuilder().subscribe_only("n").do(lambda x: [x[0] + 1] if x[0] < 12 else [])
    app = Pregel(
        nodes={"count": node.write_to("n", "log")},
        channels={"n": Topic(int), "log": Topic(int, accumulate=True)},
        input_channels="n",
        output_channels="log",
        checkpointer=saver,
    )
    assert runner.invoke(app, 0, THREAD) == list(range(1, 13))
    cp = saver.get_tuple(THREAD).checkpoint
    versions = cp["channel_versions"]
    assert all(isinstance(v, str) for v in versions.values())

    def step_of(version: str) -> int:
        return int(version.split(".")[0])

    # input = version 1; step k writes version k + 2; the last step (12) only clears "n"
    assert {k: step_of(v) for k, v in versions.items()} == {"n": 14, "log": 13}
    assert step_of(_seen(cp)["count"]["n"]) == 13
    history = list(app.get_state_history(THREAD))
    steps = [h.metadata["step"] for h in history]
    assert steps == list(range(12, -2, -1))


def test_custom_string_versions_drive_the_same_run(runner: Any) -> None:
    saver = PrefixedSaver()
    app = _chain(saver)
    assert runner.invoke(app, 1, THREAD) == 3
    cp = saver.get_tuple(THREAD).checkpoint
    assert cp["channel_versions"] == {"a": "v000001", "b": "v000002", "c": "v000003"}
    assert _seen(cp) == {"n1": {"a": "v000001"}, "n2": {"b": "v000002"}}


def test_versions_continue_across_runs_of_a_thread(runner: Any) -> None:
    saver = IntSaver()
    app = _chain(saver)
    runner.invoke(app, 1, THREAD)
    assert runner.invoke(app, 10, THREAD) == 12
    cp = saver.get_tuple(THREAD).checkpoint
    assert cp["channel_versions"] == {"a": 4, "b": 5, "c": 6}
    assert _seen(cp) == {"n1": {"a": 4}, "n2": {"b": 5}}


# --------------------------------------------------------------------------- prepare


class FanState(TypedDict):
    x: int
    log: Annotated[list[str], operator.add]


def _fan_graph() -> StateGraph:
    g = StateGraph(FanState)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("c", lambda s: {"log": ["c"]})
    g.add_node("w", lambda s: {"log": [f"w{s['x']}"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_conditional_edges("a", lambda s: [Send("w", {"x": i}) for i in range(2)])
    return g


def _clone(saver: Any, config: dict[str, Any]) -> InMemorySaver:
    """A new saver holding the same checkpoints (same ids) and pending writes."""
    clone = InMemorySaver()
    for tup in reversed(list(saver.list(config))):
        parent = tup.parent_config or {
            "configurable": {"thread_id": config["configurable"]["thread_id"], "checkpoint_ns": ""}
        }
        clone.put(parent, tup.checkpoint, tup.metadata, tup.checkpoint["channel_versions"])
        by_task: dict[str, list[tuple[str, Any]]] = {}
        for task_id, chan, value in tup.pending_writes or ():
            by_task.setdefault(task_id, []).append((chan, value))
        for task_id, writes in by_task.items():
            clone.put_writes(tup.config, writes, task_id)
    return clone


def test_pull_and_push_tasks_and_their_paths(runner: Any) -> None:
    app = _fan_graph().compile(checkpointer=InMemorySaver(), interrupt_after=["a"])
    runner.invoke(app, {"x": 0, "log": []}, THREAD)
    state = runner.get_state(app, THREAD)
    tasks = sorted(state.tasks, key=lambda t: (t.name, str(t.path)))
    assert [t.name for t in tasks] == ["b", "c", "w", "w"]
    assert tasks[0].path == (PULL, "b")
    assert tasks[1].path == (PULL, "c")
    assert [t.path[:2] for t in tasks[2:]] == [(PUSH, 0), (PUSH, 1)]
    assert len({t.id for t in tasks}) == 4
    # asking twice gives the same ids
    again = runner.get_state(app, THREAD)
    assert sorted(t.id for t in again.tasks) == sorted(t.id for t in tasks)


def test_task_ids_are_identical_for_runs_from_the_same_checkpoint(runner: Any) -> None:
    g = _fan_graph()
    saver = InMemorySaver()
    app = g.compile(checkpointer=saver, interrupt_after=["a"])
    runner.invoke(app, {"x": 0, "log": []}, THREAD)
    planned = sorted((t.name, t.id) for t in runner.get_state(app, THREAD).tasks)
    runs = []
    for _ in range(2):
        resumed = g.compile(checkpointer=_clone(saver, THREAD))
        chunks = runner.stream(resumed, None, THREAD, stream_mode="tasks")
        started = sorted((c["name"], c["id"], c["triggers"]) for c in chunks if "input" in c)
        finished = sorted((c["name"], c["id"]) for c in chunks if "result" in c)
        assert [s[:2] for s in started] == finished
        runs.append(started)
        assert runner.get_state(resumed, THREAD).values == {
            "x": 0,
            "log": ["a", "b", "c", "w0", "w1"],
        }
    assert runs[0] == runs[1]
    assert [r[:2] for r in runs[0]] == planned
    assert [r[2] for r in runs[0]] == [
        ("branch:to:b",),
        ("branch:to:c",),
        (PUSH,),
        (PUSH,),
    ]


def test_two_threads_get_different_task_ids(runner: Any) -> None:
    app = _fan_graph().compile(checkpointer=InMemorySaver(), interrupt_after=["a"])
    other = {"configurable": {"thread_id": "t2"}}
    runner.invoke(app, {"x": 0, "log": []}, THREAD)
    runner.invoke(app, {"x": 0, "log": []}, other)
    ids1 = {t.id for t in runner.get_state(app, THREAD).tasks}
    ids2 = {t.id for t in runner.get_state(app, other).tasks}
    assert ids1.isdisjoint(ids2)
