"""``InMemorySaver``: a checkpoint saver that keeps everything in process memory.

Meant for tests, notebooks and experiments: nothing survives the process. Everything
is stored serialized (through ``serde``), so what is read back is always a copy and
never the live object a node still holds. Channel values are stored once per
``(channel, version)``: a checkpoint whose channel did not change reuses the value
saved with an earlier one.

One exception to "serialized": the text of a large message (its ``content`` string,
from :data:`SHARED_TEXT` characters) is kept as the ``str`` object itself, cut out of
the stored bytes and put back on read. A ``str`` is immutable, so the saved message
still cannot change, and a chat's text is held once in the process instead of twice
(once by the live state, once as bytes here).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Optional, Union, cast

from stategraph.checkpoint._compact import pack_checkpoint, unpack_checkpoint
from stategraph.checkpoint._delta_history import DeltaChannelHistory
from stategraph.checkpoint._ids import next_string_version
from stategraph.checkpoint._intern import Interner, Resolver
from stategraph.checkpoint._list_delta import DELTA_TYPE, ListDeltaCodec, Pending
from stategraph.checkpoint._retention import (
    PruneStrategy,
    Sweeper,
    SweeperThread,
    TTLConfig,
    check_prune_args,
    check_ttl,
    close_over_deltas,
    keep_latest,
    keep_without_runs,
    partition,
)
from stategraph.checkpoint._seal import Sealer, item_fetcher, referenced, sealer_of, stored_base
from stategraph.checkpoint._util import (
    check_ids,
    checkpoint_config,
    list_args,
    metadata_matches,
    thread_ns_id,
    writes_target,
)
from stategraph.checkpoint._values import StoredValues
from stategraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    Config,
    Filter,
    PendingWrite,
    SerializerProtocol,
    Writes,
    get_checkpoint_metadata,
)
from stategraph.checkpoint.lease import Lease, lease_token
from stategraph.constants import CONF

__all__ = ["InMemorySaver", "MemorySaver"]

Typed = tuple[str, bytes]
# checkpoint id -> (checkpoint without channel_values, metadata, parent checkpoint id)
SavedCheckpoint = tuple[Typed, Typed, Optional[str]]
# (task_id, idx) -> (task_id, channel, value, task_path)
SavedWrite = tuple[str, str, Typed, str]
BlobKey = tuple[str, str, str, Any]
ItemKey = tuple[str, str, bytes]  # thread_id, checkpoint_ns, hash
# an item whose text is shared: (type, bytes without the text, where it was, the text)
SharedItem = tuple[str, bytes, int, str]
Item = Union[Typed, SharedItem]

SHARED_TEXT = 1024
"""Message text from this many characters is kept as the ``str`` itself (see the module
docstring); shorter text stays in the bytes (sharing it would save little)."""


_HEAD = 64
"""How many bytes of a text :func:`share_text` searches for (then it compares it whole)."""


def share_text(typed: Typed, element: Any) -> Item:
    """``typed`` (the serialized ``element``) with the text of ``element`` (a message
    object or dict with a ``str`` ``content`` of :data:`SHARED_TEXT` characters or
    more) cut out of the bytes and kept as the ``str`` itself; ``typed`` unchanged when
    there is no such text or its UTF-8 bytes are not found in ``typed``."""
    try:
        text = (
            element.get("content") if type(element) is dict else getattr(element, "content", None)
        )
    except Exception:  # an object whose ``content`` property fails: nothing to share
        return typed
    if type(text) is not str or len(text) < SHARED_TEXT:
        return typed
    try:
        encoded = text.encode()
    except UnicodeEncodeError:  # lone surrogates: serde stored the text some other way
        return typed
    # find the text by its first bytes, then compare it whole where they are: a search
    # for the whole text costs ~10 instructions per byte, this ~1 per 30
    data = typed[1]
    head = encoded[:_HEAD]
    at = data.find(head)
    while at >= 0 and not data.startswith(encoded, at):
        at = data.find(head, at + 1)
    if at < 0:
        return typed
    return typed[0], data[:at] + data[at + len(encoded) :], at, text


def whole_item(item: Item) -> Typed:
    """The serialized ``(type, bytes)`` of a stored item, its shared text put back."""
    if len(item) == 2:
        return item
    tp, rest, at, text = item
    return tp, b"".join((rest[:at], text.encode(), rest[at:]))


class _SharingInterner(Interner):
    """The in-memory saver's interner: large message text stays a shared ``str``."""

    def keep(self, typed: Typed, element: Any) -> Item:
        """``typed`` with the text of ``element`` shared (see :func:`share_text`)."""
        return share_text(typed, element)


class InMemorySaver(SweeperThread, StoredValues, BaseCheckpointSaver[str]):
    """Checkpoint saver that keeps checkpoints in memory (lost when the process ends).

    Storage layout (all values serialized with ``serde``):

    * ``storage[thread_id][checkpoint_ns][checkpoint_id] =
      (checkpoint without channel_values, metadata, parent_checkpoint_id)``
    * ``blobs[(thread_id, checkpoint_ns, channel, version)] = value`` (``None`` when
      the channel has a version but no value), written only for the channels in
      ``new_versions``;
    * ``writes[(thread_id, checkpoint_ns, checkpoint_id)][(task_id, idx)] =
      (task_id, channel, value, task_path)``;
    * ``items[(thread_id, checkpoint_ns, hash)] = item``: the large elements of list
      values, stored once per thread and referred to by hash from the values and
      writes (see ``_intern``).

    Thread-safe (one re-entrant lock). The async methods run inline: there is no I/O.
    Versions are strings (see :meth:`get_next_version`). Leases are in-process
    (:class:`~stategraph.checkpoint.lease.LocalLeases`) and fence every write.
    """

    lease_fencing = True
    lease_rollback_supported = True
    _sweeper_name = "stategraph-ttl-memory"
    _ttl_example_args = ""

    def __init__(
        self,
        *,
        serde: SerializerProtocol | None = None,
        delta_storage: bool = True,
        ttl: TTLConfig | None = None,
        intern_items: bool = True,
    ) -> None:
        """Create an empty saver; ``serde`` defaults to ``JsonPlusSerializer()``.

        ``delta_storage`` (default on) stores a new version of a list value as the
        change from the version stored before it (see the persistence guide);
        ``False`` stores every version whole, as releases before it did.
        ``intern_items`` (default on) stores each large element of a list value once
        per thread and refers to it by hash elsewhere; ``False`` stores values whole.
        ``ttl`` (``{"default_ttl": minutes, ...}``) lets :meth:`sweep` delete threads
        not written (or read) for that long.
        """
        super().__init__(serde=serde)
        self.ttl = check_ttl(ttl, "InMemorySaver")
        self._touched: dict[str, float] = {}
        self._sweeper: Sweeper | None = None
        self.storage: defaultdict[str, defaultdict[str, dict[str, SavedCheckpoint]]] = defaultdict(
            lambda: defaultdict(dict)
        )
        self.writes: defaultdict[tuple[str, str, str], dict[tuple[str, int], SavedWrite]] = (
            defaultdict(dict)
        )
        self.blobs: dict[BlobKey, Typed | None] = {}
        self.items: dict[ItemKey, Item] = {}
        self._init_values(delta_storage, intern_items)
        if self.interner is not None:
            self.interner = _SharingInterner(self)
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
        sealer = sealer_of(self.serde)
        if sealer is not None:
            cp_typed = sealer.unseal(("c", thread_id, ns, checkpoint_id), cp_typed)
            md_typed = sealer.unseal(("m", thread_id, ns, checkpoint_id), md_typed)
        checkpoint: Checkpoint = unpack_checkpoint(loads(cp_typed), checkpoint_id)  # type: ignore[assignment]
        values: dict[str, Any] = {}
        codec = self.delta
        if codec is not None:
            codec.serde = self.serde
        resolver = self._resolver(thread_id, ns, sealer)
        for channel, version in checkpoint["channel_versions"].items():
            blob = self.blobs.get((thread_id, ns, channel, version))
            if blob is None:
                continue
            if sealer is not None:
                blob = sealer.unseal(("b", thread_id, ns, channel, version), blob)
            if codec is None:
                values[channel] = resolver.loads(blob, channel)
            else:

                def fetch(v: Any, _c: str = channel) -> Typed | None:
                    found = self.blobs.get((thread_id, ns, _c, v))
                    if found is not None and sealer is not None:
                        return sealer.unseal(("b", thread_id, ns, _c, v), found)
                    return found

                values[channel] = codec.decode(
                    (thread_id, ns, channel), version, blob, fetch, resolver.loader(channel)
                )
        checkpoint["channel_values"] = values
        bucket = self.writes.get((thread_id, ns, checkpoint_id), {})
        pending: list[PendingWrite] = [
            (
                task_id,
                channel,
                resolver.loads(
                    value
                    if sealer is None
                    else sealer.unseal(
                        ("w", thread_id, ns, checkpoint_id, task_id, channel), value
                    ),
                    channel,
                ),
            )
            for task_id, channel, value, _ in bucket.values()
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

    def _resolver(self, thread_id: str, ns: str, sealer: Sealer | None = None) -> Resolver:
        """A resolver of the interned items of ``(thread_id, ns)`` (lock held)."""

        if sealer is not None:  # sealed items are stored whole
            sealed = cast("dict[ItemKey, Typed]", self.items)
            return Resolver(self.serde, thread_id, item_fetcher(sealed, thread_id, ns, sealer))
        items = self.items

        def fetch(hashes: list[bytes]) -> dict[bytes, Typed]:
            found: dict[bytes, Typed] = {}
            for h in hashes:
                item = items.get((thread_id, ns, h))
                if item is not None:
                    found[h] = whole_item(item)
            return found

        return Resolver(self.serde, thread_id, fetch)

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
            if self.ttl is not None and self.ttl.get("refresh_on_read", True):
                self._touched[thread_id] = time.time()
            return self._load(thread_id, ns, checkpoint_id, saved)

    def _list(
        self, config: Config | None, filter: Filter, before: Config | None, limit: int | None
    ) -> Iterator[CheckpointTuple]:
        """``list``: matching checkpoints newest first, each read under the lock."""
        config, filter, before, limit = list_args(config, filter, before, limit)
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
                if filter:
                    md = saved[1]
                    sealer = sealer_of(self.serde)
                    if sealer is not None:
                        md = sealer.unseal(("m", tid, ns, cid), md)
                    if not metadata_matches(self.serde.loads_typed(md), filter):
                        continue
                item = self._load(tid, ns, cid, saved)
            yield item
            count += 1
            if limit is not None and count >= limit:
                return

    # -- writing ---------------------------------------------------------------

    def _put(
        self, config: Config, checkpoint: Checkpoint, meta: CheckpointMetadata, new: ChannelVersions
    ) -> dict[str, Any]:
        """``put``: save ``checkpoint`` (values only for channels in ``new``) and
        return its config; ``config``'s ``checkpoint_id`` is recorded as the parent and
        its scalar user keys are added to the metadata (``get_checkpoint_metadata``)."""
        thread_id, ns, parent_id = thread_ns_id(config, "InMemorySaver.put")
        body = dict(checkpoint)
        values: dict[str, Any] = body.pop("channel_values")  # type: ignore[assignment]
        blobs: dict[BlobKey, Typed | None] = {}
        items: dict[bytes, Typed] = {}
        codec = self.delta
        pending: list[Pending] = []
        for channel, version in new.items():
            if channel not in values:
                blobs[(thread_id, ns, channel, version)] = None
                continue
            typed, entry = self._encode((thread_id, ns, channel), version, values[channel], items)
            blobs[(thread_id, ns, channel, version)] = typed
            if entry is not None:
                pending.append(entry)
        stored_metadata = get_checkpoint_metadata(config, meta)
        checkpoint_id = checkpoint["id"]
        saved: SavedCheckpoint = (
            self.serde.dumps_typed(pack_checkpoint(body)),
            self.serde.dumps_typed(stored_metadata),
            parent_id,
        )
        sealer = sealer_of(self.serde)
        if sealer is not None:
            saved = (
                sealer.seal(("c", thread_id, ns, checkpoint_id), saved[0]),
                sealer.seal(("m", thread_id, ns, checkpoint_id), saved[1]),
                parent_id,
            )
        token = lease_token(config)
        with self._lock:
            if token is not None:
                leases = self._local_leases()
                leases.check(thread_id, token)
                leases.record(thread_id, token, ns, checkpoint_id)
            for i, entry in enumerate(pending):
                if entry.base is not None and (thread_id, ns, entry.key[2], entry.base) not in (
                    self.blobs
                ):
                    # the base is gone (pruned since the delta was made): store whole
                    channel = entry.key[2]
                    typed = self._dump(channel, values[channel], items)
                    blobs[(thread_id, ns, channel, entry.version)] = typed
                    pending[i] = ListDeltaCodec.as_snapshot(entry, typed)
            self._store_items(thread_id, ns, items, sealer)
            for bkey, stored in blobs.items():
                if stored is not None and stored[0] == DELTA_TYPE and bkey in self.blobs:
                    continue  # this version is stored already (whole or as a delta)
                self.blobs[bkey] = (
                    stored
                    if stored is None or sealer is None
                    else sealer.seal(("b", *bkey), stored)
                )
            self.storage[thread_id][ns][checkpoint_id] = saved
            if self.ttl is not None:
                self._touched[thread_id] = time.time()
            if codec is not None:
                for entry in pending:
                    codec.commit(entry)
            latest = self._latest.get((thread_id, ns))
            if latest is None or checkpoint_id > latest:
                self._latest[(thread_id, ns)] = checkpoint_id
        return checkpoint_config(thread_id, ns, checkpoint_id)

    def _put_writes(self, config: Config, writes: Writes, task_id: str, task_path: str) -> None:
        """``put_writes``: save task ``task_id``'s writes against ``config``'s
        checkpoint: special channels replace, regular writes are kept only if absent."""
        thread_id, ns, checkpoint_id = writes_target(config, "InMemorySaver.put_writes")
        items: dict[bytes, Typed] = {}
        rows = [
            (
                WRITES_IDX_MAP.get(channel, i),
                channel,
                self._dump(channel, value, items),
            )
            for i, (channel, value) in enumerate(writes)
        ]
        token = lease_token(config)
        with self._lock:
            if token is not None:
                self._local_leases().check(thread_id, token)
            bucket = self.writes[(thread_id, ns, checkpoint_id)]
            if self.ttl is not None:
                self._touched[thread_id] = time.time()
            sealer = sealer_of(self.serde)
            self._store_items(thread_id, ns, items, sealer)
            for idx, channel, value in rows:
                key = (task_id, idx)
                if idx >= 0 and key in bucket:
                    continue
                if sealer is not None:
                    value = sealer.seal(
                        ("w", thread_id, ns, checkpoint_id, task_id, channel), value
                    )
                bucket[key] = (task_id, channel, value, task_path)

    def _store_items(
        self, thread_id: str, ns: str, items: Mapping[bytes, Item], sealer: Sealer | None
    ) -> None:
        """Add interned ``items`` of ``(thread_id, ns)`` (lock held), sealed (and so
        stored whole) if encrypting."""
        for h, item in items.items():
            key = (thread_id, ns, h)
            if key not in self.items:
                self.items[key] = (
                    item
                    if sealer is None
                    else sealer.seal(("i", thread_id, ns, h.hex()), whole_item(item))
                )

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and value of ``thread_id``."""
        check_ids("delete_thread", thread_id=thread_id)
        thread_id = str(thread_id)
        with self._lock:
            self.storage.pop(thread_id, None)
            for wkey in [k for k in self.writes if k[0] == thread_id]:
                del self.writes[wkey]
            for bkey in [k for k in self.blobs if k[0] == thread_id]:
                del self.blobs[bkey]
            for ikey in [k for k in self.items if k[0] == thread_id]:
                del self.items[ikey]
            for lkey in [k for k in self._latest if k[0] == thread_id]:
                del self._latest[lkey]
            self._touched.pop(thread_id, None)
            if self.delta is not None:
                self.delta.forget(thread_id)

    # -- retention ---------------------------------------------------------------

    def prune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: PruneStrategy = "keep_latest",
        keep_last: int | None = None,
    ) -> None:
        """Shrink the history of ``thread_ids`` (semantics: "Retention" in
        docs/persistence.md): ``"keep_latest"`` keeps the ``keep_last`` (default 1) newest
        checkpoints per namespace and the ancestors their ``DeltaChannel`` values need,
        ``"delete"`` deletes the threads. Runs under the saver's lock."""
        check_ids("prune", thread_ids=thread_ids)
        ids, n = check_prune_args(thread_ids, strategy, keep_last, "InMemorySaver")
        for tid in ids:
            if strategy == "delete":
                self.delete_thread(tid)
                continue
            with self._lock:
                tuples = list(self.list({CONF: {"thread_id": tid}}))
                self._retain(tid, close_over_deltas(tuples, keep_latest(tuples, n)), tuples)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata ``run_id`` is in
        ``run_ids``, in every thread; one a remaining checkpoint needs to rebuild its
        ``DeltaChannel`` values stays."""
        check_ids("delete_for_runs", run_ids=run_ids)
        wanted = {str(r) for r in run_ids}
        if not wanted:
            return
        with self._lock:
            for tid in list(self.storage):
                tuples = list(self.list({CONF: {"thread_id": tid}}))
                keep = keep_without_runs(tuples, wanted)
                if keep is not None:
                    self._retain(tid, keep, tuples)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, write and value of one thread to a new thread id
        (checkpoint ids, parents and metadata unchanged). The target must be empty."""
        check_ids(
            "copy_thread", source_thread_id=source_thread_id, target_thread_id=target_thread_id
        )
        src, dst = str(source_thread_id), str(target_thread_id)
        with self._lock:
            if src not in self.storage:
                raise ValueError(f"InMemorySaver.copy_thread: thread '{src}' has no checkpoints.")
            if self.storage.get(dst):
                raise ValueError(
                    f"InMemorySaver.copy_thread: thread '{dst}' already has checkpoints; "
                    "delete it first (delete_thread) or pick another id."
                )
            sealer = sealer_of(self.serde)

            def move(parts: tuple[Any, ...], typed: Any) -> Any:
                # sealed rows are bound to their thread: reseal them for the copy
                if sealer is None or typed is None:
                    return typed
                return sealer.seal((parts[0], dst, *parts[2:]), sealer.unseal(parts, typed))

            for ns, by_id in self.storage[src].items():
                self.storage[dst][ns] = {
                    cid: (move(("c", src, ns, cid), c), move(("m", src, ns, cid), m), parent)
                    for cid, (c, m, parent) in by_id.items()
                }
            for (tid, ns, cid), bucket in list(self.writes.items()):
                if tid == src:
                    self.writes[(dst, ns, cid)] = {
                        key: (t, ch, move(("w", src, ns, cid, t, ch), v), path)
                        for key, (t, ch, v, path) in bucket.items()
                    }
            for (tid, ns, channel, version), blob in list(self.blobs.items()):
                if tid == src:
                    self.blobs[(dst, ns, channel, version)] = move(
                        ("b", src, ns, channel, version), blob
                    )
            for (tid, ns, h), item in list(self.items.items()):
                if tid == src:
                    self.items[(dst, ns, h)] = move(("i", src, ns, h.hex()), item)
            for (tid, ns), latest in list(self._latest.items()):
                if tid == src:
                    self._latest[(dst, ns)] = latest
            if self.ttl is not None:
                self._touched[dst] = time.time()

    def _retain(
        self, tid: str, keep: set[tuple[str, str]], tuples: Sequence[CheckpointTuple]
    ) -> None:
        """Keep only the checkpoints ``keep`` of thread ``tid`` (lock held)."""
        _, referenced, kept = partition(tuples, keep, as_str=False)
        for ns, channel, version, value in kept:
            bkey = (tid, ns, channel, version)
            blob = self.blobs.get(bkey)
            base = stored_base(blob)
            if base is not None and (ns, channel, base) not in referenced:
                # rebase: the delta's base goes, store this version whole
                items: dict[bytes, Typed] = {}
                sealer = sealer_of(self.serde)
                whole = self._dump(channel, value, items)
                self.blobs[bkey] = whole if sealer is None else sealer.seal(("b", *bkey), whole)
                self._store_items(tid, ns, items, sealer)
        by_ns: dict[str, dict[str, SavedCheckpoint]] = self.storage.get(tid) or {}
        for ns, by_id in by_ns.items():
            for cid in [c for c in by_id if (ns, c) not in keep]:
                del by_id[cid]
                self.writes.pop((tid, ns, cid), None)
        for bkey in [k for k in self.blobs if k[0] == tid and k[1:] not in referenced]:
            del self.blobs[bkey]
        self._collect(tid)
        for ns in [ns for ns, by_id in by_ns.items() if not by_id]:
            del by_ns[ns]
            self._latest.pop((tid, ns), None)
        for ns, by_id in by_ns.items():
            self._latest[(tid, ns)] = max(by_id)
        if not by_ns:
            self.storage.pop(tid, None)
        if self.delta is not None:
            self.delta.forget(tid)

    def _collect(self, tid: str) -> None:
        """Delete the items of thread ``tid`` that no remaining value or write refers
        to (lock held): mark from the remaining rows, sweep."""
        mine = [k for k in self.items if k[0] == tid]
        if not mine:
            return
        marked: set[tuple[str, bytes]] = set()
        by_ns: dict[str, list[Typed | None]] = {}
        for (t, ns, _, _), blob in self.blobs.items():
            if t == tid:
                by_ns.setdefault(ns, []).append(blob)
        for (t, ns, _), bucket in self.writes.items():
            if t == tid:
                by_ns.setdefault(ns, []).extend(w[2] for w in bucket.values())
        for ns, typeds in by_ns.items():
            marked.update((ns, h) for h in referenced(typeds))
        for key in mine:
            if key[1:] not in marked:
                del self.items[key]

    # -- time to live ----------------------------------------------------------------

    def sweep(self) -> int:
        """Delete the threads whose time to live ran out; return how many.

        A thread lives ``ttl["default_ttl"]`` minutes after its last write (or read,
        with ``refresh_on_read``). Without ``ttl`` nothing expires.
        """
        if self.ttl is None:
            return 0
        cutoff = time.time() - self.ttl["default_ttl"] * 60.0
        with self._lock:
            expired = [tid for tid, at in self._touched.items() if at < cutoff]
        for tid in expired:
            self.delete_thread(tid)
        return len(expired)

    async def aprune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: PruneStrategy = "keep_latest",
        keep_last: int | None = None,
    ) -> None:
        """Async twin of :meth:`prune`."""
        check_ids("aprune", thread_ids=thread_ids)
        self.prune(thread_ids, strategy=strategy, keep_last=keep_last)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Async twin of :meth:`delete_for_runs`."""
        check_ids("adelete_for_runs", run_ids=run_ids)
        self.delete_for_runs(run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Async twin of :meth:`copy_thread`."""
        check_ids(
            "acopy_thread", source_thread_id=source_thread_id, target_thread_id=target_thread_id
        )
        self.copy_thread(source_thread_id, target_thread_id)

    async def asweep(self) -> int:
        """Async twin of :meth:`sweep`."""
        return self.sweep()

    def _task_paths(self, saved: CheckpointTuple) -> dict[str, str]:
        """Task id -> saved task path of the pending writes of ``saved``."""
        conf = saved.config[CONF]
        key = (conf["thread_id"], conf.get("checkpoint_ns", ""), conf["checkpoint_id"])
        with self._lock:
            bucket = self.writes.get(key, {})
            return {task_id: path for task_id, _, _, path in bucket.values()}

    def lease_rollback(self, lease: Lease, tokens: Iterable[int]) -> int:
        """Delete the checkpoints (and their writes) created under ``tokens``."""
        thread_id = lease.thread_id
        with self._lock:
            leases = self._local_leases()
            leases.check(thread_id, lease.token)
            gone = leases.take_log(thread_id, tokens)
            by_ns = self.storage.get(thread_id)
            for ns, checkpoint_id in gone:
                if by_ns is not None:
                    by_ns.get(ns, {}).pop(checkpoint_id, None)
                self.writes.pop((thread_id, ns, checkpoint_id), None)
            for ns in {ns for ns, _ in gone}:
                remaining = by_ns.get(ns) if by_ns is not None else None
                if remaining:
                    self._latest[(thread_id, ns)] = max(remaining)
                else:
                    self._latest.pop((thread_id, ns), None)
            return len(gone)

    # -- async twins (no I/O: run inline) ----------------------------------------

    async def aget_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """Async twin of :meth:`get_tuple`."""
        return self.get_tuple(config)

    async def aget_delta_channel_history(
        self, *, config: dict[str, Any], channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Async twin of :meth:`get_delta_channel_history`, which it calls (so an
        override of the sync method serves both, as with LangGraph's in-memory saver)."""
        return self.get_delta_channel_history(config=config, channels=channels)

    async def _alist(
        self, config: Config | None, filter: Filter, before: Config | None, limit: int | None
    ) -> AsyncIterator[CheckpointTuple]:
        """``alist``: the items of :meth:`list`, read inline."""
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def _aput(
        self, config: Config, checkpoint: Checkpoint, meta: CheckpointMetadata, new: ChannelVersions
    ) -> dict[str, Any]:
        """``aput``: :meth:`put`, run inline."""
        return self.put(config, checkpoint, meta, new)

    async def _aput_writes(
        self, config: Config, writes: Writes, task_id: str, task_path: str
    ) -> None:
        """``aput_writes``: :meth:`put_writes`, run inline."""
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """Async twin of :meth:`delete_thread`."""
        check_ids("adelete_thread", thread_id=thread_id)
        self.delete_thread(thread_id)

    def get_next_version(self, current: str | int | float | None, channel: None) -> str:
        """Return ``f"{step:032}.{16 random hex digits}"`` with ``step`` one more than
        ``current``'s. Zero padding makes string order numeric order; the random
        suffix keeps forks of one parent from colliding on ``(channel, version)``."""
        return next_string_version(current)


MemorySaver = InMemorySaver
"""Alias of :class:`InMemorySaver` (LangGraph's older name)."""
