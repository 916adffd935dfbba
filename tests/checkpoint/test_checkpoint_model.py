"""The checkpoint model (``stategraph.checkpoint.base``): ids, helpers, base saver."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from typing import Any

import pytest

from stategraph.channels.binop import BinaryOperatorAggregate
from stategraph.channels.last_value import LastValue
from stategraph.checkpoint._ids import next_string_version, uuid6_str
from stategraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    SerializerProtocol,
    copy_checkpoint,
    create_checkpoint,
    empty_checkpoint,
    get_checkpoint_id,
    get_checkpoint_metadata,
    uuid6,
)
from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer

# -- uuid6 -------------------------------------------------------------------------


def test_uuid6_layout_and_time() -> None:
    before = time.time()
    u = uuid6()
    after = time.time()
    assert isinstance(u, uuid.UUID)
    assert u.version == 6
    assert u.variant == uuid.RFC_4122
    # Rebuild the 60-bit timestamp from the v6 layout and compare with the clock.
    ts = (u.int >> 80) << 12 | ((u.int >> 64) & 0x0FFF)
    unix = (ts - 0x01B21DD213814000) / 1e7
    assert before - 1 <= unix <= after + 1


def test_uuid6_node_and_clock_seq() -> None:
    u = uuid6(node=0xABCDEF123456, clock_seq=0x1234)
    assert u.node == 0xABCDEF123456
    assert u.clock_seq == 0x1234
    assert u.version == 6


def test_uuid6_str_is_the_canonical_text_of_the_same_fields(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``uuid6_str`` formats the fields directly; the text is ``str(UUID)`` of the id."""
    from stategraph.checkpoint import _ids

    monkeypatch.setattr(_ids, "_next_timestamp", lambda: 0x0ABCDEF123456789)
    for node, seq in [(0x123456789ABC, 5), (1, 0x3FFF), (0xFFFFFFFFFFFF, 0)]:
        text = uuid6_str(node=node, clock_seq=seq)
        assert text == str(uuid.UUID(int=_ids._uuid6_int(node, seq)))
        u = uuid.UUID(text)
        assert (u.version, u.node, u.clock_seq) == (6, node, seq)
        assert u.variant == uuid.RFC_4122


def test_uuid6_sorts_in_creation_order() -> None:
    ids = [uuid6_str() for _ in range(20_000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    uuids = [uuid6() for _ in range(1000)]
    assert uuids == sorted(uuids)
    assert [str(u) for u in uuids] == sorted(str(u) for u in uuids)
    assert all(uuid.UUID(i).version == 6 for i in ids[:100])


def test_uuid6_monotonic_across_threads() -> None:
    import threading

    out: list[list[str]] = [[] for _ in range(4)]

    def work(i: int) -> None:
        for _ in range(2000):
            out[i].append(uuid6_str())

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for ids in out:
        assert ids == sorted(ids)
    assert len({i for ids in out for i in ids}) == 8000


def test_next_string_version() -> None:
    assert next_string_version(None).startswith("0" * 31 + "1.")
    v = next_string_version(41)
    assert v.split(".")[0] == f"{42:032}"
    assert len(v.split(".")[1]) == 16
    assert next_string_version(2.0).split(".")[0] == f"{3:032}"
    assert next_string_version(v).split(".")[0] == f"{43:032}"
    with pytest.raises(ValueError, match="integer counter"):
        next_string_version("abc.def")
    with pytest.raises(TypeError, match="expected None, int, float or str"):
        next_string_version([1])  # type: ignore[arg-type]


# -- checkpoints -------------------------------------------------------------------


def test_empty_checkpoint() -> None:
    cp = empty_checkpoint()
    assert cp["v"] == 4
    assert uuid.UUID(cp["id"]).version == 6
    ts = datetime.fromisoformat(cp["ts"])
    assert ts.tzinfo is not None and ts.utcoffset() == timezone.utc.utcoffset(None)
    assert abs((datetime.now(timezone.utc) - ts).total_seconds()) < 5
    assert cp["channel_values"] == {}
    assert cp["channel_versions"] == {}
    assert cp["versions_seen"] == {}
    assert cp["updated_channels"] is None
    assert empty_checkpoint()["id"] > cp["id"]


def test_copy_checkpoint_is_independent() -> None:
    cp = empty_checkpoint()
    shared = [1, 2]
    cp["channel_values"] = {"a": shared}
    cp["channel_versions"] = {"a": 1}
    cp["versions_seen"] = {"node": {"a": 1}}
    cp["updated_channels"] = ["a"]
    copy = copy_checkpoint(cp)
    assert copy == cp
    copy["channel_values"]["b"] = 2
    copy["channel_versions"]["a"] = 2
    copy["versions_seen"]["node"]["a"] = 2
    copy["versions_seen"]["other"] = {}
    assert copy["updated_channels"] is not None
    copy["updated_channels"].append("b")
    assert cp["channel_values"] == {"a": [1, 2]}
    assert cp["channel_versions"] == {"a": 1}
    assert cp["versions_seen"] == {"node": {"a": 1}}
    assert cp["updated_channels"] == ["a"]
    assert copy["channel_values"]["a"] is shared  # values themselves are shared


def test_create_checkpoint_from_channels() -> None:
    import operator

    base = empty_checkpoint()
    base["channel_values"] = {"stale": 1}
    base["channel_versions"] = {"a": 3, "total": 2}
    base["versions_seen"] = {"node": {"a": 2}}
    a: LastValue[str] = LastValue(str, "a")
    a.update(["hello"])
    total = BinaryOperatorAggregate(int, operator.add, "total")
    total.update([5])
    empty: LastValue[str] = LastValue(str, "empty")
    cp = create_checkpoint(base, {"a": a, "total": total, "empty": empty}, 4)
    assert cp["channel_values"] == {"a": "hello", "total": 5}
    assert cp["channel_versions"] == {"a": 3, "total": 2}
    assert cp["versions_seen"] == {"node": {"a": 2}}
    assert cp["id"] > base["id"]
    assert cp["v"] == 4
    assert cp["updated_channels"] is None
    cp["versions_seen"]["node"]["a"] = 99
    cp["channel_versions"]["a"] = 99
    assert base["versions_seen"] == {"node": {"a": 2}}
    assert base["channel_versions"] == {"a": 3, "total": 2}


def test_create_checkpoint_keeps_values_without_channels() -> None:
    base = empty_checkpoint()
    base["channel_values"] = {"x": [1]}
    cp = create_checkpoint(base, None, 0, id="fixed-id", updated_channels=("x",))
    assert cp["id"] == "fixed-id"
    assert cp["channel_values"] == {"x": [1]}
    assert cp["channel_values"] is not base["channel_values"]
    assert cp["updated_channels"] == ["x"]


def test_get_checkpoint_id_and_idx_map() -> None:
    assert get_checkpoint_id({"configurable": {"checkpoint_id": "abc"}}) == "abc"
    assert get_checkpoint_id({"configurable": {}}) is None
    assert get_checkpoint_id({}) is None
    assert WRITES_IDX_MAP == {
        "__error__": -1,
        "__scheduled__": -2,
        "__interrupt__": -3,
        "__resume__": -4,
        "__resume_asked__": -5,
        "__call_resume__": -6,
    }


def test_get_checkpoint_metadata() -> None:
    import enum

    class Color(str, enum.Enum):
        RED = "red"

    class Level(enum.IntEnum):
        HIGH = 3

    config = {
        "configurable": {
            "thread_id": "t",
            "checkpoint_id": "c",
            "checkpoint_ns": "",
            "langgraph_node": "n",
            "__pregel_x": 1,
            "user": "from-configurable",
            "color": Color.RED,
            "level": Level.HIGH,
            "flag": True,
            "ratio": 0.5,
            "nothing": None,
            "items": [1],
            7: "not a str key",
        },
        "metadata": {"user": "from-metadata", "run": 1, "nested": {"a": 1}},
    }
    merged = get_checkpoint_metadata(config, {"step": 2, "source": "loop"})
    assert merged == {
        "step": 2,
        "source": "loop",
        "user": "from-metadata",
        "run": 1,
        "color": "red",
        "level": 3,
        "flag": True,
        "ratio": 0.5,
    }
    assert type(merged["color"]) is str  # type: ignore[typeddict-item]
    assert type(merged["level"]) is int  # type: ignore[typeddict-item]
    assert get_checkpoint_metadata({}, {"step": 1}) == {"step": 1}


def test_checkpoint_tuple_defaults() -> None:
    cp = empty_checkpoint()
    t = CheckpointTuple({"configurable": {}}, cp, {"step": 1})
    assert t.parent_config is None
    assert t.pending_writes is None
    assert t.checkpoint is cp


# -- the base saver ------------------------------------------------------------------


class DictSaver(BaseCheckpointSaver[int]):
    """A minimal sync-only saver: the base class supplies the async twins."""

    def __init__(self) -> None:
        super().__init__()
        self.saved: dict[str, CheckpointTuple] = {}
        self.writes: list[tuple[str, str, Any]] = []

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        cid = get_checkpoint_id(config)
        if cid is None:
            return self.saved[max(self.saved)] if self.saved else None
        return self.saved.get(cid)

    def list(
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        for key in sorted(self.saved, reverse=True)[:limit]:
            yield self.saved[key]

    def put(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        conf = {"configurable": {"thread_id": "t", "checkpoint_id": checkpoint["id"]}}
        self.saved[checkpoint["id"]] = CheckpointTuple(conf, checkpoint, metadata)
        return conf

    def put_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.writes.extend((task_id, c, v) for c, v in writes)

    def delete_thread(self, thread_id: str) -> None:
        self.saved.clear()


class AsyncOnlySaver(BaseCheckpointSaver[int]):
    async def aget_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        return None


async def test_async_twins_delegate_to_sync_methods() -> None:
    saver = DictSaver()
    assert isinstance(saver.serde, JsonPlusSerializer)
    configs = []
    for _ in range(70):
        configs.append(await saver.aput({}, empty_checkpoint(), {}, {}))
    got = await saver.aget_tuple(configs[3])
    assert got is not None and got.config == configs[3]
    assert (await saver.aget(configs[3])) == got.checkpoint
    listed = [t.config async for t in saver.alist(None)]
    assert listed == configs[::-1]
    assert [t.config async for t in saver.alist(None, limit=2)] == configs[::-1][:2]
    await saver.aput_writes(configs[0], [("a", 1)], "task")
    assert saver.writes == [("task", "a", 1)]
    await saver.adelete_thread("t")
    assert saver.saved == {}


def test_sync_methods_of_async_only_saver_say_what_to_do() -> None:
    saver = AsyncOnlySaver()
    with pytest.raises(NotImplementedError, match=r"async-only.*await saver\.aget_tuple"):
        saver.get_tuple({"configurable": {"thread_id": "t"}})
    with pytest.raises(NotImplementedError, match=r"must implement put\(\) or aput\(\)"):
        saver.put({}, empty_checkpoint(), {}, {})
    assert asyncio.run(saver.aget({"configurable": {}})) is None


async def test_unimplemented_async_methods_say_what_to_do() -> None:
    saver = AsyncOnlySaver()
    with pytest.raises(NotImplementedError, match=r"must implement put\(\) or aput\(\)"):
        await saver.aput({}, empty_checkpoint(), {}, {})
    with pytest.raises(NotImplementedError, match=r"list\(\) or alist\(\)"):
        [t async for t in saver.alist(None)]
    with pytest.raises(NotImplementedError, match="put_writes"):
        await saver.aput_writes({}, [], "t")
    with pytest.raises(NotImplementedError, match="delete_thread"):
        await saver.adelete_thread("t")


def test_base_get_next_version_counts_ints() -> None:
    saver = DictSaver()
    assert saver.get_next_version(None, None) == 1
    assert saver.get_next_version(1, None) == 2
    assert saver.get_next_version(41, None) == 42
    with pytest.raises(TypeError, match="must override get_next_version"):
        saver.get_next_version("0001.abc", None)  # type: ignore[arg-type]


def test_default_serde_without_super_init() -> None:
    class NoSuperInit(DictSaver):
        def __init__(self) -> None:
            self.saved = {}

    saver = NoSuperInit()
    assert isinstance(saver.serde, JsonPlusSerializer)
    assert saver.serde is saver.serde  # created once per instance
    assert NoSuperInit().serde is not saver.serde


def test_custom_and_untyped_serde() -> None:
    import json

    class JsonModule:
        def dumps(self, obj: Any) -> bytes:
            return json.dumps(obj).encode()

        def loads(self, data: bytes) -> Any:
            return json.loads(data)

    from stategraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver(serde=JsonModule())  # type: ignore[arg-type]
    assert isinstance(saver.serde, SerializerProtocol)
    cp = empty_checkpoint()
    cp["channel_values"] = {"a": [1, 2]}
    cp["channel_versions"] = {"a": "1"}
    config = saver.put({"configurable": {"thread_id": "t"}}, cp, {"step": 1}, {"a": "1"})
    got = saver.get_tuple(config)
    assert got is not None
    assert got.checkpoint["channel_values"] == {"a": [1, 2]}
    assert got.metadata == {"step": 1}


def test_importing_savers_stays_light() -> None:
    code = (
        "import sys\n"
        "import stategraph.checkpoint.base, stategraph.checkpoint.memory\n"
        "heavy = [m for m in ('asyncio', 'sqlite3', 'concurrent.futures', 'pydantic',"
        " 'ormsgpack', 'uuid') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_next_string_version_counts_from_any_version_not_only_the_last_made() -> None:
    """The counter of the version made last is kept; any other version is parsed."""
    first = next_string_version(None)
    second = next_string_version(first)
    third = next_string_version(second)
    assert [v.split(".")[0][-1] for v in (first, second, third)] == ["1", "2", "3"]
    # an older version, and a copy of the last one (equal text, another object)
    assert next_string_version(first).startswith("0" * 31 + "2.")
    assert next_string_version("".join(list(third))).startswith("0" * 31 + "4.")
    assert next_string_version("00000000000000000000000000000041.00").startswith("0" * 30 + "42.")
    assert len(next_string_version(None)) == 49
