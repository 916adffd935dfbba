"""The saver test suite: every saver, through its sync and its async methods.

Each test runs against InMemorySaver, SqliteSaver (file), SqliteSaver(":memory:") and
AsyncSqliteSaver, in ``sync`` and ``async`` mode (see ``conftest.Api``).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from saver_harness import Api, load_fidelity_cases

from stategraph.checkpoint.base import (
    Checkpoint,
    CheckpointMetadata,
    copy_checkpoint,
    create_checkpoint,
    empty_checkpoint,
)

T1 = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}


def cfg(thread: str = "t1", ns: str = "", checkpoint_id: str | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ns}
    if checkpoint_id is not None:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


async def put_chain(
    api: Api,
    steps: list[dict[str, Any]],
    *,
    thread: str = "t1",
    ns: str = "",
    meta: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Put one checkpoint per entry of ``steps`` (channel -> new value), each the child
    of the previous; only the channels in the entry get new versions."""
    saver = api.saver
    config = cfg(thread, ns)
    checkpoint = empty_checkpoint()
    configs = []
    for step, changes in enumerate(steps):
        checkpoint = create_checkpoint(checkpoint, None, step)
        new_versions = {}
        for channel, value in changes.items():
            version = saver.get_next_version(checkpoint["channel_versions"].get(channel), None)
            checkpoint["channel_versions"][channel] = version
            checkpoint["channel_values"][channel] = value
            new_versions[channel] = version
        metadata: CheckpointMetadata = {"source": "loop", "step": step, "parents": {}}
        metadata.update(meta or {})  # type: ignore[typeddict-item]
        config = await api.put(config, checkpoint, metadata, new_versions)
        configs.append(config)
    return configs


# -- put / get -------------------------------------------------------------------


async def test_put_get_roundtrip(api: Api) -> None:
    saver = api.saver
    v1 = saver.get_next_version(None, None)
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"messages": ["hi", {"role": "user"}], "count": 3}
    checkpoint["channel_versions"] = {"messages": v1, "count": v1, "__start__": v1}
    checkpoint["versions_seen"] = {"agent": {"messages": v1}, "__input__": {}}
    checkpoint["updated_channels"] = ["messages", "count"]
    metadata: CheckpointMetadata = {
        "source": "input",
        "step": -1,
        "parents": {"": "parent-id"},
        "run_id": "run-1",
        "user": "alice",  # type: ignore[typeddict-unknown-key]
        "tags": ["a", "b"],
    }
    new_versions = {"messages": v1, "count": v1, "__start__": v1}

    returned = await api.put(T1, checkpoint, metadata, new_versions)

    assert returned == cfg(checkpoint_id=checkpoint["id"])
    saved = await api.get_tuple(returned)
    assert saved is not None
    assert saved.config == returned
    assert saved.parent_config is None
    assert saved.metadata == metadata
    assert saved.pending_writes == []
    got = saved.checkpoint
    assert got["id"] == checkpoint["id"]
    assert got["ts"] == checkpoint["ts"]
    assert got["v"] == 4
    # __start__ has a version but no value: it is absent from the values.
    assert got["channel_values"] == {"messages": ["hi", {"role": "user"}], "count": 3}
    assert got["channel_versions"] == {"messages": v1, "count": v1, "__start__": v1}
    assert got["versions_seen"] == {"agent": {"messages": v1}, "__input__": {}}
    assert got["updated_channels"] == ["messages", "count"]
    assert await api.get(returned) == got

    # A child records its parent.
    child = create_checkpoint(checkpoint, None, 0)
    child_config = await api.put(returned, child, {"source": "loop", "step": 0}, {})
    child_saved = await api.get_tuple(child_config)
    assert child_saved is not None
    assert child_saved.parent_config == returned
    assert child_saved.checkpoint["channel_values"] == got["channel_values"]


async def test_config_user_keys_are_added_to_metadata(api: Api) -> None:
    config = {
        "configurable": {
            "thread_id": "t1",
            "checkpoint_ns": "",
            "user_id": "u-7",
            "step": 99,  # never overrides the metadata the runtime gives
            "__internal": "hidden",
            "checkpoint_map": {"": "x"},
            "client": object(),
        },
        "metadata": {"team": "blue", "user_id": "from-metadata", "tags": ["x"]},
    }
    saved_config = await api.put(config, empty_checkpoint(), {"source": "input", "step": -1}, {})
    saved = await api.get_tuple(saved_config)
    assert saved is not None
    assert saved.metadata == {
        "source": "input",
        "step": -1,
        "team": "blue",
        "user_id": "from-metadata",
    }
    assert [t.config for t in await api.list(None, filter={"team": "blue"})] == [saved_config]


async def test_reads_return_copies(api: Api) -> None:
    checkpoint = empty_checkpoint()
    v = api.saver.get_next_version(None, None)
    value = {"items": [1, 2]}
    checkpoint["channel_values"] = {"state": value}
    checkpoint["channel_versions"] = {"state": v}
    config = await api.put(T1, checkpoint, {"step": 0}, {"state": v})
    value["items"].append(3)  # the caller keeps mutating its object
    first = await api.get(config)
    assert first is not None
    assert first["channel_values"]["state"] == {"items": [1, 2]}
    first["channel_values"]["state"]["items"].append(99)
    first["channel_versions"]["state"] = "changed"
    second = await api.get(config)
    assert second is not None
    assert second["channel_values"]["state"] == {"items": [1, 2]}
    assert second["channel_versions"]["state"] == v


async def test_latest_and_by_id(api: Api) -> None:
    configs = await put_chain(api, [{"a": 1}, {"a": 2}, {"a": 3}])
    latest = await api.get_tuple({"configurable": {"thread_id": "t1"}})
    assert latest is not None
    assert latest.config == configs[-1]
    assert latest.checkpoint["channel_values"] == {"a": 3}
    for i, config in enumerate(configs):
        saved = await api.get_tuple(config)
        assert saved is not None
        assert saved.checkpoint["channel_values"] == {"a": i + 1}
        assert saved.metadata["step"] == i
        expected_parent = configs[i - 1] if i else None
        assert saved.parent_config == expected_parent
    assert await api.get_tuple(cfg(checkpoint_id="no-such-id")) is None
    assert await api.get_tuple({"configurable": {"thread_id": "other"}}) is None
    assert await api.get_tuple(cfg(ns="other-ns")) is None
    assert await api.get({"configurable": {"thread_id": "other"}}) is None


async def test_missing_thread_id_is_a_clear_error(api: Api) -> None:
    with pytest.raises(ValueError, match="thread_id"):
        await api.get_tuple({"configurable": {}})
    with pytest.raises(ValueError, match="thread_id"):
        await api.put({}, empty_checkpoint(), {}, {})


async def test_thread_id_is_converted_to_str(api: Api) -> None:
    import uuid

    thread = uuid.uuid4()
    checkpoint = empty_checkpoint()
    config = await api.put({"configurable": {"thread_id": thread}}, checkpoint, {}, {})
    assert config == cfg(str(thread), checkpoint_id=checkpoint["id"])
    saved = await api.get_tuple({"configurable": {"thread_id": thread}})
    assert saved is not None and saved.checkpoint["id"] == checkpoint["id"]


async def test_put_same_id_again_replaces(api: Api) -> None:
    checkpoint = empty_checkpoint()
    await api.put(T1, checkpoint, {"step": 1}, {})
    config = await api.put(T1, checkpoint, {"step": 2}, {})
    saved = await api.list(None)
    assert [s.metadata for s in saved] == [{"step": 2}]
    assert saved[0].config == config


# -- list ------------------------------------------------------------------------


async def test_list_newest_first_filter_before_limit(api: Api) -> None:
    configs = await put_chain(api, [{"a": i} for i in range(5)], meta={"user": "u1"})
    ids = [c["configurable"]["checkpoint_id"] for c in configs]
    assert ids == sorted(ids)

    listed = await api.list({"configurable": {"thread_id": "t1"}})
    assert [t.config["configurable"]["checkpoint_id"] for t in listed] == ids[::-1]
    assert [t.checkpoint["channel_values"]["a"] for t in listed] == [4, 3, 2, 1, 0]
    assert listed[0].parent_config == configs[3]

    by_step = await api.list(T1, filter={"step": 2})
    assert [t.config for t in by_step] == [configs[2]]
    both = await api.list(T1, filter={"step": 2, "user": "u1"})
    assert [t.config for t in both] == [configs[2]]
    assert await api.list(T1, filter={"step": 2, "user": "u2"}) == []
    assert await api.list(T1, filter={"nope": 1}) == []
    assert [t.config for t in await api.list(T1, filter={"source": "loop"}, limit=2)] == [
        configs[4],
        configs[3],
    ]

    before = await api.list(T1, before=configs[3])
    assert [t.config for t in before] == [configs[2], configs[1], configs[0]]
    assert [t.config for t in await api.list(T1, before=configs[3], limit=1)] == [configs[2]]
    assert [t.config for t in await api.list(T1, limit=2)] == [configs[4], configs[3]]
    assert await api.list(T1, limit=0) == []
    only = await api.list(configs[1])
    assert [t.config for t in only] == [configs[1]]


async def test_list_filter_value_types(api: Api) -> None:
    metas: list[dict[str, Any]] = [
        {"k": "1"},
        {"k": 1},
        {"k": True},
        {"k": 2.5},
        {"k": None},
        {"k": {"nested": [1, 2]}},
        {"k": [1, 2]},
        {"other": 1},
    ]
    configs = []
    for i, meta in enumerate(metas):
        checkpoint = empty_checkpoint()
        configs.append(await api.put(cfg(f"t{i}"), checkpoint, meta, {}))  # type: ignore[arg-type]

    async def matches(value: Any) -> list[int]:
        found = await api.list(None, filter={"k": value})
        return sorted(configs.index(t.config) for t in found)

    # Python equality decides: "1" != 1, while 1 == True == 1.0.
    assert await matches("1") == [0]
    assert await matches(1) == [1, 2]
    assert await matches(True) == [1, 2]
    assert await matches(1.0) == [1, 2]
    assert await matches(2.5) == [3]
    assert await matches(None) == [4]
    assert await matches({"nested": [1, 2]}) == [5]
    assert await matches([1, 2]) == [6]
    assert await matches("missing") == []


async def test_list_across_namespaces_and_threads(api: Api) -> None:
    root = await put_chain(api, [{"a": 1}, {"a": 2}], thread="t1", ns="")
    child = await put_chain(api, [{"b": 1}], thread="t1", ns="node:123")
    other = await put_chain(api, [{"c": 1}], thread="t2", ns="")

    all_ns = await api.list({"configurable": {"thread_id": "t1"}})
    assert [t.config for t in all_ns] == [child[0], root[1], root[0]]
    only_root = await api.list({"configurable": {"thread_id": "t1", "checkpoint_ns": ""}})
    assert [t.config for t in only_root] == [root[1], root[0]]
    only_child = await api.list({"configurable": {"thread_id": "t1", "checkpoint_ns": "node:123"}})
    assert [t.config for t in only_child] == [child[0]]
    assert only_child[0].checkpoint["channel_values"] == {"b": 1}

    everything = await api.list(None)
    assert [t.config for t in everything] == [other[0], child[0], root[1], root[0]]
    assert [t.config for t in await api.list({"configurable": {}})] == [
        t.config for t in everything
    ]
    assert [t.config for t in await api.list(None, limit=3)] == [other[0], child[0], root[1]]

    latest_child = await api.get_tuple(
        {"configurable": {"thread_id": "t1", "checkpoint_ns": "node:123"}}
    )
    assert latest_child is not None and latest_child.config == child[0]


async def test_list_paginates_beyond_one_page(api: Api) -> None:
    configs = await put_chain(api, [{"a": i} for i in range(230)])
    listed = await api.list(T1)
    assert [t.config for t in listed] == configs[::-1]
    limited = await api.list(T1, limit=150)
    assert [t.config for t in limited] == configs[::-1][:150]
    filtered = await api.list(T1, filter={"source": "loop", "x y": None}, limit=120)
    assert filtered == []
    odd = await api.list(T1, filter={"source": "loop"}, before=configs[201], limit=105)
    assert [t.config for t in odd] == configs[200::-1][:105]


# -- put_writes ------------------------------------------------------------------


async def test_put_writes_order_idempotence_and_special_replace(api: Api) -> None:
    (config,) = await put_chain(api, [{"a": 1}])
    await api.put_writes(config, [("a", 10), ("b", 20), ("__interrupt__", "i1")], "task-1", "p1")
    await api.put_writes(config, [("c", 30)], "task-0", "p0")
    # A re-run of task-1: regular writes are not duplicated, the interrupt is replaced.
    await api.put_writes(config, [("a", 11), ("b", 21), ("__interrupt__", "i2")], "task-1", "p1")
    # Special channels replace by (task_id, idx) regardless of position.
    await api.put_writes(config, [("__error__", "boom"), ("__resume__", 1)], "task-0", "p0")
    await api.put_writes(config, [("__error__", "boom2")], "task-0", "p0")

    saved = await api.get_tuple(config)
    assert saved is not None
    assert saved.pending_writes == [
        ("task-1", "a", 10),
        ("task-1", "b", 20),
        ("task-1", "__interrupt__", "i2"),
        ("task-0", "c", 30),
        ("task-0", "__error__", "boom2"),
        ("task-0", "__resume__", 1),
    ]
    assert api.count("writes") == 6

    # Writes belong to their checkpoint only.
    (other,) = await put_chain(api, [{"a": 1}], thread="t2")
    saved_other = await api.get_tuple(other)
    assert saved_other is not None and saved_other.pending_writes == []
    # ... and are visible through the latest lookup and list too.
    latest = await api.get_tuple({"configurable": {"thread_id": "t1"}})
    assert latest is not None and latest.pending_writes == saved.pending_writes
    listed = await api.list(T1)
    assert listed[0].pending_writes == saved.pending_writes


async def test_put_writes_needs_checkpoint_id(api: Api) -> None:
    with pytest.raises(ValueError, match="checkpoint_id"):
        await api.put_writes(T1, [("a", 1)], "task")


async def test_put_writes_empty_is_noop(api: Api) -> None:
    (config,) = await put_chain(api, [{"a": 1}])
    await api.put_writes(config, [], "task")
    saved = await api.get_tuple(config)
    assert saved is not None and saved.pending_writes == []


# -- delete ----------------------------------------------------------------------


async def test_delete_thread(api: Api) -> None:
    t1 = await put_chain(api, [{"a": 1}, {"a": 2}], thread="t1")
    await put_chain(api, [{"b": 1}], thread="t1", ns="sub:1")
    t2 = await put_chain(api, [{"a": 5}], thread="t2")
    await api.put_writes(t1[-1], [("a", 3)], "task")
    await api.put_writes(t2[-1], [("a", 6)], "task")
    assert api.count("blobs") == 4

    await api.delete_thread("t1")

    assert await api.get_tuple({"configurable": {"thread_id": "t1"}}) is None
    assert await api.get_tuple(cfg("t1", "sub:1")) is None
    assert await api.list({"configurable": {"thread_id": "t1"}}) == []
    remaining = await api.get_tuple({"configurable": {"thread_id": "t2"}})
    assert remaining is not None
    assert remaining.checkpoint["channel_values"] == {"a": 5}
    assert remaining.pending_writes == [("task", "a", 6)]
    assert api.count("checkpoints") == 1
    assert api.count("blobs") == 1
    assert api.count("writes") == 1
    await api.delete_thread("never-existed")
    # The thread can be used again after deletion.
    fresh = await put_chain(api, [{"z": 0}], thread="t1")
    again = await api.get_tuple(fresh[0])
    assert again is not None and again.checkpoint["channel_values"] == {"z": 0}


# -- channel values and versions ------------------------------------------------------


async def test_blob_dedup(api: Api) -> None:
    configs = await put_chain(
        api,
        [{"a": "a0", "b": "b0", "c": "c0"}, {"a": "a1"}, {"a": "a2"}],
    )
    # 3 channels stored once, plus one new value of "a" per later checkpoint.
    assert api.count("blobs") == 5
    assert api.count("checkpoints") == 3
    values = []
    for config in configs:
        saved = await api.get(config)
        assert saved is not None
        values.append(saved["channel_values"])
    assert values == [
        {"a": "a0", "b": "b0", "c": "c0"},
        {"a": "a1", "b": "b0", "c": "c0"},
        {"a": "a2", "b": "b0", "c": "c0"},
    ]


async def test_cleared_channel_stores_empty_marker(api: Api) -> None:
    saver = api.saver
    first = empty_checkpoint()
    v1 = saver.get_next_version(None, None)
    first["channel_values"] = {"tmp": "x", "keep": 1}
    first["channel_versions"] = {"tmp": v1, "keep": v1}
    c1 = await api.put(T1, first, {}, {"tmp": v1, "keep": v1})
    second = copy_checkpoint(first)
    second["id"] = empty_checkpoint()["id"]
    v2 = saver.get_next_version(v1, None)
    del second["channel_values"]["tmp"]  # the channel was cleared in this step
    second["channel_versions"]["tmp"] = v2
    c2 = await api.put(c1, second, {}, {"tmp": v2})
    got1, got2 = await api.get(c1), await api.get(c2)
    assert got1 is not None and got1["channel_values"] == {"tmp": "x", "keep": 1}
    assert got2 is not None and got2["channel_values"] == {"keep": 1}
    assert got2["channel_versions"] == {"tmp": v2, "keep": v1}


async def test_fork_from_older_checkpoint(api: Api) -> None:
    saver = api.saver
    c0, c1 = await put_chain(api, [{"a": "root"}, {"a": "main"}])
    parent = await api.get(c0)
    assert parent is not None
    children = []
    for label in ("fork-x", "fork-y"):
        child = create_checkpoint(parent, None, 1)
        version = saver.get_next_version(parent["channel_versions"]["a"], None)
        child["channel_versions"]["a"] = version
        child["channel_values"]["a"] = label
        children.append(await api.put(c0, child, {"source": "fork", "step": 1}, {"a": version}))
    for config, label in zip(children, ["fork-x", "fork-y"], strict=True):
        saved = await api.get_tuple(config)
        assert saved is not None
        assert saved.checkpoint["channel_values"] == {"a": label}
        assert saved.parent_config == c0
    main = await api.get(c1)
    assert main is not None and main["channel_values"] == {"a": "main"}
    root = await api.get(c0)
    assert root is not None and root["channel_values"] == {"a": "root"}
    forks = await api.list(T1, filter={"source": "fork"})
    assert [t.config for t in forks] == children[::-1]


async def test_versions_are_monotonic_strings(api: Api) -> None:
    saver = api.saver
    versions = [saver.get_next_version(None, None)]
    for _ in range(30):
        versions.append(saver.get_next_version(versions[-1], None))
    assert all(isinstance(v, str) for v in versions)
    assert all(a < b for a, b in itertools.pairwise(versions))
    assert [int(v.split(".")[0]) for v in versions] == list(range(1, 32))
    # Forks of one parent get different versions, both above the parent's.
    x, y = saver.get_next_version(versions[5], None), saver.get_next_version(versions[5], None)
    assert x != y and x > versions[5] and y > versions[5]
    # Ints (from the base scheme) are accepted as the current version.
    assert saver.get_next_version(9, None) > saver.get_next_version(8, None)
    assert saver.get_next_version(9, None).startswith("0" * 30 + "10.")


# -- safety ------------------------------------------------------------------------


async def test_sql_injection_filter_key_matches_nothing(api: Api) -> None:
    await put_chain(api, [{"a": 1}, {"a": 2}], meta={"user": "u"})
    before = api.count("checkpoints"), api.count("blobs")
    for key in ["x') OR 1=1 --", "user') OR 1=1 --", "$.user", 'user" OR 1=1', "a b"]:
        assert await api.list(None, filter={key: "u"}) == []
        assert await api.list(None, filter={key: 1}) == []
    assert await api.list(None, filter={"user": "u' OR '1'='1"}) == []
    assert (api.count("checkpoints"), api.count("blobs")) == before
    assert len(await api.list(None, filter={"user": "u"})) == 2
    conn = api.conn
    if conn is not None:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


async def test_metadata_key_with_odd_characters_filters_in_python(api: Api) -> None:
    checkpoint = empty_checkpoint()
    odd_key = "x') OR 1=1 --"
    config = await api.put(T1, checkpoint, {odd_key: "v", "step": 0}, {})  # type: ignore[misc]
    await put_chain(api, [{"a": 1}], thread="t2")
    assert [t.config for t in await api.list(None, filter={odd_key: "v"})] == [config]


# -- type fidelity -------------------------------------------------------------------


async def test_type_fidelity_round_trip(api: Api) -> None:
    """Every value of the serde fidelity cases comes back with the same type at every
    level, as a channel value and as a pending write."""
    cases, assert_same = load_fidelity_cases()
    assert len(cases) > 20
    saver = api.saver
    failures = []
    config: dict[str, Any] = T1
    parent: Checkpoint = empty_checkpoint()
    for step, (name, value, types) in enumerate(cases):
        if types:
            saver.serde.allow(*types)  # type: ignore[attr-defined]
        checkpoint = create_checkpoint(parent, None, step)
        version = saver.get_next_version(checkpoint["channel_versions"].get("value"), None)
        checkpoint["channel_values"]["value"] = value
        checkpoint["channel_versions"]["value"] = version
        metadata: Any = {"case": name}
        config = await api.put(config, checkpoint, metadata, {"value": version})
        await api.put_writes(config, [("value", value)], f"task-{step}")
        saved = await api.get_tuple(config)
        assert saved is not None and saved.pending_writes is not None
        for what, got in [
            ("channel value", saved.checkpoint["channel_values"].get("value")),
            ("pending write", saved.pending_writes[0][2] if saved.pending_writes else None),
        ]:
            try:
                assert_same(value, got)
            except AssertionError as exc:
                failures.append(f"{name} ({what}): {exc}")
        parent = checkpoint
    assert failures == []
