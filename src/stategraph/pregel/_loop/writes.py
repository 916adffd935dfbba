"""Applying writes: recording each finished task (its writes saved, its failure or
interrupt kept), then ending the step (interrupts, errors, ``apply_writes``,
``interrupt_after``, the step's checkpoint).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from stategraph.constants import (
    CALL_RESULT,
    CALL_RESUME,
    ERROR,
    ERROR_SOURCE,
    INTERRUPT,
    NO_WRITES,
    NULL_TASK_ID,
    RESUME,
    RESUME_ASKED,
)
from stategraph.errors import GraphBubbleUp, GraphInterrupt, NodeError, ParentCommand
from stategraph.pregel import _effects as fx
from stategraph.pregel._algo import CONTROL_CHANNELS, apply_writes
from stategraph.pregel._io import read_output
from stategraph.pregel._loop.checkpoints import CheckpointsMixin
from stategraph.pregel._loop.fields import WriteBatch
from stategraph.pregel._loop.prepare import PrepareMixin, _Breakpoint, _hits_breakpoint
from stategraph.pregel._task import Task
from stategraph.types import Command


class WritesMixin(PrepareMixin, CheckpointsMixin):
    """Records finished tasks and commits a step's writes."""

    def _step_todo(self) -> list[Task]:
        """The prepared step's tasks to run: all but those given their saved writes."""
        tasks = self.tasks.values()
        for t in tasks:
            if t.done:  # (writes reused on resume: only the others run)
                return [t for t in tasks if not t.done]
        return list(tasks)

    def _end_step(self) -> bool:
        """Settle the step once its tasks ran (:meth:`_step_todo`): raise the first
        failure, stop on interrupts (applying the finished tasks' writes), else apply
        every write and emit the step's values. The caller then saves the step's
        checkpoint; returns whether an ``interrupt_after`` breakpoint stops the run
        after that (:meth:`_break_after`)."""
        run = self.run
        # (the tasks run, those done before, and the error handlers they started)
        tasks: list[Any] = list(self.tasks.values())
        interrupted: list[Task] = []
        for t in tasks:
            if t.error is not None and not t.handled:
                self.status = "error"
                error = t.error
                if run.ns and isinstance(error, ParentCommand):
                    _address(error, run.ns)
                raise error
            if t.interrupted:
                interrupted.append(t)
        if interrupted:
            self.status = "interrupted"
            for t in interrupted:
                self.interrupts.extend(t.interrupts)
            done = [t for t in self.tasks.values() if t.done and not t.interrupted]
            changed: set[str] = set()
            if done:
                # (the channels change here without the tracker: the views go stale)
                self.views = None
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
                    shared=self.shared_specs,
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
        if self.first_step_writes:
            tasks = [*tasks, WriteBatch(self.first_step_writes, name=NULL_TASK_ID)]
            self.first_step_writes = []
        self.updated = apply_writes(
            self.checkpoint,
            self.channels,
            tasks,
            self.get_next_version,
            self.trigger_to_nodes,
            self.graph.step_scoped,
            tracker=self.tracker,
            shared=self.shared_specs,
        )
        self.pending_writes = []
        if not self.output_written and self._touches(self.updated, run.output_keys):
            self.output_written = True
        if run.modes and "values" in run.modes and self._touches(self.updated, run.stream_keys):
            run.emit("values", self.read_state(run.stream_keys))
        return bool(run.interrupt_after) and _hits_breakpoint(
            run.interrupt_after, self.tasks.values()
        )

    def _break_after(self) -> None:
        """Stop at an ``interrupt_after`` breakpoint (the step's checkpoint is saved)."""
        run = self.run
        self.status = "interrupt_after"
        self.output = read_output(self.channels, run.output_keys)
        if not run.nested:
            run.emit("updates", {INTERRUPT: ()})
        raise _Breakpoint()

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

    def task_finished(self, task: Task) -> list[fx.PutWrites | fx.Spawn]:
        """Record a finished task (called by the shell as each task ends).

        Returns the effects to perform right away (saving the task's writes).
        """
        effects: list[fx.PutWrites | fx.Spawn] = []
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
                    effects.append(fx.Spawn(handler))
                self._emit_task_result(task)
            return effects
        task.done = True
        if self.delta_keys:
            task.writes = self.prepare_delta_writes(task.writes)
        if self.saver is not None:
            writes = task.writes
            if not _writes_state(writes):
                writes = [*writes, (NO_WRITES, None)]
            self._collect(effects, task, writes)
        if self.run.modes:  # (a run streaming nothing reports nothing)
            self._emit_task_output(task, cached=task.cached)
        return effects

    def _collect(
        self, effects: list[fx.PutWrites | fx.Spawn], task: Task, writes: list[tuple[str, Any]]
    ) -> None:
        if self.saver is None:
            return
        effect = self._writes_effect(task.id, writes, task.path)
        if effect is not None:
            effects.append(effect)


def _writes_state(writes: list[tuple[str, Any]]) -> bool:
    """Whether ``writes`` hold a write to a channel (not only control writes)."""
    for chan, _ in writes:
        if chan not in CONTROL_CHANNELS:
            return True
    return False


def _call_results(task: Task) -> list[tuple[str, Any]]:
    """The ``@task`` results a task has so far, in call order, as writes to save.

    All of them, not only those of this attempt: writes are saved by position and
    kept only if absent, so the earlier results keep their positions and the new
    ones follow.
    """
    pad = task.built_scratchpad
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


def _address(exc: ParentCommand, ns: str) -> None:
    """A ``Command(graph=PARENT)`` leaving the subgraph at ``ns`` names that namespace
    from here on, as LangGraph reports it to the runs it passes through."""
    command = exc.args[0] if exc.args else None
    if isinstance(command, Command) and command.graph == Command.PARENT:
        exc.args = (dataclasses.replace(command, graph=ns), *exc.args[1:])
