"""``RunContext``: everything one run of a graph needs, built once per invoke/stream."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from stategraph.constants import CONF
from stategraph.pregel.task import ResumeState
from stategraph.runtime import Runtime

if TYPE_CHECKING:
    from stategraph.pregel.main import Pregel

__all__ = ["RunContext", "Sink"]

Sink = Callable[[tuple[str, ...], str, Any], None]
"""Receives stream chunks: ``sink(namespace, mode, payload)``."""


class RunContext:
    """Run-scoped settings and shared state of one graph run (and its nested subgraphs).

    ``ns`` is this graph's checkpoint namespace ("" at the root); ``stream_ns`` the
    namespace tuple attached to chunks when the caller streams subgraphs.
    """

    __slots__ = (
        "cache",
        "checkpoint_id",
        "checkpointer",
        "config",
        "configurable",
        "durability",
        "graph",
        "interrupt_after",
        "interrupt_before",
        "loop",
        "max_concurrency",
        "metadata",
        "modes",
        "nested",
        "ns",
        "output_keys",
        "parent_ids",
        "recursion_limit",
        "resume_state",
        "resuming",
        "run_id",
        "runtime",
        "sink",
        "store",
        "stream_keys",
        "stream_ns",
        "strict",
        "subgraphs",
        "tags",
        "thread_id",
    )

    def __init__(
        self,
        *,
        graph: Pregel,
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
        max_concurrency: int | None = None,
        run_id: str | None = None,
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
        self.interrupt_before = interrupt_before
        self.interrupt_after = interrupt_after
        self.recursion_limit = recursion_limit
        self.parent_ids = parent_ids or {}
        self.nested = nested
        self.strict = bool(getattr(graph, "strict", False))
        self.output_keys = output_keys
        self.stream_keys = stream_keys
        self.max_concurrency = max_concurrency
        self.run_id = run_id
        self.tags: list[str] = list(config.get("tags") or ())
        self.metadata: dict[str, Any] = dict(config.get("metadata") or {})
        self.loop: Any = None

    def emit(self, mode: str, payload: Any) -> None:
        """Send one chunk to the caller if it asked for ``mode``."""
        sink = self.sink
        if sink is not None and mode in self.modes:
            sink(self.stream_ns, mode, payload)
