"""Preparing a step: which tasks run (triggered nodes and ``Send`` packets), their
scratchpads, the writes reused on resume, error-handler tasks, and the checks made
before a step starts (breakpoints, preemption, drain).
"""

from __future__ import annotations

from typing import Any

from stategraph._task_ids import task_id_key, task_id_of_key
from stategraph.constants import (
    CALL_RESULT,
    CALL_RESUME,
    ERROR,
    ERROR_SOURCE,
    INTERRUPT,
    PULL,
    PUSH,
    RESUME,
    RESUME_ASKED,
    TASKS,
)
from stategraph.errors import GraphDrained, GraphInterrupt, InvalidUpdateError, NodeError
from stategraph.pregel._algo import (
    make_task_id,
    null_version_of,
    read_channels,
    triggered,
    writes_sort_key,
)
from stategraph.pregel._io import read_output
from stategraph.pregel._loop.fields import _SUCCESS_EXCLUDED
from stategraph.pregel._loop.report import ReportMixin
from stategraph.pregel._task import _MISSING, PadSeed, Scratchpad, Task
from stategraph.types import Send


class _Breakpoint(GraphInterrupt):
    """A static breakpoint (``interrupt_before``/``interrupt_after``) stopped the run."""


class PrepareMixin(ReportMixin):
    """Builds the tasks of the next step."""

    def _prepare(self, for_execution: bool) -> dict[str, Task]:
        run = self.run
        cp = self.checkpoint
        versions = cp["channel_versions"]
        seen_all = cp["versions_seen"]
        null = self.null_version
        if null is None:  # (until a channel has a version: then of the versions' type)
            null = self.null_version = null_version_of(versions)
        channels = self.channels
        step = self.step
        cp_id = self.checkpoint_id
        ns = run.ns
        tasks: dict[str, Task] = {}
        seed = self._pad_seed() if for_execution else None
        views = self.views
        if views is not None and views.channels is not channels:
            views = None
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
                task = self._task(tid, node, arg, (PUSH, idx, False), (PUSH,), seed, True)
                if packet.timeout is not None:
                    task.timeout = packet.timeout  # the packet's own limit wins
                tasks[tid] = task
        updated = self.updated
        names: Any = self.nodes
        if updated is not None and len(updated) == 1:
            # only nodes subscribed to the channel that just changed can be triggered
            # (listed in the graph's order, each once unless it names it twice)
            for c in updated:
                names = self.trigger_to_nodes.get(c, ())
        elif updated is not None:
            # only nodes subscribed to a channel that just changed can be triggered
            found: set[str] = set()
            for c in updated:
                found.update(self.trigger_to_nodes.get(c, ()))
            if len(found) > 1:
                order = self.graph.node_order
                names = sorted(found, key=order.__getitem__)
            else:
                names = found
        # a pull task's id key: this step's part, then the node's (made at compile)
        step_key = task_id_key((cp_id, ns, step))
        pull_keys = self.graph.pull_id_keys
        for name in names:
            node = self.nodes[name]
            if not triggered(node.triggers, channels, versions, seen_all.get(name), null):
                continue
            node_key = pull_keys.get(name)
            if node_key is None:  # a node added to the graph's nodes after it was built
                node_key = task_id_key((name, PULL, *node.triggers))
            tid = task_id_of_key(f"{step_key}\x00{node_key}")
            inp = None
            if for_execution:
                select = node.channels
                if views is not None and not isinstance(select, str):
                    inp = views.read(select)
                else:
                    inp = read_channels(channels, select)
                if node.managed:
                    for key, spec in node.managed.items():
                        inp[key] = spec.get(step, self.stop)
                if node.mapper is not None:
                    inp = node.mapper(inp)
            tasks[tid] = self._task(tid, node, inp, (PULL, name), node.triggers, seed, False)
        return tasks

    def _task(
        self,
        tid: str,
        node: Any,
        inp: Any,
        path: tuple[Any, ...],
        triggers: Any,
        seed: PadSeed | None,
        push: bool,
    ) -> Task:
        """A task of this step; ``seed`` (:meth:`_pad_seed`) when it is to be executed,
        ``None`` when it is only shown (no scratchpad, no input)."""
        run = self.run
        name = node.name
        task_ns = f"{run.ns}|{name}:{tid}" if run.ns else f"{name}:{tid}"
        scratchpad = None
        if seed is not None and self.pending_writes:
            scratchpad = self._saved_scratchpad(tid, name, seed[2])
        task = Task(
            tid,
            name,
            path,
            node,
            inp,
            triggers,
            task_ns,
            scratchpad,
            node.retry_policy or self.graph.retry_policy,
            push,
            node.timeout,
            seed,
            self.channels if seed is not None else None,
        )
        if scratchpad is not None:
            task.resuming = True  # it has writes saved by an earlier attempt of this step
        if seed is not None and self.first_tick and self.resuming:
            task.resume_unfinished = True
        return task

    def _pad_seed(self) -> PadSeed:
        """What the scratchpads of the tasks made now are built from (see ``Task``)."""
        run = self.run
        # a resume value answers only the tasks of the checkpoint being resumed
        # (interrupted, or stopped at a breakpoint), never tasks of later steps
        answers = (
            run.resume_state
            if (self.first_tick and self.resuming) or self.answer_any_step
            else None
        )
        return (self.step, self.stop, answers, run.strict)

    def _saved_scratchpad(self, tid: str, name: str, answers: Any) -> Scratchpad | None:
        """The scratchpad of task ``tid`` rebuilt from the writes an earlier attempt of
        this step saved (its answers, questions and ``@task`` results); ``None`` when
        it saved none (the task then builds a fresh one when first needed)."""
        saved = False
        resume: list[Any] = []
        asked: list[Any] = []
        pending_value: Any = _MISSING
        calls: dict[str, Any] = {}
        call_resume: dict[str, list[Any]] = {}
        for wtid, chan, val in self.pending_writes:
            if wtid != tid:
                continue
            saved = True
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
        if not saved:
            return None
        # positional call: a keyword call of a class builds a dict per call
        return Scratchpad(
            self.step,
            self.stop,
            resume,
            asked,
            pending_value,
            answers,
            self.run.strict,
            name,
            calls,
            call_resume,
        )

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
        reused = bool(self.pending_writes) and self.resuming and first
        if reused:
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
        if run.modes and ("tasks" in run.modes or "debug" in run.modes):
            from stategraph.pregel.debug import debug_event, task_start_payload

            for task in sorted(self.tasks.values(), key=lambda t: writes_sort_key(t.path)):
                if not task.node.metadata.get("__hidden__"):
                    payload = task_start_payload(task, self.step, run)
                    if payload is not None:
                        run.emit("tasks", payload)
                        run.emit("debug", debug_event("task", self.step, payload))
        if reused:
            # (only tasks given their saved writes above are done before running)
            for task in self.tasks.values():
                if task.done and not task.handled:
                    self._emit_task_output(task, cached=True, reused=True)
        return True

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
        task = self._task(tid, node, inp, path, (PUSH,), self._pad_seed(), True)
        task.node_error = error
        self.tasks[tid] = task
        return task


def _hits_breakpoint(nodes: Any, tasks: Any) -> bool:
    if nodes == "*":
        return any(not t.node.metadata.get("__hidden__") for t in tasks)
    return any(t.name in nodes for t in tasks)
