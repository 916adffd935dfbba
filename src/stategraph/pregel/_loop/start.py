"""Starting and resuming a run: loading its checkpoint, applying the input or the
``Command`` (resume values, updates, ``goto``, forks), replays, and the first step's
budget.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

from stategraph.constants import CONF, INTERRUPT, NS_SEP, NULL_TASK_ID, RESUME
from stategraph.errors import EmptyInputError
from stategraph.pregel import _effects as fx
from stategraph.pregel._algo import StepTracker, TrackerLayout, apply_writes, tracker_layout
from stategraph.pregel._io import map_command, map_input, read_output
from stategraph.pregel._loop.checkpoints import CheckpointsMixin
from stategraph.pregel._loop.fields import _SUCCESS_EXCLUDED, WriteBatch
from stategraph.pregel._loop.prepare import PrepareMixin
from stategraph.pregel._loop.resume_ids import check_resume_ids
from stategraph.pregel._views import StateViews, read_sets
from stategraph.types import Command


class StartMixin(PrepareMixin, CheckpointsMixin):
    """Loads the run's starting point and applies its input or command."""

    def _load(self) -> Generator[fx.Effect, Any, Any]:
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
            saved = yield fx.GetBefore({CONF: conf}, anchor)
        else:
            saved = yield fx.GetTuple({CONF: conf})
        if saved is None and wanted:
            from stategraph.errors import CheckpointNotFoundError

            raise CheckpointNotFoundError(
                f"No checkpoint with id '{wanted}' in thread "
                f"'{run.thread_id}' (namespace '{run.ns}'). Use get_state_history() "
                "to list the checkpoints of a thread."
            )
        return saved

    def _resolve_entry(self, plan: Any) -> Generator[fx.Effect, Any, None]:
        """Find the root checkpoint of a subgraph checkpoint config without a map."""
        run = self.run
        # the deepest level named: its metadata knows every enclosing checkpoint
        entry_ns = max(plan.targets, key=lambda ns: ns.count(NS_SEP))
        entry_id = plan.targets[entry_ns]
        entry = yield fx.GetTuple(
            {
                CONF: {
                    "thread_id": run.thread_id,
                    "checkpoint_ns": entry_ns,
                    "checkpoint_id": entry_id,
                }
            }
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

    def _first(self, saved: Any) -> Generator[fx.Effect, Any, None]:
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
                head = yield fx.GetTuple({CONF: self._base_configurable()})
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
                head = yield fx.GetTuple({CONF: self._base_configurable()})
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
                        shared=self.shared_specs,
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
                shared=self.shared_specs,
            )
            self.updated = None
        self.step = prev_step + 1
        self.stop = stop
        # from here on the channels change only through the steps' apply_writes
        self.tracker = StepTracker(self.channels, self.graph.step_scoped, _layout(self.graph))
        self.views = self.tracker.views = StateViews(self.channels, read_sets(self.graph))
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
            from stategraph.pregel._run import ReplayPlan

            run.replay = ReplayPlan()
        run.replay.anchor = anchor or ""

    def _apply_input(self, writes: list[tuple[str, Any]]) -> None:
        self.updated = apply_writes(
            self.checkpoint,
            self.channels,
            [WriteBatch(writes)],
            self.get_next_version,
            self.trigger_to_nodes,
            shared=self.shared_specs,
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
                check_resume_ids(resume, waiting, self.pending_writes, self.nodes)
            run.resume_state.by_id.update(resume)
            return
        if len(waiting) > 1 and not run.nested:
            ids = ", ".join(f"{iid} ({intr.value!r})" for iid, intr in waiting.items())
            raise RuntimeError(
                "When there are multiple pending interrupts, you must specify the interrupt "
                "id when resuming. Resume with Command(resume={interrupt_id: value, ...}) "
                f"naming the interrupts to answer. Waiting: {ids}"
            )
        from stategraph.pregel._task import _MISSING as MISSING_RESUME

        if run.resume_state.null is MISSING_RESUME:
            run.resume_state.null = resume


def _layout(graph: Any) -> TrackerLayout:
    """The graph's ``tracker_layout`` (computed once per graph: its runs make their
    channels of the same classes from its specs)."""
    layout: TrackerLayout | None = getattr(graph, "_tracker_layout", None)
    if layout is None:
        layout = tracker_layout(graph.channels, graph.step_scoped)
        try:
            graph._tracker_layout = layout
        except AttributeError:
            pass
    return layout


def _is_resume_map(resume: Any) -> bool:
    """Whether ``Command(resume=...)`` maps interrupt ids (32 hex digits) to answers."""
    if not isinstance(resume, Mapping):
        return False
    return all(
        isinstance(k, str) and len(k) == 32 and all(c in "0123456789abcdef" for c in k)
        for k in resume
    )
