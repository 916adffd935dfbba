"""What ``PostgresSaver`` and ``AsyncPostgresSaver`` share: everything but the I/O.

:class:`PostgresCore` turns saver calls into statement parameters and result rows
into :class:`~stategraph.checkpoint.base.CheckpointTuple`; the sync and async savers
only run the statements.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any

import stategraph.checkpoint.postgres._sql as _sql
from stategraph.checkpoint._compact import pack_checkpoint, unpack_checkpoint
from stategraph.checkpoint._ids import next_string_version
from stategraph.checkpoint._intern import Interner, Resolver
from stategraph.checkpoint._list_delta import DELTA_TYPE, ListDeltaCodec, Pending, delta_header
from stategraph.checkpoint._seal import (
    SEALED_TYPE,
    Sealer,
    referenced,
    sealer_of,
    stored_base,
    stored_refs,
)
from stategraph.checkpoint._util import (
    checkpoint_config,
    list_args,
    metadata_matches,
    thread_ns_id,
)
from stategraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
    dump_channel_value,
    get_checkpoint_metadata,
)
from stategraph.checkpoint.postgres._filters import filter_clauses, metadata_json
from stategraph.checkpoint.postgres._sql import select_page
from stategraph.constants import CONF

__all__ = [
    "PostgresCore",
    "ListQuery",
    "PAGE",
    "autocommit_error",
    "check_format",
    "choose_latest",
    "choose_without_runs",
]

PAGE = 100
"""Rows read per ``list`` statement."""
_EMPTY = "empty"
_DELTA_OR_SEALED = frozenset((DELTA_TYPE, SEALED_TYPE))

ItemKey = tuple[str, str, bytes]


class Extra(dict[tuple[str, str, str, str], Any]):
    """Stored values a page of rows needs besides its own (delta bases), plus the
    interned items the page refers to (``found``, by ``(thread_id, ns, hash)``)."""

    found: dict[ItemKey, tuple[str, bytes]]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.found = {}


def autocommit_error(owner: str) -> ValueError:
    """The error for a connection that is not in autocommit mode."""
    return ValueError(
        f"{owner} needs a psycopg connection in autocommit mode: open it with "
        "psycopg.connect(conninfo, autocommit=True) (or set conn.autocommit = True "
        "while no transaction is open), or pass a connection pool."
    )


def check_format(row: Sequence[Any] | None) -> None:
    """Raise if the database stores channel values in a newer format than this
    release reads (``row``: the result of :data:`~._sql.CHECK_FORMAT`)."""
    from stategraph.checkpoint.postgres._sql import VALUES_FORMAT

    if row is not None and int(row[0]) > VALUES_FORMAT:
        raise RuntimeError(
            f"This checkpoint database stores channel values in format {row[0]}, written "
            f"by a newer stategraph; this release reads formats 1 to {VALUES_FORMAT}. "
            "Upgrade stategraph to open it."
        )


def choose_latest(n: int) -> Callable[[Sequence[CheckpointTuple]], set[tuple[str, str]]]:
    """``prune``'s choice: the ``n`` newest checkpoints per namespace, closed over
    the ancestors their ``DeltaChannel`` values need."""
    from stategraph.checkpoint._retention import close_over_deltas, keep_latest

    return lambda tuples: close_over_deltas(tuples, keep_latest(tuples, n))


def choose_without_runs(
    runs: set[str],
) -> Callable[[Sequence[CheckpointTuple]], set[tuple[str, str]] | None]:
    """``delete_for_runs``' choice: every checkpoint not made by ``runs`` (plus the
    ancestors the kept ones need); ``None`` when the thread has none of those runs."""
    from stategraph.checkpoint._retention import close_over_deltas

    def choose(tuples: Sequence[CheckpointTuple]) -> set[tuple[str, str]] | None:
        nodes = {
            (t.config[CONF]["checkpoint_ns"], t.config[CONF]["checkpoint_id"]): t for t in tuples
        }
        drop = {n for n, t in nodes.items() if str((t.metadata or {}).get("run_id")) in runs}
        if not drop:
            return None
        return close_over_deltas(tuples, set(nodes) - drop)

    return choose


class ListQuery:
    """One ``list`` call: its conditions, its filter and its keyset pagination."""

    def __init__(
        self,
        config: Mapping[str, Any] | None,
        filter: Mapping[str, Any] | None,
        before: Mapping[str, Any] | None,
        limit: int | None,
    ) -> None:
        """Build the conditions for ``config``, ``filter``, ``before`` and ``limit``."""
        config, filter, before, limit = list_args(config, filter, before, limit)
        conf = (config or {}).get(CONF) or {}
        where: list[str] = []
        params: list[Any] = []
        if conf.get("thread_id") is not None:
            where.append("thread_id = %s")
            params.append(str(conf["thread_id"]))
        if "checkpoint_ns" in conf:
            where.append("checkpoint_ns = %s")
            params.append(conf["checkpoint_ns"] or "")
        if conf.get("checkpoint_id"):
            where.append("checkpoint_id = %s")
            params.append(str(conf["checkpoint_id"]))
        before_id = ((before or {}).get(CONF) or {}).get("checkpoint_id")
        if before_id:
            where.append("checkpoint_id < %s")
            params.append(str(before_id))
        fwhere, fparams, self.exact = filter_clauses(filter)
        self.where = where + fwhere
        self.params = params + fparams
        self.filter = filter
        self.remaining = limit
        self.last: tuple[str, str, str] | None = None
        self.done = limit is not None and limit <= 0

    def next_statement(self) -> tuple[str, list[Any], int]:
        """Return ``(sql, params, page_size)`` for the next page."""
        page = PAGE
        if self.remaining is not None and self.exact:
            page = min(PAGE, self.remaining)
        where = self.where
        params = list(self.params)
        if self.last is not None:
            where = [*where, "(checkpoint_id, thread_id, checkpoint_ns) < (%s, %s, %s)"]
            params.extend(self.last)
        params.append(page)
        return select_page(where), params, page

    def take(
        self,
        core: PostgresCore,
        rows: Sequence[Sequence[Any]],
        page: int,
        extra: Mapping[tuple[str, str, str, str], Any] | None = None,
    ) -> list[CheckpointTuple]:
        """Turn one page of rows into the tuples to yield, and advance the query."""
        items: list[CheckpointTuple] = []
        sealer = sealer_of(core.serde)
        for row in rows:
            if self.remaining is not None and len(items) >= self.remaining:
                break
            md = (row[6], row[7])
            if sealer is not None:
                md = sealer.unseal(("m", row[0], row[1], row[2]), md)
            metadata = core.serde.loads_typed(md)
            if not self.exact and not metadata_matches(metadata, self.filter):
                continue
            items.append(core.row_to_tuple(row, metadata, extra))
        if self.remaining is not None:
            self.remaining -= len(items)
            if self.remaining <= 0:
                self.done = True
        if len(rows) < page:
            self.done = True
        elif rows:
            last = rows[-1]
            self.last = (last[2], last[0], last[1])
        return items


class PostgresCore(BaseCheckpointSaver[str]):
    """Statement parameters and row decoding for the PostgreSQL savers."""

    delta: ListDeltaCodec | None = None
    """Delta storage of list values (``None``: every value stored whole)."""

    interner: Interner | None = None
    """Interning of large list elements (``None``: values stored whole)."""

    def _init_delta(self, delta_storage: bool, intern_items: bool = True) -> None:
        self.delta = ListDeltaCodec(self.serde) if delta_storage else None
        self.interner = Interner(self) if intern_items else None

    def _dump(self, channel: str, value: Any, items: dict[bytes, tuple[str, bytes]]) -> Any:
        """Serialize a value or write, interning its large list elements into
        ``items`` when interning is on."""
        if self.interner is None:
            return dump_channel_value(self.serde, channel, value)
        return self.interner.dump(channel, value, items)

    @staticmethod
    def item_params(
        rows: Sequence[Sequence[Any]], extra: Mapping[tuple[str, str, str, str], Any]
    ) -> dict[str, Any] | None:
        """Parameters of :data:`~._sql.FETCH_ITEMS` for every item the rows (their
        values and writes) and ``extra`` refer to, or ``None`` when they refer to none."""
        wanted: set[ItemKey] = set()
        for row in rows:
            tid, ns = row[0], row[1]
            for vtype, blob in zip(row[9] or (), row[10] or (), strict=True):
                wanted.update((tid, ns, h) for h in stored_refs((vtype, blob)))
            for wtype, wblob in zip(row[13] or (), row[14] or (), strict=True):
                wanted.update((tid, ns, h) for h in stored_refs((wtype, wblob)))
        for key, typed in extra.items():
            if typed is not None:
                wanted.update((key[0], key[1], h) for h in stored_refs(typed))
        if not wanted:
            return None
        keys = sorted(wanted)
        return {
            "tids": [k[0] for k in keys],
            "nss": [k[1] for k in keys],
            "hashes": [k[2] for k in keys],
        }

    @staticmethod
    def with_items(
        extra: Mapping[tuple[str, str, str, str], Any], fetched: Sequence[Sequence[Any]] | None
    ) -> Extra:
        """``extra`` with the items :data:`~._sql.FETCH_ITEMS` returned attached."""
        out = extra if isinstance(extra, Extra) else Extra(extra)
        for tid, ns, h, t, v in fetched or ():
            out.found[(tid, ns, bytes(h))] = (t, bytes(v))
        return out

    def missing_bases(
        self,
        rows: Sequence[Sequence[Any]],
        extra: Mapping[tuple[str, str, str, str], Any],
        use_cache: bool = False,
    ) -> list[dict[str, Any]]:
        """Parameters of :data:`~._sql.FETCH_CHAIN` for the delta bases the rows
        need that are neither in the rows nor in ``extra`` (with ``use_cache``, a delta
        whose own version is in memory needs nothing: right for a single row read at
        once, while a page of rows may push cached versions out before it is read)."""
        codec = self.delta
        if codec is None:
            return []
        wanted: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        known: dict[tuple[str, str, str, str], Any] = dict(extra)
        deltas: list[tuple[tuple[str, str, str, str], Any]] = []
        for row in rows:
            thread_id, ns = row[0], row[1]
            for channel, vtype, blob, version in zip(
                row[8] or (), row[9] or (), row[10] or (), row[15] or (), strict=True
            ):
                key = (thread_id, ns, channel, version)
                known[key] = (vtype, blob)
                if vtype in _DELTA_OR_SEALED:
                    deltas.append((key, (vtype, blob)))
        for key, typed in extra.items():
            if typed is not None and typed[0] in _DELTA_OR_SEALED:
                deltas.append((key, typed))
        for key, typed in deltas:
            if use_cache and codec.is_cached(key[:3], key[3]):
                continue
            if typed[0] == SEALED_TYPE:
                sealed_base = stored_base(typed)
                if sealed_base is None:
                    continue  # a sealed value stored whole
                base, root, old = str(sealed_base), None, False
            else:
                header = delta_header(typed[1], key[2], key[3])
                base, root = str(header[1]), str(header[2])
                old = header[0] == 1  # no base column: its chain is a version range
            base_key = (*key[:3], base)
            if base_key in known:
                continue
            wanted[base_key] = {
                "thread_id": key[0],
                "ns": key[1],
                "channel": key[2],
                "version": base,
                "low": min(base, str(root)) if old else None,
                "high": max(base, str(root)) if old else None,
            }
        return list(wanted.values())

    @staticmethod
    def row_blobs(rows: Sequence[Sequence[Any]]) -> dict[tuple[str, str, str, str], Any]:
        """Every stored value in ``rows``, by ``(thread_id, ns, channel, version)``: a
        delta in one row may be based on a value another row of the page holds."""
        out: dict[tuple[str, str, str, str], Any] = {}
        for row in rows:
            if len(row) > 15 and row[15] is not None:
                for channel, vtype, blob, version in zip(
                    row[8] or (), row[9] or (), row[10] or (), row[15], strict=True
                ):
                    out[(row[0], row[1], channel, version)] = (vtype, blob)
        return out

    def row_to_tuple(
        self,
        row: Sequence[Any],
        metadata: CheckpointMetadata | None = None,
        extra: Mapping[tuple[str, str, str, str], Any] | None = None,
    ) -> CheckpointTuple:
        """Build a tuple from a row of :func:`~._sql.select_page`; ``extra`` holds
        stored values the row's deltas are based on (see :meth:`missing_bases`)."""
        (thread_id, ns, checkpoint_id, parent_id, ctype, cbytes, mtype, mbytes) = row[:8]
        bchannels, btypes, bblobs, wtasks, wchannels, wtypes, wblobs = row[8:15]
        bversions = row[15] if len(row) > 15 else None
        loads = self.serde.loads_typed
        sealer = sealer_of(self.serde)
        if sealer is not None:
            ctype, cbytes = sealer.unseal(("c", thread_id, ns, checkpoint_id), (ctype, cbytes))
            if metadata is None:
                mtype, mbytes = sealer.unseal(("m", thread_id, ns, checkpoint_id), (mtype, mbytes))
            btypes, bblobs = self._unseal_values(sealer, row, btypes, bblobs, bversions)
            wtypes, wblobs = self._unseal_writes(sealer, row, wtasks, wchannels, wtypes, wblobs)
        checkpoint: Checkpoint = unpack_checkpoint(loads((ctype, cbytes)), checkpoint_id)  # type: ignore[assignment]
        found: Mapping[ItemKey, tuple[str, bytes]] = getattr(extra, "found", None) or {}

        def fetch_items(hashes: list[bytes]) -> dict[bytes, tuple[str, bytes]]:
            out: dict[bytes, tuple[str, bytes]] = {}
            for h in hashes:
                item = found.get((thread_id, ns, h))
                if item is not None:
                    out[h] = (
                        item
                        if sealer is None
                        else sealer.unseal(("i", thread_id, ns, h.hex()), item)
                    )
            return out

        resolver = Resolver(self.serde, thread_id, fetch_items)
        codec = self.delta
        if codec is None or bversions is None:
            checkpoint["channel_values"] = {
                channel: resolver.loads((vtype, blob), channel)
                for channel, vtype, blob in zip(
                    bchannels or (), btypes or (), bblobs or (), strict=True
                )
            }
        else:
            codec.serde = self.serde
            own = {
                (channel, version): (vtype, blob)
                for channel, vtype, blob, version in zip(
                    bchannels or (), btypes or (), bblobs or (), bversions, strict=True
                )
            }
            more = extra or {}

            def fetch(v: Any, channel: str) -> tuple[str, bytes] | None:
                found = own.get((channel, v))
                if found is None:
                    found = more.get((thread_id, ns, channel, v))
                    if found is not None and sealer is not None and found[1] is not None:
                        found = sealer.unseal(("b", thread_id, ns, channel, v), found)
                return found

            checkpoint["channel_values"] = {
                channel: codec.decode(
                    (thread_id, ns, channel),
                    version,
                    typed,
                    lambda v, _c=channel: fetch(v, _c),  # type: ignore[misc]
                    resolver.loader(channel),
                )
                for (channel, version), typed in own.items()
            }
        pending: list[PendingWrite] = [
            (task_id, channel, resolver.loads((wtype, blob), channel))
            for task_id, channel, wtype, blob in zip(
                wtasks or (), wchannels or (), wtypes or (), wblobs or (), strict=True
            )
        ]
        if metadata is None:
            metadata = loads((mtype, mbytes))
        return CheckpointTuple(
            config=checkpoint_config(thread_id, ns, checkpoint_id),
            checkpoint=checkpoint,
            metadata=metadata,
            parent_config=(checkpoint_config(thread_id, ns, parent_id) if parent_id else None),
            pending_writes=pending,
        )

    @staticmethod
    def _unseal_values(
        sealer: Sealer, row: Sequence[Any], btypes: Any, bblobs: Any, bversions: Any
    ) -> tuple[Any, Any]:
        """A row's channel values unsealed (``bversions``: their versions, from the row)."""
        if not btypes:
            return btypes, bblobs
        types: list[Any] = []
        blobs: list[Any] = []
        for channel, vtype, blob, version in zip(row[8], btypes, bblobs, bversions, strict=True):
            if blob is not None:
                vtype, blob = sealer.unseal(("b", row[0], row[1], channel, version), (vtype, blob))
            types.append(vtype)
            blobs.append(blob)
        return types, blobs

    @staticmethod
    def _unseal_writes(
        sealer: Sealer, row: Sequence[Any], wtasks: Any, wchannels: Any, wtypes: Any, wblobs: Any
    ) -> tuple[Any, Any]:
        """A row's pending writes unsealed."""
        if not wtypes:
            return wtypes, wblobs
        types: list[Any] = []
        blobs: list[Any] = []
        for task_id, channel, wtype, blob in zip(wtasks, wchannels, wtypes, wblobs, strict=True):
            wtype, blob = sealer.unseal(
                ("w", row[0], row[1], row[2], task_id, channel), (wtype, blob)
            )
            types.append(wtype)
            blobs.append(blob)
        return types, blobs

    def get_tuple_statement(self, config: Mapping[str, Any]) -> tuple[str, list[Any]]:
        """Return ``(sql, params)`` reading the checkpoint ``config`` names (or the
        latest of its thread and namespace)."""
        thread_id, ns, checkpoint_id = thread_ns_id(config, f"{type(self).__name__}.get_tuple")
        where = ["thread_id = %s", "checkpoint_ns = %s"]
        params: list[Any] = [thread_id, ns]
        if checkpoint_id is not None:
            where.append("checkpoint_id = %s")
            params.append(str(checkpoint_id))
        params.append(1)
        return select_page(where), params

    def put_params(
        self,
        config: Mapping[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        """Return the parameters of :data:`~._sql.PUT` (values serialized here)."""
        thread_id, ns, parent_id = thread_ns_id(config, f"{type(self).__name__}.put")
        body = dict(checkpoint)
        values: dict[str, Any] = body.pop("channel_values")  # type: ignore[assignment]
        channels: list[str] = []
        versions: list[str] = []
        types: list[str] = []
        blobs: list[bytes | None] = []
        bases: list[str | None] = []
        pending: list[tuple[int, Pending]] = []
        items: dict[bytes, tuple[str, bytes]] = {}
        codec = self.delta
        if codec is not None:
            codec.serde = self.serde
        for channel, version in new_versions.items():
            channels.append(channel)
            versions.append(str(version))
            if channel not in values:
                types.append(_EMPTY)
                blobs.append(None)
                bases.append(None)
                continue
            base: str | None = None
            if codec is None:
                vtype, vbytes = self._dump(channel, values[channel], items)
            else:
                (vtype, vbytes), entry = codec.encode(
                    (thread_id, ns, channel),
                    str(version),
                    values[channel],
                    lambda v, _c=channel: self._dump(_c, v, items),  # type: ignore[misc]
                )
                if entry is not None:
                    pending.append((len(types), entry))
                    if vtype == DELTA_TYPE and entry.base is not None:
                        base = str(entry.base)
            types.append(vtype)
            blobs.append(vbytes)
            bases.append(base)
        ctype, cbytes = self.serde.dumps_typed(pack_checkpoint(body))
        stored = get_checkpoint_metadata(config, metadata)
        mtype, mbytes = self.serde.dumps_typed(stored)
        sealer = sealer_of(self.serde)
        item_rows = list(items.items())
        if sealer is not None:
            cid = checkpoint["id"]
            ctype, cbytes = sealer.seal(("c", thread_id, ns, cid), (ctype, cbytes))
            mtype, mbytes = sealer.seal(("m", thread_id, ns, cid), (mtype, mbytes))
            item_rows = [
                (h, sealer.seal(("i", thread_id, ns, h.hex()), typed)) for h, typed in item_rows
            ]
        return {
            "thread_id": thread_id,
            "ns": ns,
            "checkpoint_id": checkpoint["id"],
            "parent_id": parent_id,
            "type": ctype,
            "checkpoint": cbytes,
            "channel_versions": json.dumps(
                {k: str(v) for k, v in checkpoint["channel_versions"].items()}
            ),
            "metadata_type": mtype,
            "metadata_blob": mbytes,
            "metadata": metadata_json(stored),
            "channels": channels,
            "versions": versions,
            "types": types,
            "blobs": blobs,
            "bases": bases,
            "item_hashes": [h for h, _ in item_rows],
            "item_types": [typed[0] for _, typed in item_rows],
            "item_values": [typed[1] for _, typed in item_rows],
            "_pending": pending,
            "_values": values,
        }

    def base_check_params(self, params: Mapping[str, Any]) -> dict[str, Any] | None:
        """Parameters of :data:`~._sql.EXISTING_BLOBS` for the bases of the deltas in
        ``params`` (from :meth:`put_params`), or ``None`` when there are none."""
        bases = [p for _, p in params["_pending"] if p.base is not None]
        if not bases:
            return None
        return {
            "thread_id": params["thread_id"],
            "ns": params["ns"],
            "channels": [p.key[2] for p in bases],
            "versions": [str(p.base) for p in bases],
        }

    def finish_put_params(
        self, params: dict[str, Any], existing: Sequence[Sequence[Any]] | None
    ) -> tuple[dict[str, Any], list[Pending]]:
        """Split ``params`` into the statement parameters and the entries to commit
        after it ran; a delta whose base is not stored (``existing`` lacks it: deleted
        meanwhile) is stored whole instead."""
        pending: list[tuple[int, Pending]] = params.pop("_pending")
        values: dict[str, Any] = params.pop("_values")
        found = {(str(c), str(v)) for c, v in existing or ()}
        done: list[Pending] = []
        for at, entry in pending:
            if entry.base is not None and (entry.key[2], str(entry.base)) not in found:
                # stored whole without interning: the items need no new rows
                channel = entry.key[2]
                vtype, vbytes = dump_channel_value(self.serde, channel, values[channel])
                params["types"][at] = vtype
                params["blobs"][at] = vbytes
                params["bases"][at] = None
                entry = ListDeltaCodec.as_snapshot(entry, (vtype, vbytes))
            done.append(entry)
        sealer = sealer_of(self.serde)
        if sealer is not None:
            # sealed last: the delta bases above were chosen on the plain values
            tid, ns = params["thread_id"], params["ns"]
            for at, (channel, version, blob) in enumerate(
                zip(params["channels"], params["versions"], params["blobs"], strict=True)
            ):
                if blob is not None:
                    params["types"][at], params["blobs"][at] = sealer.seal(
                        ("b", tid, ns, channel, version), (params["types"][at], blob)
                    )
        return params, done

    def retain_gen(
        self, tid: str, choose: Callable[[Sequence[CheckpointTuple]], set[tuple[str, str]] | None]
    ) -> Generator[tuple[str, Any], Any, bool]:
        """The statements keeping only the checkpoints ``choose(tuples)`` picks of thread
        ``tid`` (``None``: change nothing), run by the caller inside one REPEATABLE READ
        transaction: yields ``(sql, params)`` and receives the rows. Returns whether
        anything changed."""
        rows = yield (select_page(["thread_id = %s"]), [tid, _sql.THREAD_PAGE_LIMIT])
        extra: dict[tuple[str, str, str, str], Any] = self.row_blobs(rows)
        while True:
            missing = self.missing_bases(rows, extra)
            if not missing:
                break
            for want in missing:
                got = yield (_sql.FETCH_CHAIN, want)
                for version, vtype, blob in got:
                    extra[(want["thread_id"], want["ns"], want["channel"], version)] = (vtype, blob)
                if not got:
                    raise ValueError(
                        f"Checkpoint data of thread '{tid}' is incomplete: version "
                        f"{want['version']} of channel '{want['channel']}' is missing."
                    )
        wanted = self.item_params(rows, extra)
        fetched = (yield (_sql.FETCH_ITEMS, wanted)) if wanted is not None else None
        extra = self.with_items(extra, fetched)
        tuples = [self.row_to_tuple(row, None, extra) for row in rows]
        keep = choose(tuples)
        if keep is None:
            return False
        deltas = yield (_sql.THREAD_DELTAS, {"thread_id": tid})
        rebase, drop, blob_refs = self.retain_params(tid, keep, tuples, deltas)
        sealer = sealer_of(self.serde)
        for params in rebase:
            items: dict[bytes, tuple[str, bytes]] = params.pop("_items")
            if sealer is not None:
                key = (tid, params["ns"], params["channel"], params["version"])
                params["type"], params["blob"] = sealer.seal(
                    ("b", *key), (params["type"], params["blob"])
                )
                items = {h: sealer.seal(("i", tid, key[1], h.hex()), t) for h, t in items.items()}
            if items:
                yield (
                    _sql.INSERT_ITEMS,
                    {
                        "thread_id": tid,
                        "ns": params["ns"],
                        "item_hashes": list(items),
                        "item_types": [t for t, _ in items.values()],
                        "item_values": [v for _, v in items.values()],
                    },
                )
            yield (_sql.REBASE_BLOB, params)
        yield (_sql.DROP_CHECKPOINTS, drop)
        yield (_sql.DROP_UNREFERENCED_BLOBS, blob_refs)
        # mark the items the remaining values and writes refer to, sweep the rest
        remaining = yield (_sql.THREAD_REFERRING, {"thread_id": tid})
        by_ns: dict[str, list[tuple[str, bytes]]] = {}
        for ns, vtype, blob in remaining or ():
            by_ns.setdefault(ns, []).append((vtype, bytes(blob)))
        marked = sorted((ns, h) for ns, typeds in by_ns.items() for h in referenced(typeds))
        yield (
            _sql.DROP_UNREFERENCED_ITEMS,
            {
                "thread_id": tid,
                "nss": [m[0] for m in marked],
                "hashes": [m[1] for m in marked],
            },
        )
        return True

    def copy_gen(self, src: str, dst: str) -> Generator[tuple[str, Any], Any, None]:
        """The statements of ``copy_thread`` (the caller checked ``dst`` is empty), run
        in one transaction: yields ``(sql, params)`` and receives the rows. An
        encrypting saver's rows are bound to their thread: each copied row is unsealed
        at ``src`` and sealed again at ``dst``."""
        yield (_sql.COPY_THREAD, {"src": src, "dst": dst})
        sealer = sealer_of(self.serde)
        if sealer is None:
            return
        rows = yield (_sql.RESEAL_READ, {"dst": dst})

        def move(parts: tuple[Any, ...], typed: tuple[str, bytes]) -> tuple[str, bytes]:
            return sealer.seal((parts[0], dst, *parts[2:]), sealer.unseal(parts, typed))

        for kind, ns, a, b, t, blob, mt, mblob in rows or ():
            at = {"dst": dst, "ns": ns}
            if kind == "c":
                t, blob = move(("c", src, ns, a), (t, bytes(blob)))
                mt, mblob = move(("m", src, ns, a), (mt, bytes(mblob)))
                yield (
                    _sql.RESEAL_CHECKPOINT,
                    {**at, "id": a, "type": t, "blob": blob, "mtype": mt, "mblob": mblob},
                )
            elif kind == "w":
                task, idx, channel = b.split("\x1f", 2)
                t, blob = move(("w", src, ns, a, task, channel), (t, bytes(blob)))
                yield (
                    _sql.RESEAL_WRITE,
                    {**at, "id": a, "task": task, "idx": int(idx), "type": t, "blob": blob},
                )
            elif kind == "b":
                t, blob = move(("b", src, ns, a, b), (t, bytes(blob)))
                yield (
                    _sql.RESEAL_BLOB,
                    {**at, "channel": a, "version": b, "type": t, "blob": blob},
                )
            else:
                t, blob = move(("i", src, ns, a), (t, bytes(blob)))
                yield (_sql.RESEAL_ITEM, {**at, "hash": bytes.fromhex(a), "type": t, "blob": blob})

    def retain_params(
        self,
        tid: str,
        keep: set[tuple[str, str]],
        tuples: Sequence[CheckpointTuple],
        delta_rows: Sequence[Sequence[Any]],
    ) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
        """Statement parameters keeping only checkpoints ``keep`` of thread ``tid``:
        the kept values to store whole (:data:`~._sql.REBASE_BLOB`, for every kept
        version read from a delta whose base goes; ``"_items"`` holds the interned
        items of each, stored first with :data:`~._sql.INSERT_ITEMS`), the checkpoints to drop
        (:data:`~._sql.DROP_CHECKPOINTS`) and the values still referenced
        (:data:`~._sql.DROP_UNREFERENCED_BLOBS`). ``delta_rows`` are the thread's
        values stored as deltas (:data:`~._sql.THREAD_DELTAS`)."""
        bases: dict[tuple[str, str, str], str] = {}
        for ns, channel, version, vtype, blob in delta_rows:
            base = stored_base((vtype, blob))
            if base is not None:
                bases[(ns, channel, version)] = str(base)
        rebase: list[dict[str, Any]] = []
        kept: list[tuple[str, str, str, Any]] = []
        drop_ns: list[str] = []
        drop_ids: list[str] = []
        referenced: set[tuple[str, str, str]] = set()
        for t in tuples:
            ns, cid = t.config[CONF]["checkpoint_ns"], t.config[CONF]["checkpoint_id"]
            if (ns, cid) not in keep:
                drop_ns.append(ns)
                drop_ids.append(cid)
                continue
            values = t.checkpoint["channel_values"]
            for channel, version in t.checkpoint["channel_versions"].items():
                referenced.add((ns, channel, str(version)))
                if channel in values:
                    kept.append((ns, channel, str(version), values[channel]))
        for ns, channel, version, value in kept:
            base = bases.get((ns, channel, version))
            if base is not None and (ns, channel, base) not in referenced:
                # the delta's base goes: store this version whole
                items: dict[bytes, tuple[str, bytes]] = {}
                vtype, vbytes = self._dump(channel, value, items)
                rebase.append(
                    {
                        "thread_id": tid,
                        "ns": ns,
                        "channel": channel,
                        "version": version,
                        "type": vtype,
                        "blob": vbytes,
                        "_items": items,
                    }
                )
        refs = sorted(referenced)
        return (
            rebase,
            {"thread_id": tid, "nss": drop_ns, "ids": drop_ids},
            {
                "thread_id": tid,
                "nss": [r[0] for r in refs],
                "channels": [r[1] for r in refs],
                "versions": [r[2] for r in refs],
            },
        )

    def put_writes_params(
        self,
        config: Mapping[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> dict[str, Any] | None:
        """Return the parameters of :data:`~._sql.PUT_WRITES`, or ``None`` for no writes.

        Two writes of one call to the same special channel behave as if saved one
        after the other: the first one's place, the last one's value.
        """
        name = f"{type(self).__name__}.put_writes"
        thread_id, ns, checkpoint_id = thread_ns_id(config, name)
        if checkpoint_id is None:
            raise ValueError(
                f"{name} needs config['configurable']['checkpoint_id']: the id of the "
                "checkpoint the writes belong to."
            )
        rows: dict[int, tuple[int, str, str, bytes]] = {}
        items: dict[bytes, tuple[str, bytes]] = {}
        for i, (channel, value) in enumerate(writes):
            idx = WRITES_IDX_MAP.get(channel, i)
            wtype, wbytes = self._dump(channel, value, items)
            ord_ = rows[idx][0] if idx in rows else i
            rows[idx] = (ord_, channel, wtype, wbytes)
        if not rows:
            return None
        ordered = sorted(rows.items(), key=lambda item: item[1][0])
        sealer = sealer_of(self.serde)
        item_rows = list(items.items())
        if sealer is not None:
            ordered = [
                (
                    idx,
                    (
                        o,
                        ch,
                        *sealer.seal(
                            ("w", thread_id, ns, str(checkpoint_id), str(task_id), ch), (t, b)
                        ),
                    ),
                )
                for idx, (o, ch, t, b) in ordered
            ]
            item_rows = [
                (h, sealer.seal(("i", thread_id, ns, h.hex()), typed)) for h, typed in item_rows
            ]
        return {
            "thread_id": thread_id,
            "ns": ns,
            "checkpoint_id": str(checkpoint_id),
            "task_id": str(task_id),
            "task_path": task_path or "",
            "idxs": [idx for idx, _ in ordered],
            "ords": [row[0] for _, row in ordered],
            "channels": [row[1] for _, row in ordered],
            "types": [row[2] for _, row in ordered],
            "blobs": [row[3] for _, row in ordered],
            "item_hashes": [h for h, _ in item_rows],
            "item_types": [typed[0] for _, typed in item_rows],
            "item_values": [typed[1] for _, typed in item_rows],
        }

    def get_next_version(self, current: str | int | float | None, channel: None) -> str:
        """Same string scheme as the other bundled savers: ``f"{step:032}.{16 hex}"``,
        so forks of one parent never collide on ``(channel, version)``."""
        return next_string_version(current)
