"""``InMemorySaver``: a checkpoint saver that keeps everything in process memory.

Meant for tests, notebooks and experiments: nothing survives the process. Everything
is stored serialized (through ``serde``), so what is read back is always a copy and
never the live object a node still holds. Channel values are stored once per
``(channel, version)``: a checkpoint whose channel did not change reuses the value
saved with an earlier one.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator, Sequence
from types import TracebackType
from typing import Any, Optional

from stategraph.checkpoint._ids import next_string_version
from stategraph.checkpoint._util import checkpoint_config, metadata_matches, thread_ns_id
from stategraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
    SerializerProtocol,
    dump_channel_value,
    get_checkpoint_metadata,
)
from stategraph.constants import CONF

__all__ = ["InMemorySaver", "MemorySaver"]

Typed = tuple[str, bytes]
# checkpoint id -> (checkpoint without channel_values, metadata, parent checkpoint id)
SavedCheckpoint = tuple[Typed, Typed, Optional[str]]
# (task_id, idx) -> (task_id, channel, value, task_path)
SavedWrite = tuple[str, str, Typed, str]
BlobKey = tuple[str, str, str, Any]


class InMemorySaver(BaseCheckpointSaver[str]):
    """Checkpoint saver that keeps checkpoints in memory (lost when the process ends).

    Storage layout (all values serialized with ``serde``):

    * ``storage[thread_id][checkpoint_ns][checkpoint_id] =
      (checkpoint without channel_values, metadata, parent_checkpoint_id)``
    * ``blobs[(thread_id, checkpoint_ns, channel, version)] = value`` (``None`` when
      the channel has a version but no value), written only for the channels in
      ``new_versions``;
    * ``writes[(thread_id, checkpoint_ns, checkpoint_id)][(task_id, idx)] =
      (task_id, channel, value, task_path)``.

    Thread-safe (one re-entrant lock). The async methods run inline: there is no I/O.
    Versions are strings (see :meth:`get_next_version`).
    """

    def __init__(self, *, serde: SerializerProtocol | None = None) -> None:
        """Create an empty saver; ``serde`` defaults to ``JsonPlusSerializer()``."""
        super().__init__(serde=serde)
        self.storage: defaultdict[str, defaultdict[str, dict[str, SavedCheckpoint]]] = defaultdict(
            lambda: defaultdict(dict)
        )
        self.writes: defaultdict[tuple[str, str, str], dict[tuple[str, int], SavedWrite]] = (
            defaultdict(dict)
        )
        self.blobs: dict[BlobKey, Typed | None] = {}
        self._latest: dict[tuple[str, str], str] = {}
        self._lock = threading.RLock()

    def __enter__(self) -> InMemorySaver:
        """Return the saver itself (for ``with InMemorySaver() as saver:``)."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Nothing to release."""

    async def __aenter__(self) -> InMemorySaver:
        """Return the saver itself (for ``async with InMemorySaver() as saver:``)."""
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Nothing to release."""

    # -- reading ---------------------------------------------------------------

    def _load(
        self, thread_id: str, ns: str, checkpoint_id: str, saved: SavedCheckpoint
    ) -> CheckpointTuple:
        """Rebuild a tuple from storage; the caller holds the lock."""
        loads = self.serde.loads_typed
        cp_typed, md_typed, parent_id = saved
        checkpoint: Checkpoint = loads(cp_typed)
        values: dict[str, Any] = {}
        for channel, version in checkpoint["channel_versions"].items():
            blob = self.blobs.get((thread_id, ns, channel, version))
            if blob is not None:
                values[channel] = loads(blob)
        checkpoint["channel_values"] = values
        bucket = self.writes.get((thread_id, ns, checkpoint_id), {})
        pending: list[PendingWrite] = [
            (task_id, channel, loads(value)) for task_id, channel, value, _ in bucket.values()
        ]
        return CheckpointTuple(
            config=checkpoint_config(thread_id, ns, checkpoint_id),
            checkpoint=checkpoint,
            metadata=loads(md_typed),
            parent_config=(
                checkpoint_config(thread_id, ns, parent_id) if parent_id is not None else None
            ),
            pending_writes=pending,
        )

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """Return the checkpoint named by ``config`` or the latest of its
        ``(thread_id, checkpoint_ns)``, with its pending writes; ``None`` if absent."""
        thread_id, ns, checkpoint_id = thread_ns_id(config, "InMemorySaver.get_tuple")
        with self._lock:
            if checkpoint_id is None:
                checkpoint_id = self._latest.get((thread_id, ns))
                if checkpoint_id is None:
                    return None
            by_ns = self.storage.get(thread_id)
            saved = by_ns.get(ns, {}).get(checkpoint_id) if by_ns is not None else None
            if saved is None:
                return None
            return self._load(thread_id, ns, checkpoint_id, saved)

    def list(
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Yield matching checkpoints newest first (see ``BaseCheckpointSaver.list``)."""
        conf = (config or {}).get(CONF) or {}
        thread_id = conf.get("thread_id")
        ns_given = "checkpoint_ns" in conf
        ns_wanted = conf.get("checkpoint_ns") or ""
        id_wanted = conf.get("checkpoint_id")
        before_id = ((before or {}).get(CONF) or {}).get("checkpoint_id")
        if limit is not None and limit <= 0:
            return
        with self._lock:
            if thread_id is not None:
                threads = [str(thread_id)] if str(thread_id) in self.storage else []
            else:
                threads = list(self.storage)
            keys: list[tuple[str, str, str]] = []
            for tid in threads:
                for ns, by_id in self.storage[tid].items():
                    if ns_given and ns != ns_wanted:
                        continue
                    for cid in by_id:
                        if id_wanted is not None and cid != id_wanted:
                            continue
                        if before_id is not None and cid >= before_id:
                            continue
                        keys.append((cid, tid, ns))
        keys.sort(reverse=True)
        count = 0
        for cid, tid, ns in keys:
            with self._lock:
                ns_map = self.storage.get(tid)
                id_map = ns_map.get(ns) if ns_map is not None else None
                saved = id_map.get(cid) if id_map is not None else None
                if saved is None:
                    continue  # deleted meanwhile
                if filter and not metadata_matches(self.serde.loads_typed(saved[1]), filter):
                    continue
                item = self._load(tid, ns, cid, saved)
            yield item
            count += 1
            if limit is not None and count >= limit:
                return

    # -- writing ---------------------------------------------------------------

    def put(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        """Save ``checkpoint`` (values only for channels in ``new_versions``) and
        return its config; ``config``'s ``checkpoint_id`` is recorded as the parent and
        its scalar user keys are added to the metadata (``get_checkpoint_metadata``)."""
        thread_id, ns, parent_id = thread_ns_id(config, "InMemorySaver.put")
        body = dict(checkpoint)
        values: dict[str, Any] = body.pop("channel_values")  # type: ignore[assignment]
        blobs: dict[BlobKey, Typed | None] = {
            (thread_id, ns, channel, version): (
                dump_channel_value(self.serde, channel, values[channel])
                if channel in values
                else None
            )
            for channel, version in new_versions.items()
        }
        stored_metadata = get_checkpoint_metadata(config, metadata)
        saved: SavedCheckpoint = (
            self.serde.dumps_typed(body),
            self.serde.dumps_typed(stored_metadata),
            parent_id,
        )
        checkpoint_id = checkpoint["id"]
        with self._lock:
            self.blobs.update(blobs)
            self.storage[thread_id][ns][checkpoint_id] = saved
            latest = self._latest.get((thread_id, ns))
            if latest is None or checkpoint_id > latest:
                self._latest[(thread_id, ns)] = checkpoint_id
        return checkpoint_config(thread_id, ns, checkpoint_id)

    def put_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save task ``task_id``'s writes against ``config``'s checkpoint: special
        channels replace, regular writes are kept only if absent."""
        thread_id, ns, checkpoint_id = thread_ns_id(config, "InMemorySaver.put_writes")
        if checkpoint_id is None:
            raise ValueError(
                "InMemorySaver.put_writes needs config['configurable']['checkpoint_id']: "
                "the id of the checkpoint the writes belong to."
            )
        rows = [
            (
                WRITES_IDX_MAP.get(channel, i),
                channel,
                dump_channel_value(self.serde, channel, value),
            )
            for i, (channel, value) in enumerate(writes)
        ]
        with self._lock:
            bucket = self.writes[(thread_id, ns, checkpoint_id)]
            for idx, channel, value in rows:
                key = (task_id, idx)
                if idx >= 0 and key in bucket:
                    continue
                bucket[key] = (task_id, channel, value, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and value of ``thread_id``."""
        thread_id = str(thread_id)
        with self._lock:
            self.storage.pop(thread_id, None)
            for wkey in [k for k in self.writes if k[0] == thread_id]:
                del self.writes[wkey]
            for bkey in [k for k in self.blobs if k[0] == thread_id]:
                del self.blobs[bkey]
            for lkey in [k for k in self._latest if k[0] == thread_id]:
                del self._latest[lkey]

    # -- async twins (no I/O: run inline) ----------------------------------------

    async def aget_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """Async twin of :meth:`get_tuple`."""
        return self.get_tuple(config)

    async def alist(
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Async twin of :meth:`list`."""
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        """Async twin of :meth:`put`."""
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Async twin of :meth:`put_writes`."""
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """Async twin of :meth:`delete_thread`."""
        self.delete_thread(thread_id)

    def get_next_version(self, current: str | int | float | None, channel: None) -> str:
        """Return ``f"{step:032}.{16 random hex digits}"`` with ``step`` one more than
        ``current``'s. Zero padding makes string order numeric order; the random
        suffix keeps forks of one parent from colliding on ``(channel, version)``."""
        return next_string_version(current)


MemorySaver = InMemorySaver
"""Alias of :class:`InMemorySaver` (LangGraph's older name)."""
