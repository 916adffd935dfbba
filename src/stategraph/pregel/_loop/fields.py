"""What one run's :class:`~stategraph.pregel._loop.drive.Loop` holds: its fields, set up once.

The loop's behaviour lives in mixins, one concern each (``checkpoints``, ``report``,
``prepare``, ``writes``, ``start``); they all work on the fields set here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stategraph.channels.base import BaseChannel
from stategraph.channels.untracked_value import UntrackedValue
from stategraph.constants import (
    CALL_RESULT,
    CALL_RESUME,
    ERROR,
    ERROR_SOURCE,
    INTERRUPT,
    RESUME,
    RESUME_ASKED,
)
from stategraph.pregel._algo import StepTracker, increment
from stategraph.pregel._io import read_output
from stategraph.pregel._run import RunContext
from stategraph.pregel._task import Task
from stategraph.pregel._views import StateViews
from stategraph.types import Interrupt

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


class LoopFields:
    """The state of one run's loop (channels, checkpoint, step, status, ...)."""

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
        # the graph's channels when some of self.channels still are those (given to every
        # apply_writes as shared=; see pregel._run_channels)
        self.shared_specs: Mapping[str, BaseChannel] | None = None
        self.checkpoint: dict[str, Any] = {}
        self.checkpoint_id: str = ""
        # the random prefix of the checkpoint ids of a run without a saver
        self.anon_prefix: str | None = None
        self.checkpoint_config: dict[str, Any] = {}
        self.parent_config: dict[str, Any] | None = None
        self.metadata: dict[str, Any] = {}
        self.metadata_extra = saved_metadata_extra(run.metadata, run.configurable)
        self.pending_writes: list[tuple[str, str, Any]] = []
        self.saved_versions: dict[str, Any] = {}
        # the "never written" version of the versions in use (see _algo.null_version_of),
        # found once a channel has a version
        self.null_version: Any = None
        self.step = 0
        self.stop = 0
        self.tasks: dict[str, Task] = {}
        self.updated: set[str] | None = None
        self.status = "pending"
        self.interrupts: list[Interrupt] = []
        self.resuming = False
        self.first_tick = True
        # (task id, writes, task path) kept for the run's end (see _writes_effect)
        self.exit_writes: list[tuple[str, list[tuple[str, Any]], str | tuple[Any, ...]]] = []
        self.dirty = False  # a checkpoint exists in memory that was not saved (durability=exit)
        self.output: Any = None
        self._exit_parent: dict[str, Any] | None = None
        # (source, step, parent id, time in ns, updated channels) of a checkpoint saved
        # in place whose ts, updated_channels, metadata and configs are not made yet
        # (see _save_in_place)
        self._deferred: tuple[str, int, str, int, set[str] | None] | None = None
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
        # the current values of what nodes read, kept up to date by the tracker's steps
        self.views: StateViews | None = None

    def read_state(self, keys: str | Sequence[str]) -> Any:
        """The values of ``keys`` (``read_output``), from the kept views when valid."""
        views = self.views
        if views is not None and views.channels is self.channels and not isinstance(keys, str):
            return views.read(keys)
        return read_output(self.channels, keys)

    def _base_configurable(self) -> dict[str, Any]:
        run = self.run
        thread = run.thread_id
        if thread is not None and not isinstance(thread, str):
            # as a saver names it (and LangGraph's checkpoint payloads): a UUID as text
            thread = str(thread)
        return {"thread_id": thread, "checkpoint_ns": run.ns}


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
    """Drop the finished tasks' reducer previews (see ``_algo.local_read``): values
    a run that ended no longer needs."""
    for task in tasks.values():
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


# configurable keys that say where a checkpoint or task is, not what the run is about
_PLACE_KEYS = frozenset(
    {
        "thread_id",
        "checkpoint_id",
        "checkpoint_ns",
        "checkpoint_map",
        "task_id",
        "langgraph_step",
        "langgraph_node",
        "langgraph_path",
        "langgraph_triggers",
        "langgraph_checkpoint_ns",
    }
)


def saved_metadata_extra(
    metadata: Mapping[str, Any], configurable: Mapping[str, Any]
) -> dict[str, Any]:
    """What a saved checkpoint's metadata takes from the run's config, as in LangGraph.

    The config's ``metadata``, then each ``configurable`` value that is a plain string,
    number or bool, except private (``__``) keys and those naming a place
    (``thread_id``, ``checkpoint_ns``...). A key already taken is not overwritten, and
    the loop's own keys (``source``, ``step``, ``parents``) win over all. So
    ``get_state(cfg).metadata`` shows e.g. the ``user_id`` a run was given, and
    ``list(cfg, filter={"user_id": ...})`` finds its checkpoints.
    """
    extra = dict(metadata)
    for key, value in configurable.items():
        if key in extra or key in _PLACE_KEYS or key.startswith("__"):
            continue
        if isinstance(value, (str, int, float, bool)):
            extra[key] = value
    return extra
