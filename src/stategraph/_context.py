"""The per-task context that lets node code reach the running graph.

The runtime sets :data:`CURRENT_TASK` around every node call. ``get_config()``,
``get_store()``, ``get_stream_writer()``, ``get_runtime()`` and ``interrupt()`` read it.
A ``ContextVar`` follows the call into threads and asyncio tasks because the runtime
copies the context when it hands work to a pool or creates a task.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Callable

__all__ = [
    "TaskContext",
    "CURRENT_TASK",
    "STATE_EDIT",
    "current_task",
    "task_paused_before",
]


class TaskContext:
    """What one running task exposes to the code inside it.

    ``config`` and ``runtime`` are built lazily (by ``make_config``/``make_runtime``)
    the first time a node asks for them, so nodes that never use them pay nothing.
    """

    __slots__ = (
        "_config",
        "_runtime",
        "_scratchpad",
        "attempt",
        "call",
        "checkpoint_ns",
        "first_attempt_time",
        "make_config",
        "make_runtime",
        "pad_owner",
        "run",
        "scopes",
        "send",
        "stream_writer",
        "subgraph_calls",
        "task_id",
        "task_name",
    )

    def __init__(
        self,
        make_config: Callable[[], dict[str, Any]],
        runtime: Any,
        scratchpad: Any,
        send: Callable[[list[tuple[str, Any]]], None],
        checkpoint_ns: str,
        task_name: str,
        task_id: str,
        stream_writer: Callable[[Any], None],
        run: Any = None,
        config: dict[str, Any] | None = None,
        make_runtime: Callable[[TaskContext], Any] | None = None,
        first_attempt_time: float | None = None,
        pad_owner: Any = None,
    ) -> None:
        self._config = config
        self.make_config = make_config
        self._runtime = runtime if make_runtime is None else None
        self.make_runtime = make_runtime
        self.attempt = 1
        self.first_attempt_time = first_attempt_time
        self._scratchpad = scratchpad
        # the runtime's task, whose scratchpad this context uses (built on first use)
        # when none is given
        self.pad_owner = pad_owner
        self.send = send
        self.checkpoint_ns = checkpoint_ns
        self.task_name = task_name
        self.task_id = task_id
        self.stream_writer = stream_writer
        self.run = run
        self.call: tuple[str, str] | None = None
        """For a ``@task`` call: its call id and task name (graphs run inside it nest
        under the call, not under the task that made it); ``None`` for a node."""
        # how many graphs this attempt of the task has started (see next_subgraph_index)
        self.subgraph_calls = 0
        self.scopes: list[Callable[[TaskContext], Callable[[], None] | None]] = []
        """Model-library scopes entered around each attempt (see ``stategraph.observe._model_calls``)."""

    @property
    def config(self) -> dict[str, Any]:
        """The task's run config, built on first access."""
        cfg = self._config
        if cfg is None:
            cfg = self._config = self.make_config()
        return cfg

    @property
    def runtime(self) -> Any:
        """The task's ``Runtime``, built on first access (it carries the attempt number)."""
        rt = self._runtime
        if rt is None:
            assert self.make_runtime is not None
            rt = self._runtime = self.make_runtime(self)
        return rt

    @property
    def scratchpad(self) -> Any:
        """The task's interrupt bookkeeping (the runtime's ``Scratchpad``): the one
        given, else the :attr:`pad_owner`'s, built on first access."""
        owner = self.pad_owner
        return self._scratchpad if owner is None else owner.scratchpad

    @property
    def built_scratchpad(self) -> Any:
        """:attr:`scratchpad` if it exists yet, without building it (``None``: nothing
        used it, so it holds no answers and no ``@task`` calls in flight)."""
        owner = self.pad_owner
        return self._scratchpad if owner is None else owner.built_scratchpad

    def next_attempt(self) -> None:
        """Count a retry: the next access to :attr:`runtime` sees the new attempt number."""
        self.attempt += 1
        if self.make_runtime is not None:
            self._runtime = None

    def next_subgraph_index(self) -> int:
        """Number the graphs this task runs, in call order (0 for the first).

        The k-th graph a node runs (k > 0) gets the namespace ``<task ns>|k``, so two
        graphs called from one node never share saved state. The count restarts with
        every attempt of the task, so a retried or resumed node finds the same
        namespaces again.
        """
        index = self.subgraph_calls
        self.subgraph_calls = index + 1
        return index


CURRENT_TASK: ContextVar[TaskContext | None] = ContextVar("stategraph_task", default=None)

#: Set to how the caller wrote it (e.g. ``"update_state(as_node='ask')"``) while
#: ``update_state`` runs a node's writers on the given values: their messages then speak
#: of that call, not of a node that returned something, and unknown keys always warn.
STATE_EDIT: ContextVar[str | None] = ContextVar("stategraph_state_edit", default=None)


def current_task(what: str) -> TaskContext:
    """Return the running task's context or raise a clear error naming ``what``."""
    ctx = CURRENT_TASK.get()
    if ctx is None:
        raise RuntimeError(
            f"{what} can only be called from inside a node (or a function a node calls) "
            "while a stategraph graph is running."
        )
    return ctx


def task_paused_before() -> bool:
    """Whether the running task paused on an ``interrupt()`` in an earlier run of it
    (so this run is its resumption); False outside a task.

    The scratchpad (the runtime's per-task interrupt bookkeeping) answers through its
    ``paused_before()`` method; code outside the runtime (``RemoteGraph`` as a node)
    asks here, without importing the runtime.
    """
    ctx = CURRENT_TASK.get()
    probe = getattr(ctx.scratchpad, "paused_before", None) if ctx is not None else None
    return bool(probe()) if callable(probe) else False
