"""The run loop as a sans-I/O state machine.

:meth:`Loop.drive` is a generator. It makes every scheduling decision itself (what to
load, which tasks run, how writes are committed, what is checkpointed and streamed,
when to stop) and *yields effects* for the things it cannot do without I/O: loading
and saving checkpoints, writing pending writes, reading and writing the node cache,
and executing a step's tasks. The synchronous shell (``pregel/sync_shell.py``) and the
asynchronous shell (``pregel/async_shell.py``) perform those effects and send results
back. The decisions therefore exist exactly once.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

from stategraph.channels.base import MISSING, BaseChannel
from stategraph.channels.untracked_value import UntrackedValue
from stategraph.constants import (
    CALL_RESULT,
    CALL_RESUME,
    CONF,
    ERROR,
    ERROR_SOURCE,
    INTERRUPT,
    NO_WRITES,
    NS_SEP,
    NULL_TASK_ID,
    PULL,
    PUSH,
    RESUME,
    RESUME_ASKED,
    TASKS,
)
from stategraph.errors import (
    EmptyInputError,
    ErrorCode,
    GraphBubbleUp,
    GraphDrained,
    GraphInterrupt,
    GraphRecursionError,
    InvalidUpdateError,
    NodeError,
    create_error_message,
)
from stategraph.pregel import effects as fx
from stategraph.pregel._checkpoint import COUNTERS_KEY, delta_channels_to_snapshot, read_counters
from stategraph.pregel.algo import (
    CONTROL_CHANNELS,
    StepTracker,
    apply_writes,
    increment,
    local_read,
    make_task_id,
    null_version_of,
    read_channels,
    triggered,
    writes_sort_key,
)
from stategraph.pregel.io import NO_UPDATE, map_command, map_input, read_output
from stategraph.pregel.run import RunContext
from stategraph.pregel.task import _MISSING, Scratchpad, Task
from stategraph.types import Command, Interrupt, Send

__all__ = ["Loop", "WriteBatch"]

_SUCCESS_EXCLUDED = frozenset(
    {ERROR, ERROR_SOURCE, INTERRUPT, RESUME, RESUME_ASKED, CALL_RESULT, CALL_RESUME}
)


class WriteBatch:
    """A pseudo-task carrying writes that do not come from a node (input, updates)."""

    __slots__ = ("name", "path", "triggers", "writes")

    def __init__(self, writes: list[tuple[str, Any]], name: str = "__input__") -> None:
        self.name = name
        self.path: tuple[Any, ...] = ()
        self.triggers: tuple[str, ...] = ()
        self.writes = writes


class Loop:
    """One run of a graph over its channels, driven step by step by a shell."""

    def __init__(self, run: RunContext, input: Any) -> None:
        graph = run.graph
        self.run = run
        run.loop = self
        self.graph = graph
        self.nodes = graph.nodes
        self.trigger_to_nodes: Mapping[str, Any] = graph.trigger_to_nodes
        self.input = input
        self.saver = run.checkpointer
        self.get_next_version = self.saver.get_next_version if self.saver is not None else increment
        self.channels: dict[str, BaseChannel] = {}
        self.checkpoint: dict[str, Any] = {}
        self.checkpoint_id: str = ""
        self.checkpoint_config: dict[str, Any] = {}
        self.parent_config: dict[str, Any] | None = None
        self.metadata: dict[str, Any] = {}
        self.pending_writes: list[tuple[str, str, Any]] = []
        self.saved_versions: dict[str, Any] = {}
        self.step = 0
        self.stop = 0
        self.tasks: dict[str, Task] = {}
        self.updated: set[str] | None = None
        self.status = "pending"
        self.interrupts: list[Interrupt] = []
        self.resuming = False
        self.first_tick = True
        self.exit_writes: list[tuple[str, list[tuple[str, Any]], str]] = []
        self.dirty = False  # a checkpoint exists in memory that was not saved (durability=exit)
        self.output: Any = None
        self._exit_parent: dict[str, Any] | None = None
        # (source, step, parent id) of a checkpoint saved in place whose metadata and
        # configs are not made yet (see _save_in_place)
        self._deferred: tuple[str, int, str] | None = None
        # whether a "values" chunk of the output keys was produced (invoke returns None
        # when not, as LangGraph's invoke returns the last such chunk)
        self.output_written = False
        self.first_step_writes: list[tuple[str, Any]] = []
        self._values_cache: dict[str, Any] | None = None
        self._values_versions: dict[str, Any] | None = {}
        # state keys kept only in memory: removed from Send packets before they are saved
        self.untracked: frozenset[str] = _untracked_keys(graph)
        # DeltaChannel keys (stored as deltas) and the reducer channels that can read a
        # value stored that way
        self.delta_keys, self.rebuildable = _delta_keys(graph)
        # per delta channel written so far: [updates, supersteps] since its last snapshot
        self.delta_counters: dict[str, list[int]] = {}
        # the next saved checkpoint stores every changed delta channel whole (its step's
        # writes are not all saved against its parent)
        self.force_delta_snapshot = False
        self.blocking = run.durability == "sync"
        self.save_loop = run.durability != "exit"
        self.want_checkpoints = self.saver is not None
        # the run replays a named checkpoint (root: checkpoint_id in the config; subgraph:
        # a checkpoint named for its namespace by a replayed subgraph config)
        self.replay_target = False
        # a subgraph without saved state whose parent task resumes starts over, so an
        # answer reaches its interrupt in whichever step asks
        self.answer_any_step = run.nested and self.saver is None and run.resuming
        self.tracker: StepTracker | None = None

    # ------------------------------------------------------------------ helpers
    def _base_configurable(self) -> dict[str, Any]:
        run = self.run
        conf = {"thread_id": run.thread_id, "checkpoint_ns": run.ns}
        return conf

    def _restore(self, saved: Any) -> None:
        specs = self.graph.channels
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
            self.channels = {k: spec.from_checkpoint(MISSING) for k, spec in specs.items()}
            self.metadata = {"step": -2}
            self.checkpoint_config = {CONF: self._base_configurable()}
            self.pending_writes = []
            return
        cp = saved.checkpoint
        values = cp["channel_values"]
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
        self.channels = {
            k: spec.from_checkpoint(values.get(k, MISSING)) for k, spec in specs.items()
        }
        self.metadata = dict(saved.metadata or {})
        self.checkpoint_config = {CONF: {**self._base_configurable(), "checkpoint_id": cp["id"]}}
        self.parent_config = saved.parent_config
        self.pending_writes = list(saved.pending_writes or ())
        self.saved_versions = dict(cp["channel_versions"])
        if self.delta_keys:
            self.delta_counters = read_counters(saved.metadata, self.delta_keys)

    def _hydrate(self, saved: Any) -> Generator[Any, Any, None]:
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
        history = yield (fx.DELTA_HISTORY, saved.config, need)
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

    def _save(self, source: str, step: int) -> Generator[Any, Any, None]:
        """Create a checkpoint of the current channels and save it per durability."""
        if not self.want_checkpoints:
            self.checkpoint_id = f"{step}"
            self.step = step + 1
            return
        from stategraph.checkpoint._ids import uuid6_str

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
            self._save_in_place(source, step, uuid6_str(clock_seq=step))
            return
        cp = self.checkpoint
        versions = cp["channel_versions"]
        seen = cp["versions_seen"]
        tracker = self.tracker
        moved = tracker.moved if tracker is not None else None
        new_id = uuid6_str(clock_seq=step)
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
        metadata = {**run.metadata, "source": source, "step": step, "parents": dict(run.parent_ids)}
        if run.run_id is not None:
            metadata["run_id"] = run.run_id
        new_versions: dict[str, Any] = {}
        if self.delta_keys or (self.saver is not None and self.save_loop):
            if moved is None or not self.save_loop:
                new_versions = {
                    k: v for k, v in versions.items() if self.saved_versions.get(k) != v
                }
            else:
                new_versions = {k: versions[k] for k in moved if k in versions}
        if self.delta_keys:
            force = source != "loop" or not self.save_loop or self.force_delta_snapshot
            due = self._count_delta_step(source, versions, new_versions)
            if due:
                self._bump_unchanged(due, versions, seen, new_versions)
            values = self._delta_values(values, new_versions, force, due)
            checkpoint["channel_values"] = values
            if self.delta_counters:
                metadata[COUNTERS_KEY] = {k: list(c) for k, c in self.delta_counters.items()}
            if self.save_loop:
                self.force_delta_snapshot = False
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
                yield (fx.PUT, put_config, handed, metadata, new_versions, self.blocking)
                self.dirty = False
            else:
                self.dirty = True
                # the writes of the steps this checkpoint covers are in it now
                self.exit_writes = []
                if self._exit_parent is None:
                    self._exit_parent = put_config
        if moved is not None:
            moved.clear()
        if "checkpoints" in run.modes or "debug" in run.modes:
            from stategraph.pregel.debug import checkpoint_payload, debug_event

            payload = checkpoint_payload(self, checkpoint, metadata)
            run.emit("checkpoints", payload)
            run.emit("debug", debug_event("checkpoint", step, payload))

    def _save_in_place(self, source: str, step: int, new_id: str) -> None:
        """Turn the working checkpoint into the one of ``step`` (durability="exit")."""
        cp = self.checkpoint
        tracker = self.tracker
        moved = tracker.moved if tracker is not None else None
        cp["channel_values"] = self._channel_values(cp["channel_versions"], moved, reuse=True)
        cp["id"] = new_id
        cp["ts"] = _now_iso()
        cp["updated_channels"] = sorted(self.updated) if self.updated else None
        self._deferred = (source, step, self.checkpoint_id)
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
        source, step, parent_id = deferred
        run = self.run
        metadata = {**run.metadata, "source": source, "step": step, "parents": dict(run.parent_ids)}
        if run.run_id is not None:
            metadata["run_id"] = run.run_id
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
            channels = self.channels
            for k in moved:
                changed = channels.get(k)
                if changed is None:
                    continue
                v = changed.checkpoint()
                if v is MISSING:
                    values.pop(k, None)
                else:
                    values[k] = v
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
            for k, ver in versions.items():
                if seen.get(k) != ver:
                    changed = self.channels.get(k)
                    if changed is None:
                        continue
                    v = changed.checkpoint()
                    if v is MISSING:
                        values.pop(k, None)
                    else:
                        values[k] = v
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
        self, task_id: str, writes: list[tuple[str, Any]], path: str = ""
    ) -> Generator[Any, Any, None]:
        if self.saver is None or not writes:
            return
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
            yield (fx.PUT_WRITES, self.checkpoint_config, writes, task_id, path, self.blocking)
        else:
            self.exit_writes.append((task_id, writes, path))

    # ------------------------------------------------------------------ start
    def drive(self) -> Generator[Any, Any, Any]:
        """Run the whole loop, yielding effects; returns the final output."""
        run = self.run
        saved = None
        if self.saver is not None:
            saved = yield from self._load()
        self._restore(saved)
        yield from self._hydrate(saved)
        try:
            yield from self._first(saved)
            while self._tick():
                yield from self._execute_step()
                if self.status != "pending":
                    break
        except GeneratorExit:
            # the shell abandoned the run (e.g. a saver call failed): nothing to save
            raise
        except BaseException:
            yield from self._finish_exit()
            raise
        yield from self._finish_exit()
        if self.status == "out_of_steps":
            raise GraphRecursionError(
                create_error_message(
                    message=(
                        f"Recursion limit of {run.recursion_limit} reached without hitting a "
                        "stop condition. You can increase the limit by setting the "
                        '`recursion_limit` config key, e.g. config={"recursion_limit": 100}, '
                        "or add a condition that routes to END."
                    ),
                    error_code=ErrorCode.GRAPH_RECURSION_LIMIT,
                )
            )
        return self.output

    def _load(self) -> Generator[Any, Any, Any]:
        """Read the checkpoint the run starts from (``None`` for a new thread)."""
        run = self.run
        conf = self._base_configurable()
        plan = run.replay
        if plan is not None and not run.nested and not run.checkpoint_id and plan.targets:
            yield from self._resolve_entry(plan)
        target = anchor = None
        if plan is not None and run.nested:
            target, anchor = plan.claim(run.ns)
        wanted = target or run.checkpoint_id
        if wanted:
            conf["checkpoint_id"] = wanted
            self.replay_target = bool(target) or not run.nested
        if anchor is not None and target is None:
            # a replayed parent: start from the state this subgraph had back then
            saved = yield (fx.GET_BEFORE, {CONF: conf}, anchor)
        else:
            saved = yield (fx.GET_TUPLE, {CONF: conf})
        if saved is None and wanted:
            from stategraph.errors import CheckpointNotFoundError

            raise CheckpointNotFoundError(
                f"No checkpoint with id '{wanted}' in thread "
                f"'{run.thread_id}' (namespace '{run.ns}'). Use get_state_history() "
                "to list the checkpoints of a thread."
            )
        return saved

    def _resolve_entry(self, plan: Any) -> Generator[Any, Any, None]:
        """Find the root checkpoint of a subgraph checkpoint config without a map."""
        run = self.run
        # the deepest level named: its metadata knows every enclosing checkpoint
        entry_ns = max(plan.targets, key=lambda ns: ns.count(NS_SEP))
        entry_id = plan.targets[entry_ns]
        entry = yield (
            fx.GET_TUPLE,
            {
                CONF: {
                    "thread_id": run.thread_id,
                    "checkpoint_ns": entry_ns,
                    "checkpoint_id": entry_id,
                }
            },
        )
        parents = dict((entry.metadata or {}).get("parents") or {}) if entry is not None else {}
        root_id = parents.pop("", None)
        if root_id is None:
            from stategraph.errors import CheckpointNotFoundError

            raise CheckpointNotFoundError(
                f"No checkpoint with id '{entry_id}' in namespace '{entry_ns}' of thread "
                f"'{run.thread_id}' that records the parent checkpoint it ran from. Pass "
                "the config of a subgraph state (get_state(config, subgraphs=True)), "
                "which names a checkpoint for each level in 'checkpoint_map'."
            )
        run.checkpoint_id = root_id
        plan.targets = {**parents, **plan.targets}

    def _first(self, saved: Any) -> Generator[Any, Any, None]:
        run = self.run
        inp = self.input
        prev_step = self.metadata.get("step", -2)
        # as in LangGraph, the step budget counts from the loaded checkpoint: a new input
        # spends one step on the input checkpoint, a resumed run does not
        stop = prev_step + 2 + run.recursion_limit
        is_command = isinstance(inp, Command)
        if is_command and inp.resume is not None and self.saver is None and not run.nested:
            raise RuntimeError(
                "Cannot resume with Command(resume=...): this graph has no checkpointer, "
                "so there is no saved state to resume. Compile it with a checkpointer, e.g. "
                "builder.compile(checkpointer=InMemorySaver()), and pass "
                '{"configurable": {"thread_id": ...}} in the config.'
            )
        if run.nested and saved is not None:
            if (
                run.resuming
                or self.replay_target
                or (run.resume_unfinished and self._prepare(for_execution=False))
            ):
                # continue the subgraph's own saved run (after an interrupt or a drain, or
                # when replaying from a checkpoint) rather than starting it again with
                # new input
                inp = None
        fresh = saved is None or not self.checkpoint["channel_versions"]
        if is_command and inp is not None and fresh and not run.nested:
            # resuming a thread that has no state starts a new run, as in LangGraph;
            # the command's writes join the writes of that run's first step
            if inp.resume is not None:
                self._prepare_resume(inp.resume)
            self._apply_input(map_input(self.graph, {}))
            yield from self._save("input", prev_step + 1)
            self.updated = None
            prev_step += 1
            self.first_step_writes = self.prepare_delta_writes(
                map_command(Command(update=inp.update, goto=inp.goto), self.graph)
            )
            yield from self._put_writes(NULL_TASK_ID, self.first_step_writes)
        elif is_command and inp is not None:
            self.resuming = True
            fork = False
            if self.replay_target and not run.nested and (inp.update is not None or inp.goto):
                # a Command sent to an older checkpoint forks it, as in LangGraph: the old
                # checkpoint and the branch built on it stay as they were saved
                head = yield (fx.GET_TUPLE, {CONF: self._base_configurable()})
                fork = head is None or head.checkpoint["id"] != self.checkpoint_id
            if inp.resume is not None:
                self._prepare_resume(inp.resume)
            if fork:
                self.pending_writes = []
                self.force_delta_snapshot = True
                if inp.update is not None:
                    self._apply_input(self.graph.command_update_writes(inp))
                    self.updated = None
                yield from self._save("fork", prev_step + 1)
                prev_step += 1
            elif inp.update is not None:
                # as in LangGraph, the update is folded into the thread's head checkpoint
                update = self.graph.command_update_writes(inp)
                self._apply_input(update)
                self.updated = None
                yield from self._resave_head()
            if inp.goto:
                goto = map_command(Command(goto=inp.goto), self.graph)
                self.pending_writes.extend((NULL_TASK_ID, c, v) for c, v in goto)
                yield from self._put_writes(NULL_TASK_ID, goto)
        elif inp is None:
            if saved is None or not self.checkpoint["channel_versions"]:
                raise EmptyInputError(
                    f"Received no input for {self.graph.input_channels}: the thread "
                    f"'{run.thread_id}' has no saved state to continue. Pass an input, or check "
                    "the thread_id."
                )
            self.resuming = True
            if self.replay_target:
                # replay from a named checkpoint: its tasks run again (writes saved
                # against it are not reused). The head of a thread that is itself a fork
                # or an update re-runs in place; any other checkpoint is forked first,
                # so the old branch stays intact.
                self.pending_writes = []
                # re-run tasks may write other values than the ones saved before
                self.force_delta_snapshot = True
                head = yield (fx.GET_TUPLE, {CONF: self._base_configurable()})
                is_head = head is not None and head.checkpoint["id"] == self.checkpoint_id
                self.seal_unwritten_deltas()
                if not (is_head and self.metadata.get("source") in ("fork", "update")):
                    yield from self._save("fork", prev_step + 1)
                    prev_step += 1
                if not run.nested:
                    self._plan_replay()
        else:
            writes = map_input(self.graph, inp)
            discarded: set[str] | None = None
            if not writes:
                raise EmptyInputError(f"Received no input for {self.graph.input_channels}")
            self.graph.check_input(inp, self.channels)
            if saved is not None:
                # a new input starts a new run: tasks left unfinished (interrupted or
                # failed) are discarded, as if they had run without writing anything
                self.step = prev_step + 1
                left = list(self._prepare(for_execution=False).values())
                if left:
                    self.force_delta_snapshot = True
                    discarded = apply_writes(
                        self.checkpoint,
                        self.channels,
                        left,
                        self.get_next_version,
                        self.trigger_to_nodes,
                        allow_finish=False,  # the old run did not finish: defer stays put
                    )
            self.pending_writes = []
            self._apply_input(writes)
            if discarded and self.updated is not None:
                self.updated |= discarded
            yield from self._save("input", prev_step + 1)
            # as in LangGraph, the first step considers only the nodes subscribed to a
            # channel the input (or a discarded task) changed: a node that never ran is
            # not started by a channel that merely holds a value (an empty reducer)
            prev_step += 1
        null_writes = [(c, v) for tid, c, v in self.pending_writes if tid == NULL_TASK_ID]
        if null_writes and self.resuming:
            self.updated = apply_writes(
                self.checkpoint,
                self.channels,
                [WriteBatch([w for w in null_writes if w[0] != RESUME])],
                self.get_next_version,
                self.trigger_to_nodes,
            )
            self.updated = None
        self.step = prev_step + 1
        self.stop = stop
        # from here on the channels change only through the steps' apply_writes
        self.tracker = StepTracker(self.channels, self.graph.step_scoped)
        if self.want_checkpoints:
            # what moved since the last checkpoint (a resumed run's null writes)
            saved = (self.saved_versions if self.save_loop else self._values_versions) or {}
            self.tracker.moved = {
                k for k, v in self.checkpoint["channel_versions"].items() if saved.get(k) != v
            }
        if self.resuming:
            if (
                self.saver is not None
                and self.checkpoint_id
                and run.modes & {"checkpoints", "debug"}
            ):
                from stategraph.pregel.debug import checkpoint_payload, debug_event

                payload = checkpoint_payload(self, self.checkpoint, self.metadata)
                run.emit("checkpoints", payload)
                run.emit("debug", debug_event("checkpoint", prev_step, payload))
            self.output_written = True
            if "values" in run.modes:
                run.emit("values", read_output(self.channels, run.stream_keys))

    def _plan_replay(self) -> None:
        """Tell the subgraphs of this replay where their state of that time is.

        They load their last checkpoint saved before the checkpoint the replay started
        from: the one forked, or for a re-run in place, the parent of the one re-run.
        """
        run = self.run
        anchor = ((self.parent_config or {}).get(CONF) or {}).get("checkpoint_id")
        if run.replay is None:
            from stategraph.pregel.run import ReplayPlan

            run.replay = ReplayPlan()
        run.replay.anchor = anchor or ""

    def _resave_head(self) -> Generator[Any, Any, None]:
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
        yield (fx.PUT, put_config, checkpoint, self.metadata, new_versions, True)
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

    def _apply_input(self, writes: list[tuple[str, Any]]) -> None:
        self.updated = apply_writes(
            self.checkpoint,
            self.channels,
            [WriteBatch(writes)],
            self.get_next_version,
            self.trigger_to_nodes,
        )

    def _prepare_resume(self, resume: Any) -> None:
        """Validate a resume value against the interrupts that are waiting."""
        run = self.run
        finished = {tid for tid, chan, _ in self.pending_writes if chan not in _SUCCESS_EXCLUDED}
        waiting: dict[str, Any] = {}
        for tid, chan, val in self.pending_writes:
            if chan == INTERRUPT and tid not in finished:
                for intr in val:
                    waiting[intr.id] = intr
        if _is_resume_map(resume):
            if waiting and not run.nested:
                _check_resume_ids(resume, waiting, self._task_first_ids(waiting))
            run.resume_state.by_id.update(resume)
            return
        if len(waiting) > 1 and not run.nested:
            ids = ", ".join(f"{iid} ({intr.value!r})" for iid, intr in waiting.items())
            raise RuntimeError(
                "When there are multiple pending interrupts, you must specify the interrupt "
                "id when resuming. Resume with Command(resume={interrupt_id: value, ...}) "
                f"naming the interrupts to answer. Waiting: {ids}"
            )
        from stategraph.pregel.task import _MISSING as MISSING_RESUME

        if run.resume_state.null is MISSING_RESUME:
            run.resume_state.null = resume

    def _task_first_ids(self, waiting: Mapping[str, Any]) -> set[str] | None:
        """The id of the first interrupt of each task a waiting interrupt belongs to.

        A task's first interrupt id also answers the task's later questions. Found by
        matching each waiting id against this graph's tasks; ``None`` when one comes
        from deeper down (a subgraph), where the task cannot be told from here.
        """
        from stategraph.pregel.task import interrupt_id

        firsts: set[str] = set()
        by_task: dict[str, list[str]] = {}
        for tid, chan, val in self.pending_writes:
            if chan == INTERRUPT:
                by_task.setdefault(tid, []).extend(i.id for i in val if i.id in waiting)
        for tid, ids in by_task.items():
            for iid in ids:
                for name in self.nodes:
                    ns = f"{name}:{tid}"
                    if any(interrupt_id(ns, k) == iid for k in range(16)):
                        firsts.add(interrupt_id(ns, 0))
                        break
                else:
                    return None
        return firsts

    # ------------------------------------------------------------------ tick
    def _prepare(self, for_execution: bool) -> dict[str, Task]:
        run = self.run
        cp = self.checkpoint
        versions = cp["channel_versions"]
        seen_all = cp["versions_seen"]
        null = null_version_of(versions)
        channels = self.channels
        step = self.step
        cp_id = self.checkpoint_id
        ns = run.ns
        tasks: dict[str, Task] = {}
        tch = channels.get(TASKS)
        if tch is not None and tch.is_available():
            for idx, packet in enumerate(tch.get()):
                if not isinstance(packet, Send):
                    continue
                node = self.nodes.get(packet.node)
                if node is None:
                    raise InvalidUpdateError(
                        f"Send to unknown node '{packet.node}'. Known nodes: "
                        f"{', '.join(sorted(self.nodes))}."
                    )
                tid = make_task_id(cp_id, ns, step, packet.node, PUSH, idx)
                arg = packet.arg
                if for_execution and node.mapper is not None and isinstance(arg, dict):
                    arg = node.mapper(arg)
                # (PUSH, index, False) as LangGraph: False marks a Send, not a call
                task = self._task(tid, node, arg, (PUSH, idx, False), (PUSH,), for_execution, True)
                if packet.timeout is not None:
                    task.timeout = packet.timeout  # the packet's own limit wins
                tasks[tid] = task
        updated = self.updated
        names: Any = self.nodes
        if updated is not None:
            # only nodes subscribed to a channel that just changed can be triggered
            found: set[str] = set()
            for c in updated:
                found.update(self.trigger_to_nodes.get(c, ()))
            order = self.graph.node_order
            names = sorted(found, key=order.__getitem__)
        for name in names:
            node = self.nodes[name]
            if not triggered(node.triggers, channels, versions, seen_all.get(name), null):
                continue
            tid = make_task_id(cp_id, ns, step, name, PULL, *node.triggers)
            inp = None
            if for_execution:
                inp = read_channels(channels, node.channels)
                if node.managed:
                    for key, spec in node.managed.items():
                        inp[key] = spec.get(step, self.stop)
                if node.mapper is not None:
                    inp = node.mapper(inp)
            tasks[tid] = self._task(
                tid, node, inp, (PULL, name), node.triggers, for_execution, False
            )
        return tasks

    def _task(
        self,
        tid: str,
        node: Any,
        inp: Any,
        path: tuple[Any, ...],
        triggers: Any,
        for_execution: bool,
        push: bool,
    ) -> Task:
        run = self.run
        name = node.name
        task_ns = f"{run.ns}|{name}:{tid}" if run.ns else f"{name}:{tid}"
        scratchpad = None
        if for_execution:
            resume: list[Any] = []
            asked: list[Any] = []
            pending_value: Any = _MISSING
            calls: dict[str, Any] = {}
            call_resume: dict[str, list[Any]] = {}
            for wtid, chan, val in self.pending_writes:
                if wtid != tid:
                    continue
                if chan == RESUME:
                    resume = list(val)
                elif chan == CALL_RESUME:
                    call_resume = {k: list(v) for k, v in val.items()}
                elif chan == RESUME_ASKED:
                    asked = list(val)
                elif chan == CALL_RESULT:
                    calls[val[0]] = val[1]
                elif chan == INTERRUPT and val:
                    pending_value = val[0].value
            scratchpad = Scratchpad(
                step=self.step,
                stop=self.stop,
                resume=resume,
                asked=asked,
                pending_value=pending_value,
                # a resume value answers only the tasks of the checkpoint being resumed
                # (interrupted, or stopped at a breakpoint), never tasks of later steps
                resume_state=(
                    run.resume_state
                    if (self.first_tick and self.resuming) or self.answer_any_step
                    else None
                ),
                strict=run.strict,
                node=name,
                calls=calls,
                call_resume=call_resume,
            )
        task = Task(
            id=tid,
            name=name,
            path=path,
            node=node,
            input=inp,
            triggers=triggers,
            ns=task_ns,
            scratchpad=scratchpad,
            retry_policy=node.retry_policy or self.graph.retry_policy,
            is_push=push,
            timeout=node.timeout,
        )
        if for_execution:
            channels = self.channels
            task.reader = lambda select: local_read(channels, select, task.writes, task)
            pending = self.pending_writes
            task.resuming = bool(pending) and any(w[0] == tid for w in pending)
            task.resume_unfinished = self.first_tick and self.resuming
        return task

    def _tick(self) -> bool:
        """Prepare the next step's tasks; False when the run is over."""
        run = self.run
        if self.step > self.stop:
            # as in LangGraph: the step after the last allowed one fails, even when
            # nothing would run in it
            self.status = "out_of_steps"
            return False
        _release(self.tasks)
        self.tasks = self._prepare(for_execution=True)
        if not self.tasks:
            self.status = "done"
            return False
        first, self.first_tick = self.first_tick, False
        # reuse writes of tasks that finished before an interruption or failure
        if self.pending_writes and self.resuming and first:
            by_task: dict[str, list[tuple[str, Any]]] = {}
            for tid, chan, val in self.pending_writes:
                by_task.setdefault(tid, []).append((chan, val))
            handed_over: list[tuple[Task, str]] = []
            for tid, writes in by_task.items():
                if tid not in self.tasks:
                    continue
                if any(c not in _SUCCESS_EXCLUDED for c, _ in writes):
                    task = self.tasks[tid]
                    task.writes = [(c, v) for c, v in writes if c not in _SUCCESS_EXCLUDED]
                    task.done = True
                elif any(c == ERROR_SOURCE for c, _ in writes):
                    error = next((v for c, v in writes if c == ERROR), "")
                    handed_over.append((self.tasks[tid], error))
            for task, error in handed_over:
                # the node failed and its error handler had not finished: run the handler
                # again (with the saved error text), not the node
                task.done = True
                task.handled = True
                handler = self._error_handler_task(task, NodeError(task.name, error))
                if handler is not None:
                    if handler.scratchpad is not None:
                        # it belongs to the step being resumed: resume values reach it
                        handler.scratchpad.resume_state = run.resume_state
                    hwrites = by_task.get(handler.id, ())
                    if any(c not in _SUCCESS_EXCLUDED for c, _ in hwrites):
                        handler.writes = [(c, v) for c, v in hwrites if c not in _SUCCESS_EXCLUDED]
                        handler.done = True
        if run.interrupt_before and not (first and self.resuming):
            if _hits_breakpoint(run.interrupt_before, self.tasks.values()):
                self.status = "interrupt_before"
                self.output = read_output(self.channels, run.output_keys)
                if not run.nested:
                    run.emit("updates", {INTERRUPT: ()})
                raise _Breakpoint()
        guard = run.guard
        if guard is not None and guard.preempt is not None and not first:
            # another run asked for the thread, or the lease was lost: stop here (after
            # the first step, which takes this run's input into the state: an input
            # left unapplied would be dropped by the next run's new input)
            self.status = "preempted"
            raise guard.preempt
        control = run.control
        if control is not None and control.drain_requested:
            # graceful drain: stop before the next step; everything so far is saved
            self.status = "drained"
            raise GraphDrained(control.drain_reason or "shutdown")
        if "tasks" in run.modes or "debug" in run.modes:
            from stategraph.pregel.debug import debug_event, task_start_payload

            for task in sorted(self.tasks.values(), key=lambda t: writes_sort_key(t.path)):
                if not task.node.metadata.get("__hidden__"):
                    payload = task_start_payload(task, self.step, run)
                    if payload is not None:
                        run.emit("tasks", payload)
                        run.emit("debug", debug_event("task", self.step, payload))
        for task in self.tasks.values():
            if task.done and not task.handled:
                self._emit_task_output(task, cached=True, reused=True)
        return True

    # ------------------------------------------------------------------ execute
    def _execute_step(self) -> Generator[Any, Any, None]:
        run = self.run
        todo = [t for t in self.tasks.values() if not t.done]
        if todo:
            yield (fx.EXECUTE, todo)
        errors = [t for t in self.tasks.values() if t.error is not None and not t.handled]
        interrupted = [t for t in self.tasks.values() if t.interrupted]
        if errors:
            self.status = "error"
            raise errors[0].error  # type: ignore[misc]
        if interrupted:
            self.status = "interrupted"
            for t in interrupted:
                self.interrupts.extend(t.interrupts)
            done = [t for t in self.tasks.values() if t.done and not t.interrupted]
            changed: set[str] = set()
            if done:
                saved_cp = self.checkpoint
                self.checkpoint = {
                    **saved_cp,
                    "channel_versions": dict(saved_cp["channel_versions"]),
                    "versions_seen": {k: dict(v) for k, v in saved_cp["versions_seen"].items()},
                }
                changed = apply_writes(
                    self.checkpoint,
                    self.channels,
                    done,
                    self.get_next_version,
                    self.trigger_to_nodes,
                )
                self.checkpoint = saved_cp
            self.output = read_output(self.channels, run.output_keys)
            # the values show the finished tasks' writes and the interrupts; a subgraph
            # stopped at a breakpoint has no interrupt values to show
            if "values" in run.modes and (
                self.interrupts or self._touches(changed, run.stream_keys)
            ):
                out = read_output(self.channels, run.stream_keys)
                if self.interrupts:
                    # a bare value (one output key) is replaced by the interrupts
                    base = out if isinstance(out, dict) else {}
                    out = {**base, INTERRUPT: tuple(self.interrupts)}
                run.emit("values", out)
            raise GraphInterrupt(tuple(self.interrupts))
        if self.delta_keys and self.pending_writes and not self.force_delta_snapshot:
            self._check_delta_writes()
        tasks: list[Any] = list(self.tasks.values())
        if self.first_step_writes:
            tasks.append(WriteBatch(self.first_step_writes, name=NULL_TASK_ID))
            self.first_step_writes = []
        self.updated = apply_writes(
            self.checkpoint,
            self.channels,
            tasks,
            self.get_next_version,
            self.trigger_to_nodes,
            self.graph.step_scoped,
            tracker=self.tracker,
        )
        self.pending_writes = []
        if not self.output_written and self._touches(self.updated, run.output_keys):
            self.output_written = True
        if "values" in run.modes and self._touches(self.updated, run.stream_keys):
            run.emit("values", read_output(self.channels, run.stream_keys))
        if run.interrupt_after and _hits_breakpoint(run.interrupt_after, self.tasks.values()):
            yield from self._save("loop", self.step)
            self.status = "interrupt_after"
            self.output = read_output(self.channels, run.output_keys)
            if not run.nested:
                run.emit("updates", {INTERRUPT: ()})
            raise _Breakpoint()
        yield from self._save("loop", self.step)

    def _check_delta_writes(self) -> None:
        """Store delta channels whole at the end of this step when the writes saved
        against the current checkpoint are not the ones the step applies (a task whose
        saved writes this step does not apply: a replaced fan-out, a discarded task)."""
        applied = set(self.tasks)
        if self.resuming or self.first_step_writes:
            applied.add(NULL_TASK_ID)
        delta = self.delta_keys
        for tid, chan, _ in self.pending_writes:
            if chan in delta and tid not in applied:
                self.force_delta_snapshot = True
                return

    @staticmethod
    def _touches(updated: set[str], keys: Any) -> bool:
        if isinstance(keys, str):
            return keys in updated
        return not updated.isdisjoint(keys)

    def task_finished(self, task: Task) -> list[Any]:
        """Record a finished task (called by the shell as each task ends).

        Returns the effects to perform right away (saving the task's writes).
        """
        effects: list[Any] = []
        if task.interrupted:
            # call results first: their positions stay stable across re-interrupts
            writes = _call_results(task)
            writes.extend(_latest_answers(task))
            writes.append((INTERRUPT, task.interrupts))
            task.writes = []
            self._collect(effects, task, writes)
            self.run.emit("updates", {INTERRUPT: task.interrupts})
            if self.run.modes & {"tasks", "debug"} and not task.node.metadata.get("__hidden__"):
                from stategraph.pregel.debug import debug_event, task_result_payload

                payload = task_result_payload(task, self.graph)
                self.run.emit("tasks", payload)
                self.run.emit("debug", debug_event("task_result", self.step, payload))
            return effects
        if task.error is not None:
            if not isinstance(task.error, GraphBubbleUp):
                error = repr(task.error)
                kept = _call_results(task)
                kept.extend(_latest_answers(task))
                handler = self._error_handler_task(task, NodeError(task.name, task.error))
                if handler is None:
                    self._collect(effects, task, [*kept, (ERROR, error)])
                else:
                    # the handler takes over: the failure is saved (so a resumed run
                    # starts the handler again instead of the node) and does not fail
                    # the step
                    self._collect(effects, task, [*kept, (ERROR, error), (ERROR_SOURCE, task.name)])
                    task.writes = []
                    task.handled = True
                    effects.append((fx.SPAWN, handler))
                self._emit_task_result(task)
            return effects
        task.done = True
        if self.delta_keys:
            task.writes = self.prepare_delta_writes(task.writes)
        writes = task.writes
        if not any(c not in CONTROL_CHANNELS for c, _ in writes):
            writes = [*writes, (NO_WRITES, None)]
        self._collect(effects, task, writes)
        self._emit_task_output(task, cached=task.cached)
        return effects

    def _error_handler_task(self, failed: Task, error: NodeError) -> Task | None:
        """The task that runs ``failed``'s error handler in this step (None: no handler).

        A handler never handles its own failure. Its id and path derive from the failed
        task, so a resumed run rebuilds the same task. As in LangGraph, a handler started
        during a step has no ``tasks`` start event (one resumed with the step has).
        """
        hname = failed.node.error_handler
        if hname is None or failed.node_error is not None:
            return None
        node = self.nodes[hname]
        tid = make_task_id(
            self.checkpoint_id, self.run.ns, self.step, hname, "node_error_handler", failed.id
        )
        inp = read_channels(self.channels, node.channels)
        if node.managed:
            for key, spec in node.managed.items():
                inp[key] = spec.get(self.step, self.stop)
        if node.mapper is not None:
            inp = node.mapper(inp)
        path = (*failed.path, "node_error_handler", 0)
        task = self._task(tid, node, inp, path, (PUSH,), True, True)
        task.node_error = error
        self.tasks[tid] = task
        return task

    def _emit_task_result(self, task: Task) -> None:
        if self.run.modes & {"tasks", "debug"} and not task.node.metadata.get("__hidden__"):
            from stategraph.pregel.debug import debug_event, task_result_payload

            payload = task_result_payload(task, self.graph)
            self.run.emit("tasks", payload)
            self.run.emit("debug", debug_event("task_result", self.step, payload))

    def _collect(self, effects: list[Any], task: Task, writes: list[tuple[str, Any]]) -> None:
        if self.saver is None:
            return
        effects.extend(self._put_writes(task.id, writes, _path_str(task.path)))

    def _emit_task_output(self, task: Task, *, cached: bool, reused: bool = False) -> None:
        run = self.run
        if not run.modes:
            return
        if run.messages is not None and "messages" in run.modes:
            run.messages.task_finished(run, task, self.step)
        if "updates" in run.modes:
            update = self.graph.task_update(task, run.update_keys)
            if update is not NO_UPDATE:
                chunk: dict[str, Any] = {task.name: update}
                if cached:
                    chunk["__metadata__"] = {"cached": True}
                run.emit("updates", chunk)
        if (
            ("tasks" in run.modes or "debug" in run.modes)
            and not reused
            and not task.node.metadata.get("__hidden__")
        ):
            from stategraph.pregel.debug import debug_event, task_result_payload

            payload = task_result_payload(task, self.graph)
            run.emit("tasks", payload)
            run.emit("debug", debug_event("task_result", self.step, payload))

    # ------------------------------------------------------------------ exit
    def _finish_exit(self) -> Generator[Any, Any, None]:
        run = self.run
        _release(self.tasks)
        self._materialize()
        if self.status in ("done", "out_of_steps"):
            self.output = read_output(self.channels, run.output_keys)
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
            yield (
                fx.PUT,
                put_config,
                self.checkpoint,
                self.metadata,
                exit_versions,
                True,
            )
            self.dirty = False
        for task_id, writes, path in self.exit_writes:
            yield (fx.PUT_WRITES, self.checkpoint_config, writes, task_id, path, True)
        self.exit_writes = []
        yield (fx.FLUSH,)


class _Breakpoint(GraphInterrupt):
    """A static breakpoint (``interrupt_before``/``interrupt_after``) stopped the run."""


def _delta_keys(graph: Any) -> tuple[frozenset[str], tuple[str, ...]]:
    """The graph's ``DeltaChannel`` keys, and the keys of every reducer channel that can
    rebuild a value stored as deltas (computed once per graph)."""
    keys: tuple[frozenset[str], tuple[str, ...]] | None = getattr(graph, "_delta_keys", None)
    if keys is None:
        from stategraph.channels.binop import BinaryOperatorAggregate
        from stategraph.channels.delta import DeltaChannel

        delta = frozenset(k for k, ch in graph.channels.items() if isinstance(ch, DeltaChannel))
        rebuild = tuple(
            k
            for k, ch in graph.channels.items()
            if isinstance(ch, (DeltaChannel, BinaryOperatorAggregate))
        )
        keys = (delta, rebuild)
        try:
            graph._delta_keys = keys
        except AttributeError:
            pass
    return keys


def _release(tasks: Mapping[str, Task]) -> None:
    """Drop the finished tasks' readers: each refers to its task (a reference cycle that
    would keep the task's input and writes alive until a full garbage collection)."""
    for task in tasks.values():
        task.reader = None
        task.previews = None


def _untracked_keys(graph: Any) -> frozenset[str]:
    """The graph's ``UntrackedValue`` channels (computed once per graph)."""
    keys: frozenset[str] | None = getattr(graph, "_untracked_keys", None)
    if keys is None:
        keys = frozenset(k for k, ch in graph.channels.items() if isinstance(ch, UntrackedValue))
        try:
            graph._untracked_keys = keys
        except AttributeError:
            pass
    return keys


def _call_results(task: Task) -> list[tuple[str, Any]]:
    """The ``@task`` results a task has so far, in call order, as writes to save.

    All of them, not only those of this attempt: writes are saved by position and
    kept only if absent, so the earlier results keep their positions and the new
    ones follow.
    """
    pad = task.scratchpad
    if pad is not None and pad.calls:
        return [(CALL_RESULT, (cid, value)) for cid, value in pad.calls.items()]
    return [w for w in task.writes if w[0] == CALL_RESULT]


def _latest_answers(task: Task) -> list[tuple[str, Any]]:
    """The last write of each resume-bookkeeping channel (each one replaces the last)."""
    latest: dict[str, Any] = {}
    for chan, value in task.writes:
        if chan in (RESUME, RESUME_ASKED, CALL_RESUME):
            latest[chan] = value
    return list(latest.items())


def _check_resume_ids(
    resume: Mapping[str, Any], waiting: Mapping[str, Any], firsts: set[str] | None
) -> None:
    """Refuse a resume map naming no interrupt, or one that is not waiting.

    Without this, such a resume returned normally and left the thread waiting, the
    answer silently lost. ``firsts`` are the first-interrupt ids of the waiting tasks
    (they answer the tasks' later questions too); ``None`` when some waiting interrupt
    comes from a subgraph, whose ids are then not judged here. Raised before anything
    is written.
    """
    from stategraph.errors import UnknownInterruptError

    pending = ", ".join(f"{iid} ({intr.value!r})" for iid, intr in waiting.items())
    if not resume:
        raise UnknownInterruptError(
            f"Command(resume={{}}) answers no interrupt. Waiting: {pending}. Resume with "
            "Command(resume={interrupt_id: value}).",
            reason="empty_map",
            pending_ids=list(waiting),
        )
    if firsts is None:
        return
    unknown = [k for k in resume if k not in waiting and k not in firsts]
    if unknown:
        raise UnknownInterruptError(
            f"Command(resume=...) names interrupt id(s) {', '.join(unknown)} that are not "
            f"waiting on this thread. Waiting: {pending}. Answer those ids (they are on "
            "the state's interrupts, or the run's __interrupt__ output).",
            reason="not_pending",
            interrupt_ids=unknown,
            pending_ids=list(waiting),
        )


def _is_resume_map(resume: Any) -> bool:
    """Whether ``Command(resume=...)`` maps interrupt ids (32 hex digits) to answers."""
    if not isinstance(resume, Mapping):
        return False
    return all(
        isinstance(k, str) and len(k) == 32 and all(c in "0123456789abcdef" for c in k)
        for k in resume
    )


def _working_copy(checkpoint: dict[str, Any]) -> dict[str, Any]:
    # versions_seen's inner dicts are replaced, never mutated (copy-on-write)
    return {
        **checkpoint,
        "channel_versions": dict(checkpoint["channel_versions"]),
        "versions_seen": dict(checkpoint["versions_seen"]),
    }


def _hits_breakpoint(nodes: Any, tasks: Any) -> bool:
    if nodes == "*":
        return any(not t.node.metadata.get("__hidden__") for t in tasks)
    return any(t.name in nodes for t in tasks)


def _path_str(path: tuple[Any, ...]) -> str:
    return "~".join(str(p) for p in path)


def _now_iso() -> str:
    from stategraph._clock import utc_now_iso

    return utc_now_iso()
