"""The scopes a run's tasks enter for the model libraries in use.

Apart from :mod:`stategraph.observe._model_calls` (which re-exports them) so that every
run, which looks its scopes up once, does not load the model-call machinery with them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stategraph._context import TaskContext
    from stategraph.observe._protocol import RunRecord as RunContext

__all__ = ["TaskScope", "task_scopes"]

TaskScope = Callable[["TaskContext"], Callable[[], None] | None]
"""Prepares a task for a model library: called as the task starts running, returns
the function that undoes it when the task stops (or ``None`` when nothing was done)."""


def task_scopes(run: RunContext) -> list[TaskScope]:
    """The scopes the tasks of ``run`` need for the model libraries in use.

    A model library that keeps its own context (LangChain's callbacks and config)
    gets a bridge: when the application has imported it, the bridge's ``enter_task``
    gives the runs the library makes in a task their parent (the node's run, as in
    LangGraph, so ``dispatch_custom_event`` works even when nobody listens) and makes
    the library report to the hook. The bridge is found through
    :mod:`stategraph._bridges`, so the runtime never imports it (nor the library)
    otherwise.
    """
    from stategraph._bridges import langchain_bridge

    bridge = langchain_bridge()
    return [bridge.enter_task] if bridge is not None else []
