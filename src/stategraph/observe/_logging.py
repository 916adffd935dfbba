"""``logging`` at DEBUG: step boundaries, task attempts and checkpoint saves.

Added to a run when the ``stategraph`` logger is enabled for DEBUG as the run starts
(``logging.getLogger("stategraph").setLevel(logging.DEBUG)``); otherwise it costs
nothing. Records go to the ``stategraph.run`` logger.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stategraph.observe._protocol import RunObserver
from stategraph.observe._run_logger import debug_logging_enabled, logger

if TYPE_CHECKING:
    from stategraph.observe._protocol import RunRecord as RunContext
    from stategraph.observe._protocol import TaskRecord as Task

__all__ = ["LoggingObserver", "debug_logging_enabled"]


def _where(run: RunContext) -> str:
    name = getattr(run.graph, "name", "LangGraph")
    return f"{name}[{run.ns}]" if run.ns else str(name)


class LoggingObserver(RunObserver):
    """Logs what the shells report, at DEBUG."""

    def run_started(self, run: RunContext) -> None:
        logger.debug("run start: graph %s, thread %s", _where(run), run.thread_id)

    def run_resumed(self, run: RunContext) -> None:
        logger.debug("run resume: graph %s from checkpoint %s", _where(run), run.loop.checkpoint_id)

    def run_finished(self, run: RunContext, output: Any) -> None:
        logger.debug("run end: graph %s", _where(run))

    def run_interrupted(self, run: RunContext, interrupts: Any, status: str) -> None:
        logger.debug(
            "run paused: graph %s (%s, %d interrupts)", _where(run), status, len(interrupts)
        )

    def run_failed(self, run: RunContext, error: BaseException) -> None:
        logger.debug("run failed: graph %s: %r", _where(run), error)

    def step_started(self, run: RunContext, step: int, tasks: Any) -> None:
        logger.debug(
            "step %d start: graph %s, tasks %s", step, _where(run), [t.name for t in tasks]
        )

    def step_finished(self, run: RunContext, step: int) -> None:
        logger.debug("step %d end: graph %s", step, _where(run))

    def task_failed(
        self, run: RunContext, task: Task, error: BaseException, retrying: bool
    ) -> None:
        logger.debug(
            "task %s (%s) raised %r%s", task.name, task.id, error, ", retrying" if retrying else ""
        )

    def checkpoint_saved(
        self, run: RunContext, config: Any, checkpoint: Any, metadata: Any
    ) -> None:
        logger.debug(
            "saver.put: graph %s, checkpoint %s (source %s, step %s)",
            _where(run),
            checkpoint["id"],
            metadata.get("source"),
            metadata.get("step"),
        )
