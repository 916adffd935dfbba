"""Checkpoint bodies stored as a change against a keyframe body, for ``SqliteSaver``.

Storage format 5 keeps the body of a big checkpoint (its versions, without values) as
its change from a keyframe body of the same thread; reading it reads the keyframe too.
Before a keyframe goes (pruned, or saved again under its id) the bodies stored against
it are rewritten whole. Private: the saver mixes :class:`SqliteBodies` in.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from stategraph.checkpoint._body_delta import apply_delta, check_keyframe, delta_base
from stategraph.checkpoint._compact import pack_checkpoint, unpack_checkpoint
from stategraph.checkpoint._seal import sealer_of
from stategraph.checkpoint.serde.base import DeserializationError, SerializerProtocol
from stategraph.checkpoint.sqlite._statements import _SELECT_BODY

__all__ = ["SqliteBodies"]


class SqliteBodies:
    """Reading a body stored whole or as a change, and storing such bodies whole again."""

    serde: SerializerProtocol

    def _read_body(
        self,
        conn: sqlite3.Connection,
        thread_id: str,
        ns: str,
        checkpoint_id: str,
        stored: tuple[str, bytes],
        memo: dict[tuple[str, Any], dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """The body (checkpoint without values) stored as ``stored`` (still sealed) for
        ``checkpoint_id``; a body stored as a change reads its keyframe too (from
        ``memo`` when there, keyed by id and hash)."""
        loads = self.serde.loads_typed
        sealer = sealer_of(self.serde)
        if sealer is not None:
            stored = sealer.unseal(("c", thread_id, ns, checkpoint_id), stored)
        value = loads(stored)
        base = delta_base(value)
        if base is None:
            return unpack_checkpoint(value, checkpoint_id)
        keyframe = None if memo is None else memo.get((base, value[10]))
        if keyframe is None:
            found = conn.execute(_SELECT_BODY, (thread_id, ns, base)).fetchone()
            if found is None:
                raise DeserializationError(
                    f"Thread '{thread_id}', checkpoint {checkpoint_id}: the keyframe "
                    f"{base} its body is stored against is missing (checkpoint data is "
                    "incomplete)."
                )
            typed = (found[0], found[1])
            if sealer is not None:
                typed = sealer.unseal(("c", thread_id, ns, base), typed)
            check_keyframe(value, typed[1], checkpoint_id)
            kf_value = loads(typed)
            if delta_base(kf_value) is not None:
                raise DeserializationError(
                    f"Thread '{thread_id}', checkpoint {checkpoint_id}: its keyframe {base} "
                    "is not stored whole (checkpoint data is corrupt)."
                )
            keyframe = unpack_checkpoint(kf_value, base)
            if memo is not None:
                if len(memo) >= 2:
                    memo.clear()
                memo[(base, value[10])] = keyframe
        return apply_delta(value, keyframe, checkpoint_id)

    def _rewrite_bodies(
        self, conn: sqlite3.Connection, tid: str, keep: set[tuple[str, str]] | None
    ) -> None:
        """Store whole (in the caller's write transaction) the bodies of thread ``tid``
        stored against a keyframe that is about to go: one not in ``keep`` (``keep``
        ``None``: every body stored as a change)."""
        rows = conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, type, checkpoint, body_base FROM "
            "checkpoints WHERE thread_id = ? AND body_base IS NOT NULL",
            (tid,),
        ).fetchall()
        for ns, cid, ctype, cbytes, base in rows:
            if keep is not None and ((ns, cid) not in keep or (ns, base) in keep):
                continue
            self._store_whole(conn, tid, ns, cid, (ctype, cbytes))

    def _store_whole(
        self, conn: sqlite3.Connection, tid: str, ns: str, cid: str, stored: tuple[str, bytes]
    ) -> None:
        """Rewrite the body of checkpoint ``cid``, stored as a change, whole."""
        body = self._read_body(conn, tid, ns, cid, stored)
        typed = self.serde.dumps_typed(pack_checkpoint(body, ts_from_id=True))
        sealer = sealer_of(self.serde)
        if sealer is not None:
            typed = sealer.seal(("c", tid, ns, cid), typed)
        conn.execute(
            "UPDATE checkpoints SET type = ?, checkpoint = ?, body_base = NULL WHERE "
            "thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            (typed[0], typed[1], tid, ns, cid),
        )
