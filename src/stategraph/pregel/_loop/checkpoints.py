"""Checkpoints of a run: restoring the loaded one, saving new ones per durability,
saving pending writes, and the snapshots of ``DeltaChannel`` values.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterable, Mapping
from typing import Any

from stategraph._clock import iso_of_ns, time_ns, utc_now_iso
from stategraph.channels.base import MISSING
from stategraph.checkpoint._step import StepVersions
from stategraph.constants import CONF, NO_WRITES, TASKS
from stategraph.pregel import _effects as fx
from stategraph.pregel._checkpoint import COUNTERS_KEY, delta_channels_to_snapshot, read_counters
from stategraph.pregel._loop.fields import LoopFields, _release
from stategraph.pregel._run_channels import restore_channels
from stategraph.types import Send


class CheckpointsMixin(LoopFields):
    """Loads, saves and re-saves the run's checkpoints and pending writes."""

    def _restore(self, saved: Any, share: bool = False) -> None:
        """Set up the checkpoint and channels from ``saved`` (None: a new thread).

        With ``share``, the channels that start empty are the graph's own until a step
        writes them (see :mod:`stategraph.pregel._run_channels`): only a run whose every
        ``apply_writes`` call is given ``shared=self.shared_specs`` may ask for it.
        """
        values = {} if saved is None else saved.checkpoint["channel_values"]
        self.null_version = None
        if share:
            self.shared_specs = self.graph.channels
            self.channels = restore_channels(self.graph, values)
        else:
            specs = self.graph.channels
            self.channels = {
                k: spec.from_checkpoint(values.get(k, MISSING)) for k, spec in specs.items()
            }
        if saved is None:
            self.checkpoint = {
                "v": 4,
                "id": "",
                "ts": "",
                "channel_values": {},
                "channel_versions": {},
                "versions_seen": {},
                "updated_channels": None,
            }
            self.metadata = {"step": -2}
            self.checkpoint_config = {CONF: self._base_configurable()}
            self.pending_writes = []
            return
        cp = saved.checkpoint
        self.checkpoint = {
            "v": cp.get("v", 4),
            "id": cp["id"],
            "ts": cp.get("ts", ""),
            "channel_values": values,
            "channel_versions": dict(cp["channel_versions"]),
            "versions_seen": {k: dict(v) for k, v in cp["versions_seen"].items()},
            "updated_channels": cp.get("updated_channels"),
        }
        self.checkpoint_id = cp["id"]
        self.metadata = dict(saved.metadata or {})
        self.checkpoint_config = {CONF: {**self._base_configurable(), "checkpoint_id": cp["id"]}}
        self.parent_config = saved.parent_config
        self.pending_writes = list(saved.pending_writes or ())
        self.saved_versions = dict(cp["channel_versions"])
        if self.delta_keys:
            self.delta_counters = read_counters(saved.metadata, self.delta_keys)

    def _hydrate(self, saved: Any) -> Generator[fx.Effect, Any, None]:
        """Rebuild the reducer channels whose value the loaded checkpoint does not
        store (``DeltaChannel`` deltas) from the saver's history of the thread."""
        if saved is None or not self.rebuildable or self.saver is None:
            return
        cp = saved.checkpoint
        values = cp["channel_values"]
        versions = cp["channel_versions"]
        need = [k for k in self.rebuildable if k not in values and k in versions]
        if not need:
            return
        history = yield fx.DeltaHistory(saved.config, need)
        specs = self.graph.channels
        for k in need:
            entry = (history or {}).get(k) or {}
            channel = specs[k].from_checkpoint(entry.get("seed", MISSING))
            writes = entry.get("writes") or ()
            replay = getattr(channel, "replay_writes", None)
            if replay is not None:
                replay(writes)
            else:
                for write in writes:  # a plain reducer folds one write at a time
                    channel.update([write[2]])
            self.channels[k] = channel

    def _delta_values(
        self,
        values: dict[str, Any],
        new_versions: Mapping[str, Any],
        force: bool,
        due: set[str] | frozenset[str] = frozenset(),
    ) -> dict[str, Any]:
        """``values`` plus a ``_DeltaSnapshot`` for each delta channel that must be
        stored whole: changed ones on ``force``, an ``Overwrite`` or their snapshot
        frequency, and those ``due`` (see :mod:`stategraph.pregel._checkpoint`). The
        counters of the channels stored are dropped."""
        snaps: dict[str, Any] = {}
        for k in self.delta_keys:
            if k in due or k in new_versions:
                channel: Any = self.channels[k]
                if k in due or force or channel.wants_snapshot():
                    snap = channel.snapshot()
                    if snap is not MISSING:
                        snaps[k] = snap
                        self.delta_counters.pop(k, None)
        return {**values, **snaps} if snaps else values

    def _bump_unchanged(
        self,
        due: set[str],
        versions: dict[str, Any],
        seen_all: dict[str, Any],
        new_versions: dict[str, Any],
    ) -> None:
        """Give the channels ``due`` that did not change in this step a new version,
        so savers store their snapshot (a saver stores values only for new versions);
        the nodes that had seen the old version are marked as having seen the new one,
        so nothing is triggered by it (as in LangGraph)."""
        stale = [k for k in sorted(due) if k not in new_versions]
        if not stale:
            return
        new = self.get_next_version(max(versions.values()), None)
        for k in stale:
            old = versions[k]
            versions[k] = new_versions[k] = new
            for name, seen in list(seen_all.items()):
                if seen.get(k) == old:
                    seen_all[name] = {**seen, k: new}
                    if self.tracker is not None and self.tracker.seen_moved is not None:
                        self.tracker.seen_moved.add(name)
        if self.tracker is not None:
            self.tracker.top = new
            if self.tracker.moved is not None:
                self.tracker.moved.update(stale)

    def _count_delta_step(
        self, source: str, versions: Mapping[str, Any], new_versions: Mapping[str, Any]
    ) -> set[str]:
        """Count the checkpoint being saved in the delta counters (a fork copies its
        checkpoint: it adds no superstep); return the channels now due for a snapshot
        (never one without a version: it was never written)."""
        counters = self.delta_counters
        for k in self.delta_keys:
            pair = counters.get(k)
            if pair is None:
                pair = counters[k] = [0, 0]
            if k in new_versions:
                pair[0] += 1
            if source != "fork":
                pair[1] += 1
        return delta_channels_to_snapshot(self.channels, counters, versions)

    def prepare_delta_writes(self, writes: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
        """Give the messages written to delta channels their ids before the writes are
        saved, so replaying them always rebuilds the same messages."""
        if not self.delta_keys:
            return writes
        specs = self.graph.channels
        out = writes
        for i, (c, v) in enumerate(writes):
            if c in self.delta_keys:
                fixed = specs[c].prepare_write(v)  # type: ignore[attr-defined]
                if fixed is not v:
                    if out is writes:
                        out = list(writes)
                    out[i] = (c, fixed)
        return out

    def _advance(self, step: int) -> None:
        """End step ``step`` of a run without a saver (what :meth:`_save` does then):
        nothing reads the checkpoint ids back, but task ids and subgraph namespaces
        derive from them, and two runs must not share those (LangGraph makes them fresh
        per run too): a random run prefix, then the step. (128 random bits as 32 hex
        digits, the length of a uuid4's hex, without building a UUID object: a subgraph
        run, often of a few steps, pays this.)"""
        prefix = self.anon_prefix
        if prefix is None:
            prefix = self.anon_prefix = os.urandom(16).hex()
        self.checkpoint_id = f"{prefix}.{step}"
        self.step = step + 1

    def _save(self, source: str, step: int) -> Generator[fx.Effect, Any, None]:
        """Create a checkpoint of the current channels and save it per durability."""
        if not self.want_checkpoints:
            self._advance(step)
            return
        run = self.run
        if (
            not self.save_loop
            and self._exit_parent is not None
            and "checkpoints" not in run.modes
            and "debug" not in run.modes
            and not self.delta_keys
        ):
            # durability="exit" and nothing watches checkpoints: only the last one is
            # ever saved. It is kept up to date in place; its metadata and configs are
            # made once, when the run ends (_materialize). (A graph with DeltaChannels
            # takes the full path: its saved checkpoint must carry their snapshots.)
            self._save_in_place(source, step, _new_checkpoint_id(step))
            return
        cp = self.checkpoint
        versions = cp["channel_versions"]
        seen = cp["versions_seen"]
        tracker = self.tracker
        moved = tracker.moved if tracker is not None else None
        new_id = _new_checkpoint_id(step)
        # with durability="exit" the previous checkpoint is never handed out: its values
        # dict is updated in place
        values = self._channel_values(versions, moved, reuse=not self.save_loop)
        # the loop keeps working on this checkpoint's versions dicts (a saver gets a
        # copy, below; with durability="exit" none is made before the run ends)
        checkpoint = {
            "v": 4,
            "id": new_id,
            "ts": _now_iso(),
            "channel_values": values,
            "channel_versions": versions,
            "versions_seen": seen,
            "updated_channels": sorted(self.updated) if self.updated else None,
        }
        # what the loop says of this checkpoint (and the checkpoints/debug payloads show);
        # what is saved adds the run's config metadata (see saved_metadata_extra)
        own = {"source": source, "step": step, "parents": dict(run.parent_ids)}
        new_versions: dict[str, Any] = {}
        if self.delta_keys or (self.saver is not None and self.save_loop):
            if moved is None or not self.save_loop:
                new_versions = {
                    k: v for k, v in versions.items() if self.saved_versions.get(k) != v
                }
            else:
                new_versions = {k: versions[k] for k in moved if k in versions}
                if tracker is not None and tracker.seen_moved is not None:
                    # what changed since the parent, for savers that store the change
                    new_versions = StepVersions(new_versions, tracker.seen_moved)
        if self.delta_keys:
            force = source != "loop" or not self.save_loop or self.force_delta_snapshot
            due = self._count_delta_step(source, versions, new_versions)
            if due:
                self._bump_unchanged(due, versions, seen, new_versions)
            values = self._delta_values(values, new_versions, force, due)
            checkpoint["channel_values"] = values
            if self.delta_counters:
                own[COUNTERS_KEY] = {k: list(c) for k, c in self.delta_counters.items()}
            if self.save_loop:
                self.force_delta_snapshot = False
        extra = self.metadata_extra
        metadata = {**extra, **own} if extra else own
        parent_config = self.checkpoint_config
        put_config = {CONF: {**parent_config[CONF]}}
        self.checkpoint = checkpoint
        self.checkpoint_id = new_id
        self.metadata = metadata
        self.parent_config = parent_config if parent_config[CONF].get("checkpoint_id") else None
        self.checkpoint_config = {CONF: {**self._base_configurable(), "checkpoint_id": new_id}}
        self.step = step + 1
        if self.saver is not None:
            if self.save_loop:
                if moved is None:
                    self.saved_versions = dict(versions)
                # the saver gets a snapshot (it may read it later, in the background):
                # the next steps cannot change what gets saved
                handed = {**checkpoint, "channel_versions": dict(versions)}
                handed["versions_seen"] = dict(seen)
                yield fx.Put(put_config, handed, metadata, new_versions, self.blocking)
                self.dirty = False
            else:
                self.dirty = True
                # the writes of the steps this checkpoint covers are in it now
                self.exit_writes = []
                if self._exit_parent is None:
                    self._exit_parent = put_config
        if moved is not None:
            moved.clear()
            if self.save_loop and tracker is not None:
                # (a new set: the one handed with new_versions may still be read)
                tracker.seen_moved = set()
        if "checkpoints" in run.modes or "debug" in run.modes:
            from stategraph.pregel.debug import checkpoint_payload, debug_event

            payload = checkpoint_payload(self, checkpoint, own)  # type: ignore[arg-type]  # self is a Loop
            run.emit("checkpoints", payload)
            run.emit("debug", debug_event("checkpoint", step, payload))

    def _save_in_place(self, source: str, step: int, new_id: str) -> None:
        """Turn the working checkpoint into the one of ``step`` (durability="exit").

        Its values are brought up to date now (the channels may change before the run
        ends: a failed or interrupted step); the text of its timestamp and its sorted
        ``updated_channels`` wait for :meth:`_materialize` (``self.updated`` is a new
        set at every step, never changed after it)."""
        cp = self.checkpoint
        tracker = self.tracker
        moved = tracker.moved if tracker is not None else None
        cp["channel_values"] = self._channel_values(cp["channel_versions"], moved, reuse=True)
        cp["id"] = new_id
        self._deferred = (source, step, self.checkpoint_id, _now_ns(), self.updated)
        self.checkpoint_id = new_id
        self.step = step + 1
        self.dirty = True
        # the writes of the steps this checkpoint covers are in it now
        self.exit_writes = []
        if moved is not None:
            moved.clear()

    def _materialize(self) -> None:
        """Make the metadata and configs of a checkpoint saved in place."""
        deferred = self._deferred
        if deferred is None:
            return
        self._deferred = None
        source, step, parent_id, ns, updated = deferred
        cp = self.checkpoint
        cp["ts"] = iso_of_ns(ns)
        cp["updated_channels"] = sorted(updated) if updated else None
        run = self.run
        metadata = {
            **self.metadata_extra,
            "source": source,
            "step": step,
            "parents": dict(run.parent_ids),
        }
        self.metadata = metadata
        base = self._base_configurable()
        self.parent_config = {CONF: {**base, "checkpoint_id": parent_id}} if parent_id else None
        self.checkpoint_config = {CONF: {**base, "checkpoint_id": self.checkpoint_id}}

    def _channel_values(
        self, versions: Mapping[str, Any], moved: set[str] | None = None, reuse: bool = False
    ) -> dict[str, Any]:
        """Checkpoint values of all channels; only channels whose version moved since
        the previous call are read again (a channel changes only with its version).

        ``moved`` names those channels when known (else versions are compared);
        ``reuse`` updates the previous call's dict in place instead of copying it.
        """
        prev = self._values_cache
        if prev is not None and moved is not None:
            values = prev if reuse else dict(prev)
            _refresh_values(values, self.channels, moved)
            self._values_versions = None
        elif prev is None or self._values_versions is None:
            values = {}
            for k, ch in self.channels.items():
                v = ch.checkpoint()
                if v is not MISSING:
                    values[k] = v
            self._values_versions = dict(versions)
        else:
            values = dict(prev)
            seen = self._values_versions
            bumped = [k for k, ver in versions.items() if seen.get(k) != ver]
            _refresh_values(values, self.channels, bumped)
            self._values_versions = dict(versions)
        self._values_cache = values
        if self.untracked and TASKS in values:
            return {**values, TASKS: [self._saved_packet(p) for p in values[TASKS]]}
        return values

    def _saved_packet(self, packet: Any) -> Any:
        """A ``Send`` as it is saved: without the values of untracked state keys."""
        if isinstance(packet, Send) and isinstance(packet.arg, dict):
            if not self.untracked.isdisjoint(packet.arg):
                arg = {k: v for k, v in packet.arg.items() if k not in self.untracked}
                return Send(packet.node, arg, timeout=packet.timeout)
        return packet

    def _put_writes(
        self, task_id: str, writes: list[tuple[str, Any]], path: str | tuple[Any, ...] = ""
    ) -> Generator[fx.PutWrites, Any, None]:
        """Save ``writes`` of task ``task_id`` now, or keep them for the run's end."""
        effect = self._writes_effect(task_id, writes, path)
        if effect is not None:
            yield effect

    def _writes_effect(
        self, task_id: str, writes: list[tuple[str, Any]], path: str | tuple[Any, ...]
    ) -> fx.PutWrites | None:
        """The effect that saves ``writes`` of task ``task_id`` now; ``None`` when there
        is nothing to save or they are kept for the run's end (durability="exit", or a
        checkpoint not saved yet: most are dropped unsaved, so a task's ``path`` is
        turned into its saved text only when saved, see :func:`path_text`)."""
        if self.saver is None or not writes:
            return None
        if self.untracked:
            # untracked keys live in memory only: neither their writes nor their values
            # inside Send packets are saved
            writes = [
                (c, self._saved_packet(v)) if c == TASKS else (c, v)
                for c, v in writes
                if c not in self.untracked
            ]
            if not writes:
                writes = [(NO_WRITES, None)]  # still mark the task as finished
        if self.save_loop and not self.dirty:
            return fx.PutWrites(
                self.checkpoint_config, writes, task_id, path_text(path), self.blocking
            )
        self.exit_writes.append((task_id, writes, path))
        return None

    def _resave_head(self) -> Generator[fx.Effect, Any, None]:
        """Save the loaded checkpoint again, under the same id, with the current values."""
        if self.saver is None or not self.checkpoint_id:
            return
        versions = self.checkpoint["channel_versions"]
        checkpoint = {
            **self.checkpoint,
            "channel_values": self._channel_values(versions),
            "channel_versions": dict(versions),
            "versions_seen": dict(self.checkpoint["versions_seen"]),
        }
        new_versions = {k: v for k, v in versions.items() if self.saved_versions.get(k) != v}
        if self.delta_keys:
            checkpoint["channel_values"] = self._delta_values(
                checkpoint["channel_values"], new_versions, True
            )
        parent = self.parent_config or {CONF: self._base_configurable()}
        put_config = {CONF: {**self._base_configurable(), **parent[CONF]}}
        if not (parent[CONF].get("checkpoint_id")):
            put_config[CONF].pop("checkpoint_id", None)
        self.checkpoint = checkpoint
        self.saved_versions = dict(versions)
        yield fx.Put(put_config, checkpoint, self.metadata, new_versions, True)
        self.checkpoint = _working_copy(checkpoint)

    def seal_unwritten_deltas(self) -> None:
        """Keep a fork from starting the subscribers of a delta channel never written.

        A ``DeltaChannel`` holds its empty value before any write, and a node that never
        ran is started by any trigger holding a value. A run's first step considers
        only the nodes subscribed to what its input changed, but a fork (a replay, an
        ``update_state`` as input) of a checkpoint saved before the channel's first
        write would start them. So the channel gets a version (stored as a snapshot of
        its empty value, where history walks stop) and those nodes are marked as
        having seen it, as LangGraph does.
        """
        if not self.delta_keys:
            return
        versions = self.checkpoint["channel_versions"]
        seen_all = self.checkpoint["versions_seen"]
        new: Any = None
        for key in sorted(self.delta_keys):
            if key in versions or not self.channels[key].is_available():
                continue
            waiting = [
                name
                for name in self.trigger_to_nodes.get(key, ())
                if key not in (seen_all.get(name) or {})
            ]
            if not waiting:
                continue
            if new is None:
                top = max(versions.values()) if versions else None
                new = self.get_next_version(top, None)
            versions[key] = new
            for name in waiting:
                seen_all[name] = {**(seen_all.get(name) or {}), key: new}

    def _finish_exit(self) -> Generator[fx.Effect, Any, None]:
        run = self.run
        _release(self.tasks)
        self._materialize()
        if self.status in ("done", "out_of_steps"):
            self.output = self.read_state(run.output_keys)
        if self.saver is None:
            return
        if self.status == "done" and run.nested and not run.stateful and not self.save_loop:
            # durability="exit": a subgraph that finished leaves nothing to resume, so
            # only one that stopped (interrupt, error) or keeps its state is saved
            self.dirty = False
            self.exit_writes = []
        if self.dirty:
            put_config = self._exit_parent or self.checkpoint_config
            self.saved_versions = dict(self.checkpoint["channel_versions"])
            exit_versions = dict(self.checkpoint["channel_versions"])
            stored = self.checkpoint["channel_values"]
            for k in self.delta_keys:
                if k not in stored:
                    # unchanged since the last save: keep the value stored for its version
                    exit_versions.pop(k, None)
            yield fx.Put(put_config, self.checkpoint, self.metadata, exit_versions, True)
            self.dirty = False
        for task_id, writes, path in self.exit_writes:
            yield fx.PutWrites(self.checkpoint_config, writes, task_id, path_text(path), True)
        self.exit_writes = []
        yield fx.FLUSH


def path_text(path: str | tuple[Any, ...]) -> str:
    """A task's path as its writes are saved with it (``"~"``-joined parts)."""
    return path if type(path) is str else "~".join(map(str, path))


def _working_copy(checkpoint: dict[str, Any]) -> dict[str, Any]:
    # versions_seen's inner dicts are replaced, never mutated (copy-on-write)
    return {
        **checkpoint,
        "channel_versions": dict(checkpoint["channel_versions"]),
        "versions_seen": dict(checkpoint["versions_seen"]),
    }


_now_iso = utc_now_iso
"""The time a checkpoint is made, as its ``ts`` (ISO 8601, UTC)."""

_now_ns = time_ns
"""The time a checkpoint saved in place is made (its ``ts`` is written at the end)."""


def _refresh_values(
    values: dict[str, Any], channels: Mapping[str, Any], keys: Iterable[str]
) -> None:
    """Bring ``values`` up to date with the checkpoints of the ``keys`` channels: a
    channel that emptied drops out, a key with no channel is left as it is."""
    for k in keys:
        changed = channels.get(k)
        if changed is None:
            continue
        v = changed.checkpoint()
        if v is MISSING:
            values.pop(k, None)
        else:
            values[k] = v


_uuid6_str: Callable[..., str] | None = None


def _new_checkpoint_id(step: int) -> str:
    """A new checkpoint id (a version-6 UUID whose clock sequence is ``step``).

    The id maker is looked up once, not imported again at every step: a statement
    ``from ... import`` inside the function cost about as much as making the id.
    """
    global _uuid6_str
    make = _uuid6_str
    if make is None:
        from stategraph.checkpoint._ids import uuid6_str

        make = _uuid6_str = uuid6_str
    return make(clock_seq=step)
