"""Row decoding for the PostgreSQL savers: result rows into
:class:`~stategraph.checkpoint.base.CheckpointTuple` (values, writes, interned items,
delta chains; unsealed when the serializer encrypts), and the pagination of ``list``.
Written once for the sync and async savers, which only run the statements.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stategraph.checkpoint._compact import unpack_checkpoint
from stategraph.checkpoint._intern import Resolver
from stategraph.checkpoint._list_delta import DELTA_TYPE, delta_header
from stategraph.checkpoint._seal import (
    SEALED_TYPE,
    Sealer,
    item_fetcher,
    sealer_of,
    stored_base,
    stored_refs,
)
from stategraph.checkpoint._util import (
    checkpoint_config,
    list_args,
    list_where,
    metadata_matches,
)
from stategraph.checkpoint._values import StoredValues
from stategraph.checkpoint.base import (
    BaseCheckpointSaver,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
)
from stategraph.checkpoint.postgres._filters import filter_clauses
from stategraph.checkpoint.postgres._sql import select_page

__all__ = ["Extra", "ItemKey", "ListQuery", "PAGE", "RowDecoding"]

PAGE = 100
"""Rows read per ``list`` statement."""
_DELTA_OR_SEALED = frozenset((DELTA_TYPE, SEALED_TYPE))

ItemKey = tuple[str, str, bytes]


class Extra(dict[tuple[str, str, str, str], Any]):
    """Stored values a page of rows needs besides its own (delta bases), plus the
    interned items the page refers to (``found``, by ``(thread_id, ns, hash)``)."""

    found: dict[ItemKey, tuple[str, bytes]]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.found = {}


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
        where, params = list_where(config, before, "%s")
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
        core: RowDecoding,
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


class RowDecoding(StoredValues, BaseCheckpointSaver[str]):
    """Decodes the rows of the PostgreSQL savers' statements (see the module docstring)."""

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
        resolver = Resolver(self.serde, thread_id, item_fetcher(found, thread_id, ns, sealer))
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
