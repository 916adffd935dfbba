"""What the loop reports of a finished task to the stream modes (``updates``,
``tasks``, ``debug``, ``messages``).
"""

from __future__ import annotations

from typing import Any

from stategraph.pregel._io import NO_UPDATE
from stategraph.pregel._loop.fields import LoopFields
from stategraph.pregel._task import Task


class ReportMixin(LoopFields):
    """Emits a finished task's result to the run's stream modes."""

    def _emit_task_result(self, task: Task) -> None:
        if self.run.modes & {"tasks", "debug"} and not task.node.metadata.get("__hidden__"):
            from stategraph.pregel.debug import debug_event, task_result_payload

            payload = task_result_payload(task, self.graph)
            self.run.emit("tasks", payload)
            self.run.emit("debug", debug_event("task_result", self.step, payload))

    def _emit_task_output(self, task: Task, *, cached: bool, reused: bool = False) -> None:
        run = self.run
        if not run.modes:
            return
        if run.messages is not None and "messages" in run.modes:
            run.messages.task_finished(run, task, self.step)
        if "updates" in run.modes:
            update = self.graph.task_update(task, run.update_keys)
            if update is not NO_UPDATE:
                chunk: dict[str, Any] = {task.name: update}
                if cached:
                    chunk["__metadata__"] = {"cached": True}
                run.emit("updates", chunk)
        if (
            ("tasks" in run.modes or "debug" in run.modes)
            and not reused
            and not task.node.metadata.get("__hidden__")
        ):
            from stategraph.pregel.debug import debug_event, task_result_payload

            payload = task_result_payload(task, self.graph)
            run.emit("tasks", payload)
            run.emit("debug", debug_event("task_result", self.step, payload))
