"""What ``PostgresSaver`` and ``AsyncPostgresSaver`` share: everything but the I/O.

:class:`PostgresCore` turns saver calls into statement parameters and result rows
into :class:`~stategraph.checkpoint.base.CheckpointTuple`; the sync and async savers
only run the statements.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

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
    dump_channel_value,
    get_checkpoint_metadata,
)
from stategraph.checkpoint.postgres._filters import filter_clauses, metadata_json
from stategraph.checkpoint.postgres._sql import select_page
from stategraph.constants import CONF

__all__ = ["PostgresCore", "ListQuery", "PAGE", "autocommit_error"]

PAGE = 100
"""Rows read per ``list`` statement."""
_EMPTY = "empty"


def autocommit_error(owner: str) -> ValueError:
    """The error for a connection that is not in autocommit mode."""
    return ValueError(
        f"{owner} needs a psycopg connection in autocommit mode: open it with "
        "psycopg.connect(conninfo, autocommit=True) (or set conn.autocommit = True "
        "while no transaction is open), or pass a connection pool."
    )


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
        self, core: PostgresCore, rows: Sequence[Sequence[Any]], page: int
    ) -> list[CheckpointTuple]:
        """Turn one page of rows into the tuples to yield, and advance the query."""
        items: list[CheckpointTuple] = []
        for row in rows:
            if self.remaining is not None and len(items) >= self.remaining:
                break
            metadata = core.serde.loads_typed((row[6], row[7]))
            if not self.exact and not metadata_matches(metadata, self.filter):
                continue
            items.append(core.row_to_tuple(row, metadata))
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

    def row_to_tuple(
        self, row: Sequence[Any], metadata: CheckpointMetadata | None = None
    ) -> CheckpointTuple:
        """Build a tuple from a row of :func:`~._sql.select_page`."""
        (thread_id, ns, checkpoint_id, parent_id, ctype, cbytes, mtype, mbytes) = row[:8]
        bchannels, btypes, bblobs, wtasks, wchannels, wtypes, wblobs = row[8:15]
        loads = self.serde.loads_typed
        checkpoint: Checkpoint = loads((ctype, cbytes))
        checkpoint["channel_values"] = {
            channel: loads((vtype, blob))
            for channel, vtype, blob in zip(
                bchannels or (), btypes or (), bblobs or (), strict=True
            )
        }
        pending: list[PendingWrite] = [
            (task_id, channel, loads((wtype, blob)))
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
        for channel, version in new_versions.items():
            channels.append(channel)
            versions.append(str(version))
            if channel in values:
                vtype, vbytes = dump_channel_value(self.serde, channel, values[channel])
                types.append(vtype)
                blobs.append(vbytes)
            else:
                types.append(_EMPTY)
                blobs.append(None)
        ctype, cbytes = self.serde.dumps_typed(body)
        stored = get_checkpoint_metadata(config, metadata)
        mtype, mbytes = self.serde.dumps_typed(stored)
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
        }

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
        for i, (channel, value) in enumerate(writes):
            idx = WRITES_IDX_MAP.get(channel, i)
            wtype, wbytes = dump_channel_value(self.serde, channel, value)
            ord_ = rows[idx][0] if idx in rows else i
            rows[idx] = (ord_, channel, wtype, wbytes)
        if not rows:
            return None
        ordered = sorted(rows.items(), key=lambda item: item[1][0])
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
        }

    def get_next_version(self, current: str | int | float | None, channel: None) -> str:
        """Same string scheme as the other bundled savers: ``f"{step:032}.{16 hex}"``,
        so forks of one parent never collide on ``(channel, version)``."""
        return next_string_version(current)
