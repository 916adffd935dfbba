"""``RunContext``: everything one run of a graph needs, built once per invoke/stream."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from stategraph.constants import CONF, NS_END, NS_SEP
from stategraph.pregel._task import ResumeState
from stategraph.runtime import RunControl, Runtime, ServerInfo

if TYPE_CHECKING:
    from stategraph.observe import ModelCallHandler, Observers, TaskScope
    from stategraph.observe._messages import MessagesEmitter
    from stategraph.pregel._lease_guard import LeaseSettings, RunGuard
    from stategraph.pregel._remote_tasks import Remote
    from stategraph.pregel._roles import PregelGraph
    from stategraph.pregel._task import Task

__all__ = ["RunContext", "ReplayPlan", "Sink", "strip_task_ids"]

Sink = Callable[[tuple[str, ...], str, Any], None]
"""Receives stream chunks: ``sink(namespace, mode, payload)``."""


def strip_task_ids(ns: str) -> str:
    """``"a:<task id>|b:<task id>"`` -> ``"a|b"``: a namespace without its task ids."""
    return NS_SEP.join(part.split(NS_END)[0] for part in ns.split(NS_SEP))


class ReplayPlan:
    """Where the subgraphs of a replayed run find the state to start from.

    A replay (``invoke(None, config_with_checkpoint_id)``) re-runs the past. A subgraph
    that keeps state across runs must then start from the state it had at that point
    of the thread's history, not from its latest one:

    * ``targets`` maps a subgraph namespace to the checkpoint to replay in it (given by
      a subgraph's own checkpoint config, whose ``checkpoint_map`` names a checkpoint
      for each level);
    * otherwise the subgraph loads its last checkpoint saved before ``anchor`` (the
      checkpoint the replay started from).

    Either applies only the first time a namespace is entered in the run: a subgraph
    called again later in the same run continues from what the run itself saved.
    """

    __slots__ = ("_lock", "_seen", "anchor", "targets")

    def __init__(self, anchor: str | None = None, targets: dict[str, str] | None = None) -> None:
        import threading

        self.anchor = anchor
        self.targets = dict(targets or {})
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def claim(self, ns: str) -> tuple[str | None, str | None]:
        """``(checkpoint id to replay, anchor)`` for a namespace entered the first time.

        Returns ``(None, None)`` once the namespace was entered before in this run.
        """
        with self._lock:
            if ns in self._seen:
                return None, None
            self._seen.add(ns)
        # a namespace with task ids matches only when the parent step re-runs in place
        # (a forked step runs new tasks, whose subgraphs start over)
        return self.targets.get(ns), self.anchor


class RunContext:
    """Run-scoped settings and shared state of one graph run (and its nested subgraphs).

    ``ns`` is this graph's checkpoint namespace ("" at the root); ``stream_ns`` the
    namespace tuple attached to chunks when the caller streams subgraphs (the levels
    of ``ns``).
    """

    __slots__ = (
        "_loop_ref",
        "cache",
        "checkpoint_id",
        "checkpointer",
        "config",
        "configurable",
        "control",
        "driven_sync",
        "durability",
        "graph",
        "guard",
        "interrupt_after",
        "interrupt_before",
        "lease_settings",
        "max_concurrency",
        "messages",
        "metadata",
        "model_handlers",
        "modes",
        "nested",
        "ns",
        "observers",
        "output_keys",
        "parent_call",
        "parent_ids",
        "parent_run",
        "parent_task",
        "recursion_limit",
        "remote",
        "replay",
        "resume_state",
        "resume_unfinished",
        "resuming",
        "run_id",
        "runtime",
        "scopes",
        "server_info",
        "sink",
        "stateful",
        "store",
        "stream_keys",
        "stream_ns",
        "strict",
        "subgraphs",
        "tags",
        "thread_id",
        "update_keys",
    )

    def __init__(
        self,
        *,
        graph: PregelGraph,
        config: dict[str, Any],
        checkpointer: Any,
        store: Any,
        cache: Any,
        runtime: Runtime[Any],
        modes: frozenset[str],
        subgraphs: bool,
        sink: Sink | None,
        durability: str,
        resume_state: ResumeState,
        resuming: bool,
        interrupt_before: Sequence[str] | str,
        interrupt_after: Sequence[str] | str,
        recursion_limit: int,
        ns: str = "",
        stream_ns: tuple[str, ...] = (),
        parent_ids: dict[str, str] | None = None,
        nested: bool = False,
        output_keys: str | Sequence[str],
        stream_keys: str | Sequence[str],
        update_keys: str | Sequence[str] | None = None,
        max_concurrency: int | None = None,
        run_id: str | None = None,
        control: RunControl | None = None,
        replay: ReplayPlan | None = None,
        stateful: bool = False,
    ) -> None:
        self.graph = graph
        self.config = config
        self.configurable: dict[str, Any] = config.get(CONF) or {}
        self.thread_id = self.configurable.get("thread_id")
        self.checkpoint_id = self.configurable.get("checkpoint_id")
        self.ns = ns
        self.stream_ns = stream_ns
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        self.runtime = runtime
        self.modes = modes
        self.subgraphs = subgraphs
        self.sink = sink
        self.durability = durability
        self.resume_state = resume_state
        self.resuming = resuming
        self.resume_unfinished = False
        self.interrupt_before = interrupt_before
        self.interrupt_after = interrupt_after
        self.recursion_limit = recursion_limit
        self.parent_ids = parent_ids or {}
        self.nested = nested
        self.strict = bool(getattr(graph, "strict", False))
        self.output_keys = output_keys
        # what "values" chunks show, and the keys "updates" chunks are filtered to (None:
        # the graph's own choice); both come from an explicit output_keys=
        self.stream_keys = stream_keys
        self.update_keys = update_keys
        self.max_concurrency = max_concurrency
        self.run_id = run_id
        self.control = control
        self.server_info: ServerInfo | None = None
        self.tags: list[str] = list(config.get("tags") or ())
        self.metadata: dict[str, Any] = dict(config.get("metadata") or {})
        self._loop_ref: Any = None
        # what consumers (callbacks, events, tracing) observe; None when nobody listens
        self.observers: Observers | None = None
        # for a nested run (a subgraph): the run and the task it runs in
        self.parent_run: RunContext | None = None
        self.parent_task: Task | None = None
        # for a graph run inside a @task call of parent_task: that call's id
        self.parent_call: str | None = None
        # driven by the sync shell (invoke/stream): its nodes' outputs are not streamed
        # to astream_events, as LangGraph streams them only in async runs
        self.driven_sync = False
        # shared with nested runs: how their subgraphs find state to replay from
        self.replay = replay
        # a subgraph compiled with checkpointer=True: its namespace has no task ids and
        # its state outlives the parent task
        self.stateful = stateful
        self.model_handlers: list[ModelCallHandler] = []
        """Who hears of the chat-model calls made in this run's tasks (shared with the
        run's subgraphs); see :mod:`stategraph.observe._model_calls`."""
        self.messages: MessagesEmitter | None = None
        """The ``messages`` stream emitter, when the caller streams that mode."""
        self.scopes: list[TaskScope] | None = None
        self.lease_settings: LeaseSettings | None = None
        """A root run that must take its thread's lease: its checked settings."""
        self.guard: RunGuard | None = None
        """The thread lease of the run (shared with its nested runs), once taken."""
        self.remote: Remote | None = None
        """Where node calls go when the run has a remote executor (None: this process)."""

    def task_scopes(self) -> list[TaskScope]:
        """The model-library scopes each task enters (computed once per run)."""
        scopes = self.scopes
        if scopes is None:
            from stategraph.observe import task_scopes

            scopes = self.scopes = task_scopes(self)
        return scopes

    @property
    def loop(self) -> Any:
        """The run's :class:`~stategraph.pregel._loop.drive.Loop` (None once it is gone).

        Held weakly: the loop refers to its run, and without a cycle between them a
        finished run's state is freed at once instead of at the next full collection.
        """
        ref = self._loop_ref
        return ref() if ref is not None else None

    @loop.setter
    def loop(self, value: Any) -> None:
        self._loop_ref = weakref.ref(value) if value is not None else None

    def emit(self, mode: str, payload: Any) -> None:
        """Send one chunk to the caller if it asked for ``mode``."""
        sink = self.sink
        if sink is not None and mode in self.modes:
            sink(self.stream_ns, mode, payload)
