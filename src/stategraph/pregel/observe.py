"""Moved to :mod:`stategraph.observe`: this path re-exports the observer protocol."""

from __future__ import annotations

from stategraph.observe import (
    ModelCallObserving,
    Observers,
    RunObserver,
    aresolve,
    current_run_and_task,
    global_observers,
    observers_for,
    register_observer,
    resolve,
    unregister_observer,
)
from stategraph.pregel._watch import RunWatch

__all__ = [
    "RunObserver",
    "Observers",
    "ModelCallObserving",
    "RunWatch",
    "observers_for",
    "register_observer",
    "unregister_observer",
    "global_observers",
    "resolve",
    "aresolve",
    "current_run_and_task",
]
