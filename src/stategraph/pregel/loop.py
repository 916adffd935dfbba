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
from stategraph.constants import (
    CALL_RESULT,
    CONF,
    ERROR,
    INTERRUPT,
    NO_WRITES,
    NULL_TASK_ID,
    PULL,
    PUSH,
    RESUME,
    RESUME_ASKED,
    TASK_BOOKKEEPING,
    TASKS,
)
from stategraph.errors import (
    EmptyInputError,
    ErrorCode,
    GraphBubbleUp,
    GraphInterrupt,
    GraphRecursionError,
    InvalidUpdateError,
    create_error_message,
)
from stategraph.pregel import effects as fx
from stategraph.pregel.algo import (
    CONTROL_CHANNELS,
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

_SUCCESS_EXCLUDED = frozenset({ERROR, INTERRUPT, RESUME, RESUME_ASKED, CALL_RESULT})


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
        # whether a "values" chunk of the output keys was produced (invoke returns None
        # when not, as LangGraph's invoke returns the last such chunk)
        self.output_written = False
        self.first_step_writes: list[tuple[str, Any]] = []
        self._values_cache: dict[str, Any] | None = None
        self._values_versions: dict[str, Any] = {}
        self.blocking = run.durability == "sync"
        self.save_loop = run.durability != "exit"
        self.want_checkpoints = self.saver is not None

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

    def _save(self, source: str, step: int) -> Generator[Any, Any, None]:
        """Create a checkpoint of the current channels and save it per durability."""
        if not self.want_checkpoints:
            self.checkpoint_id = f"{step}"
            self.step = step + 1
            return
        from stategraph.checkpoint.base import uuid6

        run = self.run
        cp = self.checkpoint
        versions = cp["channel_versions"]
        new_id = str(uuid6(clock_seq=step))
        values = self._channel_values(versions)
        checkpoint = {
            "v": 4,
            "id": new_id,
            "ts": _now_iso(),
            "channel_values": values,
            "channel_versions": dict(versions),
            "versions_seen": dict(cp["versions_seen"]),
            "updated_channels": sorted(self.updated) if self.updated else None,
        }
        metadata = {**run.metadata, "source": source, "step": step, "parents": dict(run.parent_ids)}
        if run.run_id is not None:
            metadata["run_id"] = run.run_id
        new_versions = {k: v for k, v in versions.items() if self.saved_versions.get(k) != v}
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
                self.saved_versions = dict(versions)
                yield (fx.PUT, put_config, checkpoint, metadata, new_versions, self.blocking)
                self.dirty = False
                if not self.blocking:
                    # the saver reads `checkpoint` later, in the background: keep working
                    # on a copy so the next steps cannot change what gets saved
                    self.checkpoint = _working_copy(checkpoint)
            else:
                self.dirty = True
                # the writes of the steps this checkpoint covers are in it now
                self.exit_writes = []
                if self._exit_parent is None:
                    self._exit_parent = put_config
        if "checkpoints" in run.modes or "debug" in run.modes:
            from stategraph.pregel.debug import checkpoint_payload, debug_event

            payload = checkpoint_payload(self, checkpoint, metadata)
            run.emit("checkpoints", payload)
            run.emit("debug", debug_event("checkpoint", step, payload))

    def _channel_values(self, versions: Mapping[str, Any]) -> dict[str, Any]:
        """Checkpoint values of all channels; only channels whose version moved since
        the previous call are read again (a channel changes only with its version)."""
        prev = self._values_cache
        if prev is None:
            values: dict[str, Any] = {}
            for k, ch in self.channels.items():
                v = ch.checkpoint()
                if v is not MISSING:
                    values[k] = v
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
        self._values_cache = values
        self._values_versions = dict(versions)
        return values

    def _put_writes(
        self, task_id: str, writes: list[tuple[str, Any]], path: str = ""
    ) -> Generator[Any, Any, None]:
        if self.saver is None or not writes:
            return
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
            conf = self._base_configurable()
            if run.checkpoint_id:
                conf["checkpoint_id"] = run.checkpoint_id
            saved = yield (fx.GET_TUPLE, {CONF: conf})
            if saved is None and run.checkpoint_id:
                from stategraph.errors import CheckpointNotFoundError

                raise CheckpointNotFoundError(
                    f"No checkpoint with id '{run.checkpoint_id}' in thread "
                    f"'{run.thread_id}' (namespace '{run.ns}'). Use get_state_history() "
                    "to list the checkpoints of a thread."
                )
        self._restore(saved)
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
        if run.nested and run.resuming and saved is not None:
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
            self.first_step_writes = map_command(
                Command(update=inp.update, goto=inp.goto), self.graph
            )
            yield from self._put_writes(NULL_TASK_ID, self.first_step_writes)
        elif is_command and inp is not None:
            self.resuming = True
            if inp.resume is not None:
                self._prepare_resume(inp.resume)
            if inp.update is not None:
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
            if run.checkpoint_id and not run.nested:
                # replay from a named checkpoint: its tasks run again (writes saved
                # against it are not reused). The head of a thread that is itself a fork
                # or an update re-runs in place; any other checkpoint is forked first,
                # so the old branch stays intact.
                self.pending_writes = []
                head = yield (fx.GET_TUPLE, {CONF: self._base_configurable()})
                is_head = head is not None and head.checkpoint["id"] == self.checkpoint_id
                if not (is_head and self.metadata.get("source") in ("fork", "update")):
                    yield from self._save("fork", prev_step + 1)
                    prev_step += 1
        else:
            writes = map_input(self.graph, inp)
            if not writes:
                raise EmptyInputError(f"Received no input for {self.graph.input_channels}")
            if saved is not None:
                # a new input starts a new run: tasks left unfinished (interrupted or
                # failed) are discarded, as if they had run without writing anything
                self.step = prev_step + 1
                left = list(self._prepare(for_execution=False).values())
                if left:
                    apply_writes(
                        self.checkpoint,
                        self.channels,
                        left,
                        self.get_next_version,
                        self.trigger_to_nodes,
                        allow_finish=False,  # the old run did not finish: defer stays put
                    )
            self.pending_writes = []
            self._apply_input(writes)
            yield from self._save("input", prev_step + 1)
            self.updated = None
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
        parent = self.parent_config or {CONF: self._base_configurable()}
        put_config = {CONF: {**self._base_configurable(), **parent[CONF]}}
        if not (parent[CONF].get("checkpoint_id")):
            put_config[CONF].pop("checkpoint_id", None)
        self.checkpoint = checkpoint
        self.saved_versions = dict(versions)
        yield (fx.PUT, put_config, checkpoint, self.metadata, new_versions, True)
        self.checkpoint = _working_copy(checkpoint)

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
            # answers by interrupt id; ids that are not waiting answer nothing
            run.resume_state.by_id.update(resume)
            return
        if len(waiting) > 1 and not run.nested:
            ids = ", ".join(f"{iid} ({intr.value!r})" for iid, intr in waiting.items())
            raise RuntimeError(
                "Several interrupts are waiting, so a bare resume value is ambiguous. Resume "
                "with Command(resume={interrupt_id: value, ...}) naming the interrupts to "
                f"answer. Waiting: {ids}"
            )
        from stategraph.pregel.task import _MISSING as MISSING_RESUME

        if run.resume_state.null is MISSING_RESUME:
            run.resume_state.null = resume

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
                tasks[tid] = self._task(tid, node, arg, (PUSH, idx), (PUSH,), for_execution, True)
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
            for wtid, chan, val in self.pending_writes:
                if wtid != tid:
                    continue
                if chan == RESUME:
                    resume = list(val)
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
                resume_state=run.resume_state if self.first_tick and self.resuming else None,
                strict=run.strict,
                node=name,
                calls=calls,
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
            task.reader = lambda select: local_read(channels, select, task.writes)
            task.resuming = any(w[0] == tid for w in self.pending_writes)
        return task

    def _tick(self) -> bool:
        """Prepare the next step's tasks; False when the run is over."""
        run = self.run
        if self.step > self.stop:
            # as in LangGraph: the step after the last allowed one fails, even when
            # nothing would run in it
            self.status = "out_of_steps"
            return False
        self.tasks = self._prepare(for_execution=True)
        if not self.tasks:
            self.status = "done"
            return False
        first, self.first_tick = self.first_tick, False
        # reuse writes of tasks that finished before an interruption or failure
        if self.pending_writes and self.resuming and first:
            by_task: dict[str, list[tuple[str, Any]]] = {}
            for tid, chan, val in self.pending_writes:
                if tid in self.tasks:
                    by_task.setdefault(tid, []).append((chan, val))
            for tid, writes in by_task.items():
                if any(c not in _SUCCESS_EXCLUDED for c, _ in writes):
                    task = self.tasks[tid]
                    task.writes = [(c, v) for c, v in writes if c not in _SUCCESS_EXCLUDED]
                    task.done = True
        if run.interrupt_before and not (first and self.resuming):
            if _hits_breakpoint(run.interrupt_before, self.tasks.values()):
                self.status = "interrupt_before"
                self.output = read_output(self.channels, run.output_keys)
                run.emit("updates", {INTERRUPT: ()})
                raise _Breakpoint()
        if "tasks" in run.modes or "debug" in run.modes:
            from stategraph.pregel.debug import debug_event, task_start_payload

            for task in sorted(self.tasks.values(), key=lambda t: writes_sort_key(t.path)):
                if not task.node.metadata.get("__hidden__"):
                    payload = task_start_payload(task, self.step)
                    run.emit("tasks", payload)
                    run.emit("debug", debug_event("task", self.step, payload))
        for task in self.tasks.values():
            if task.done:
                self._emit_task_output(task, cached=True, reused=True)
        return True

    # ------------------------------------------------------------------ execute
    def _execute_step(self) -> Generator[Any, Any, None]:
        run = self.run
        todo = [t for t in self.tasks.values() if not t.done]
        if todo:
            yield (fx.EXECUTE, todo)
        errors = [t for t in self.tasks.values() if t.error is not None]
        interrupted = [t for t in self.tasks.values() if t.interrupts]
        if errors:
            self.status = "error"
            raise errors[0].error  # type: ignore[misc]
        if interrupted:
            self.status = "interrupted"
            for t in interrupted:
                self.interrupts.extend(t.interrupts)
            done = [t for t in self.tasks.values() if t.done and not t.interrupts]
            if done:
                saved_cp = self.checkpoint
                self.checkpoint = {
                    **saved_cp,
                    "channel_versions": dict(saved_cp["channel_versions"]),
                    "versions_seen": {k: dict(v) for k, v in saved_cp["versions_seen"].items()},
                }
                apply_writes(
                    self.checkpoint,
                    self.channels,
                    done,
                    self.get_next_version,
                    self.trigger_to_nodes,
                )
                self.checkpoint = saved_cp
            self.output = read_output(self.channels, run.output_keys)
            if "values" in run.modes:
                out = read_output(self.channels, run.stream_keys)
                if isinstance(out, dict):
                    out = {**out, INTERRUPT: tuple(self.interrupts)}
                run.emit("values", out)
            raise GraphInterrupt(tuple(self.interrupts))
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
            run.emit("updates", {INTERRUPT: ()})
            raise _Breakpoint()
        yield from self._save("loop", self.step)

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
        if task.interrupts:
            # call results first: their positions stay stable across re-interrupts
            writes = [w for w in task.writes if w[0] == CALL_RESULT]
            writes.extend(w for w in task.writes if w[0] in (RESUME, RESUME_ASKED))
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
                kept = [w for w in task.writes if w[0] in TASK_BOOKKEEPING]
                self._collect(effects, task, [*kept, (ERROR, error)])
            return effects
        task.done = True
        writes = task.writes
        if not any(c not in CONTROL_CHANNELS for c, _ in writes):
            writes = [*writes, (NO_WRITES, None)]
        self._collect(effects, task, writes)
        self._emit_task_output(task, cached=task.cached)
        return effects

    def _collect(self, effects: list[Any], task: Task, writes: list[tuple[str, Any]]) -> None:
        if self.saver is None:
            return
        effects.extend(self._put_writes(task.id, writes, _path_str(task.path)))

    def _emit_task_output(self, task: Task, *, cached: bool, reused: bool = False) -> None:
        run = self.run
        if not run.modes:
            return
        if "updates" in run.modes:
            update = self.graph.task_update(task)
            if update is not NO_UPDATE:
                chunk: dict[str, Any] = {task.name: update}
                if cached:
                    chunk["__metadata__"] = {"cached": True}
                run.emit("updates", chunk)
        if "messages" in run.modes:
            from stategraph.pregel.debug import emit_messages

            emit_messages(run, task, self.step)
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
        if self.status in ("done", "out_of_steps"):
            self.output = read_output(self.channels, self.run.output_keys)
        if self.saver is None:
            return
        if self.dirty:
            put_config = self._exit_parent or self.checkpoint_config
            self.saved_versions = dict(self.checkpoint["channel_versions"])
            yield (
                fx.PUT,
                put_config,
                self.checkpoint,
                self.metadata,
                dict(self.checkpoint["channel_versions"]),
                True,
            )
            self.dirty = False
        for task_id, writes, path in self.exit_writes:
            yield (fx.PUT_WRITES, self.checkpoint_config, writes, task_id, path, True)
        self.exit_writes = []
        yield (fx.FLUSH,)


class _Breakpoint(GraphInterrupt):
    """A static breakpoint (``interrupt_before``/``interrupt_after``) stopped the run."""


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
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat()
