"""The per-task context that lets node code reach the running graph.

The runtime sets :data:`CURRENT_TASK` around every node call. ``get_config()``,
``get_store()``, ``get_stream_writer()``, ``get_runtime()`` and ``interrupt()`` read it.
A ``ContextVar`` follows the call into threads and asyncio tasks because the runtime
copies the context when it hands work to a pool or creates a task.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Callable

__all__ = ["TaskContext", "CURRENT_TASK", "current_task"]


class TaskContext:
    """What one running task exposes to the code inside it.

    ``config`` is built lazily by ``make_config`` the first time a node asks for it,
    so runs whose nodes never call ``get_config()`` pay nothing for it.
    """

    __slots__ = (
        "_config",
        "checkpoint_ns",
        "make_config",
        "parent",
        "run",
        "runtime",
        "scratchpad",
        "send",
        "stream_writer",
        "task_id",
        "task_name",
    )

    def __init__(
        self,
        *,
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
    ) -> None:
        self._config = config
        self.make_config = make_config
        self.runtime = runtime
        self.scratchpad = scratchpad
        self.send = send
        self.checkpoint_ns = checkpoint_ns
        self.task_name = task_name
        self.task_id = task_id
        self.stream_writer = stream_writer
        self.run = run

    @property
    def config(self) -> dict[str, Any]:
        """The task's run config, built on first access."""
        cfg = self._config
        if cfg is None:
            cfg = self._config = self.make_config()
        return cfg


CURRENT_TASK: ContextVar[TaskContext | None] = ContextVar("stategraph_task", default=None)


def current_task(what: str) -> TaskContext:
    """Return the running task's context or raise a clear error naming ``what``."""
    ctx = CURRENT_TASK.get()
    if ctx is None:
        raise RuntimeError(
            f"{what} can only be called from inside a node (or a function a node calls) "
            "while a stategraph graph is running."
        )
    return ctx
