"""What ``PostgresSaver`` and ``AsyncPostgresSaver`` share: everything but the I/O.

:class:`PostgresCore` turns saver calls into statement parameters and result rows
into :class:`~stategraph.checkpoint.base.CheckpointTuple`; the sync and async savers
only run the statements.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, TypeVar

import stategraph.checkpoint.postgres._sql as _sql
from stategraph.checkpoint._compact import pack_checkpoint
from stategraph.checkpoint._ids import next_string_version
from stategraph.checkpoint._list_delta import ListDeltaCodec, Pending
from stategraph.checkpoint._retention import TTLConfig, partition
from stategraph.checkpoint._seal import (
    referenced,
    sealer_of,
    stored_base,
)
from stategraph.checkpoint._util import (
    check_ids,
    thread_ns_id,
    writes_target,
)
from stategraph.checkpoint._values import delta_base
from stategraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    Config,
    dump_channel_value,
    get_checkpoint_metadata,
)
from stategraph.checkpoint.postgres._filters import metadata_json
from stategraph.checkpoint.postgres._rows import PAGE, Extra, ListQuery, RowDecoding
from stategraph.checkpoint.postgres._sql import select_page

__all__ = [
    "Plan",
    "accept_conn",
    "advance",
    "PostgresCore",
    "Extra",
    "ListQuery",
    "PAGE",
    "autocommit_error",
    "check_format",
    "choose_latest",
    "choose_without_runs",
]

_EMPTY = "empty"

T = TypeVar("T")
Plan = Generator[tuple[str, Any], Any, T]
"""A sans-I/O sequence of statements: yields ``(sql, params)``, receives the rows
(``None`` for a statement without result), returns what the call returns. The sync
and async savers drive the same plans, each with its own connection.

A read (``get_tuple``, a page of ``list``) runs first statement by statement in
autocommit mode; if its rows turn out to refer to values deleted meanwhile (a
``ValueError`` while decoding: a sweep, ``delete_thread`` or ``prune`` ran between two
statements), the savers run it again in one REPEATABLE READ transaction, whose single
snapshot is consistent (so the common read costs no BEGIN/COMMIT round trips)."""


def advance(gen: Generator[Any, Any, Any], value: Any) -> tuple[bool, Any]:
    """Send ``value`` into a plan (or a saver call): ``(True, what it yields next)``,
    or ``(False, what it returns)`` once it is done. The drivers' only step."""
    try:
        return True, gen.send(value)
    except StopIteration as stop:
        return False, stop.value


def autocommit_error(owner: str) -> ValueError:
    """The error for a connection that is not in autocommit mode."""
    return ValueError(
        f"{owner} needs a psycopg connection in autocommit mode: open it with "
        "psycopg.connect(conninfo, autocommit=True) (or set conn.autocommit = True "
        "while no transaction is open), or pass a connection pool."
    )


def accept_conn(owner: str, conn: Any, conn_type: type[Any], hint: str = "") -> tuple[Any, Any]:
    """``(connection, pool)`` of what a saver was given: a psycopg connection of
    ``conn_type`` in autocommit mode, or a pool of them; anything else is refused with
    an error naming ``owner`` (and ending with ``hint``)."""
    if isinstance(conn, conn_type):
        if not conn.autocommit:
            raise autocommit_error(owner)
        return conn, None
    if callable(getattr(conn, "connection", None)):
        return None, conn
    kind = conn_type.__name__
    raise TypeError(
        f"{owner} needs a psycopg.{kind} or a psycopg_pool.{kind}Pool, "
        f"got {type(conn).__name__}{hint}."
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
    from stategraph.checkpoint._retention import keep_without_runs

    return lambda tuples: keep_without_runs(tuples, runs)


class PostgresCore(RowDecoding):
    """Statement parameters for the PostgreSQL savers (row decoding is inherited)."""

    ttl: TTLConfig | None = None
    """Time to live of threads (``None``: threads never expire)."""

    def bases_plan(self, rows: Sequence[Sequence[Any]], use_cache: bool = False) -> Plan[Extra]:
        """Read what the deltas and interned items of ``rows`` need: the delta bases
        the rows do not hold (chain by chain), then the items, in one statement."""
        extra: dict[tuple[str, str, str, str], Any] = self.row_blobs(rows) if len(rows) > 1 else {}
        complete = True
        while complete:
            missing = self.missing_bases(rows, extra, use_cache)
            if not missing:
                break
            for want in missing:
                got = yield (_sql.FETCH_CHAIN, want)
                for version, vtype, blob in got or ():
                    extra[(want["thread_id"], want["ns"], want["channel"], version)] = (vtype, blob)
                if not got:
                    complete = False  # decoding reports the missing base
                    break
        wanted = self.item_params(rows, extra)
        fetched = (yield (_sql.FETCH_ITEMS, wanted)) if wanted is not None else None
        return self.with_items(extra, fetched)

    def get_tuple_plan(
        self, config: Mapping[str, Any], touch: bool = True
    ) -> Plan[CheckpointTuple | None]:
        """``get_tuple``: the checkpoint, what its values need, and (with ``touch``)
        the TTL touch. ``config`` is checked here, before the plan runs."""
        return self._get_tuple_plan(self.get_tuple_statement(config), touch)

    def _get_tuple_plan(
        self, statement: tuple[str, list[Any]], touch: bool
    ) -> Plan[CheckpointTuple | None]:
        rows = yield statement
        if not rows:
            return None
        if touch and self.ttl is not None and self.ttl.get("refresh_on_read", True):
            yield (_sql.TOUCH, {"thread_id": rows[0][0], "at": time.time()})
        extra = yield from self.bases_plan(rows, use_cache=True)
        try:
            return self.row_to_tuple(rows[0], None, extra)
        except ValueError:
            # a cached version went out of memory meanwhile: read its whole chain
            extra = yield from self.bases_plan(rows)
            return self.row_to_tuple(rows[0], None, extra)

    def list_page_plan(self, query: ListQuery) -> Plan[list[CheckpointTuple]]:
        """One page of ``list``: its rows and what their values need."""
        sql, params, page = query.next_statement()
        rows = yield (sql, params)
        extra = yield from self.bases_plan(rows)
        return query.take(self, rows, page, extra)

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
        self, config: Config, checkpoint: Checkpoint, meta: CheckpointMetadata, new: ChannelVersions
    ) -> dict[str, Any]:
        """Return the parameters of the put statement (values serialized here; ``meta``
        and ``new`` are ``put``'s ``metadata`` and ``new_versions``): the checkpoint row's,
        and its channel values' from :meth:`values_params` (the full and the shallow
        savers store values differently; the row is the same)."""
        thread_id, ns, parent_id = thread_ns_id(config, f"{type(self).__name__}.put")
        body = dict(checkpoint)
        values: dict[str, Any] = body.pop("channel_values")  # type: ignore[assignment]
        params = self.values_params(thread_id, ns, values, new)
        ctype, cbytes = self.serde.dumps_typed(self.stored_body(body))
        stored = get_checkpoint_metadata(config, meta)
        mtype, mbytes = self.serde.dumps_typed(stored)
        sealer = sealer_of(self.serde)
        if sealer is not None:
            cid = checkpoint["id"]
            ctype, cbytes = sealer.seal(("c", thread_id, ns, cid), (ctype, cbytes))
            mtype, mbytes = sealer.seal(("m", thread_id, ns, cid), (mtype, mbytes))
        params.update(
            thread_id=thread_id,
            ns=ns,
            checkpoint_id=checkpoint["id"],
            parent_id=parent_id,
            type=ctype,
            checkpoint=cbytes,
            channel_versions=json.dumps(
                {k: str(v) for k, v in checkpoint["channel_versions"].items()}
            ),
            metadata_type=mtype,
            metadata_blob=mbytes,
            metadata=metadata_json(stored),
        )
        return params

    @staticmethod
    def stored_body(body: dict[str, Any]) -> Any:
        """What is serialized of a checkpoint without its values (packed: ``_compact``)."""
        return pack_checkpoint(body)

    def values_params(
        self, thread_id: str, ns: str, values: dict[str, Any], new_versions: ChannelVersions
    ) -> dict[str, Any]:
        """The value parameters of :data:`~._sql.PUT`: one row per channel in
        ``new_versions`` (a delta or the whole value, ``"empty"`` when ``values`` lacks
        it), the interned items, and the delta entries to commit once it ran
        (``_pending``, ``_values``: see :meth:`finish_put_params`)."""
        channels: list[str] = []
        versions: list[str] = []
        types: list[str] = []
        blobs: list[bytes | None] = []
        bases: list[str | None] = []
        pending: list[tuple[int, Pending]] = []
        items: dict[bytes, tuple[str, bytes]] = {}
        for channel, version in new_versions.items():
            channels.append(channel)
            versions.append(str(version))
            if channel not in values:
                types.append(_EMPTY)
                blobs.append(None)
                bases.append(None)
                continue
            typed, entry = self._encode(
                (thread_id, ns, channel), str(version), values[channel], items
            )
            if entry is not None:
                pending.append((len(types), entry))
            types.append(typed[0])
            blobs.append(typed[1])
            bases.append(delta_base(typed, entry))
        sealer = sealer_of(self.serde)
        item_rows = list(items.items())
        if sealer is not None:
            item_rows = [
                (h, sealer.seal(("i", thread_id, ns, h.hex()), typed)) for h, typed in item_rows
            ]
        return {
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

    def copy_plan(self, source_thread_id: str, target_thread_id: str) -> Plan[None]:
        """``copy_thread``, run in one transaction: the target must be empty. An
        encrypting saver's rows are bound to their thread: each copied row is unsealed
        at the source and sealed again at the target."""
        check_ids(
            "copy_thread", source_thread_id=source_thread_id, target_thread_id=target_thread_id
        )
        src, dst = str(source_thread_id), str(target_thread_id)
        name = type(self).__name__
        if not (yield (_sql.HAS_THREAD, {"thread_id": src}))[0][0]:
            raise ValueError(f"{name}.copy_thread: thread '{src}' has no checkpoints.")
        if (yield (_sql.HAS_THREAD, {"thread_id": dst}))[0][0]:
            raise ValueError(
                f"{name}.copy_thread: thread '{dst}' already has checkpoints; delete it "
                "first (delete_thread) or pick another id."
            )
        yield (_sql.COPY_THREAD, {"src": src, "dst": dst})
        if self.ttl is not None:
            yield (_sql.TOUCH, {"thread_id": dst, "at": time.time()})
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
        gone, referenced, kept = partition(tuples, keep)
        drop_ns = [ns for ns, _ in gone]
        drop_ids = [cid for _, cid in gone]
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
        thread_id, ns, checkpoint_id = writes_target(config, f"{type(self).__name__}.put_writes")
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
