"""The runtime's side of observation: the shells' reports about one run.

:class:`RunWatch` turns the effects a shell performs into the observations of
:mod:`stategraph.observe` (run started, resumed, step started and finished, checkpoint
saved, run finished, paused or failed). It reads the loop's state here, in the
runtime, so the observers only ever see the records of
:mod:`stategraph.observe._protocol`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from stategraph.observe._fanout import Observers, chain_reports

if TYPE_CHECKING:
    from stategraph.pregel._effects import Put
    from stategraph.pregel._run import RunContext
    from stategraph.pregel._task import Task

__all__ = ["RunWatch"]

_STATUS = {"interrupt_before": "interrupt_before", "interrupt_after": "interrupt_after"}


class RunWatch:
    """What a shell reports about one run: it turns the effects it performs into
    observations (shared by both shells, so they report the same things)."""

    __slots__ = ("loop", "observers", "resume_told", "run", "step")

    def __init__(self, loop: Any) -> None:
        self.loop = loop
        self.run: RunContext = loop.run
        obs = self.run.observers
        assert obs is not None
        self.observers: Observers = obs
        self.resume_told = False
        self.step = 0

    def started(self) -> Any:
        return self.observers.run_started(self.run)

    def _resumed(self) -> Any:
        if self.resume_told or not self.loop.resuming:
            return None
        self.resume_told = True
        return self.observers.run_resumed(self.run)

    def step_started(self, tasks: Sequence[Task]) -> Any:
        self.step = self.loop.step
        return chain_reports(
            self._resumed(), self.observers.step_started(self.run, self.step, tasks)
        )

    def step_finished(self) -> Any:
        return self.observers.step_finished(self.run, self.step)

    def checkpoint(self, effect: Put) -> Any:
        return self.observers.checkpoint_saved(
            self.run, effect.config, effect.checkpoint, effect.metadata
        )

    def finished(self, output: Any) -> Any:
        return chain_reports(self._resumed(), self.observers.run_finished(self.run, output))

    def interrupted(self, exc: BaseException) -> Any:
        loop = self.loop
        status = _STATUS.get(loop.status, "pending")
        interrupts = tuple(loop.interrupts) or tuple(getattr(exc, "interrupts", ()) or ())
        return chain_reports(
            self._resumed(), self.observers.run_interrupted(self.run, interrupts, status)
        )

    def failed(self, exc: BaseException) -> Any:
        return chain_reports(self._resumed(), self.observers.run_failed(self.run, exc))
