"""Observation: everything that watches a run, in one room.

The runtime (:mod:`stategraph.pregel`) reports what happens in a run through one
protocol, :class:`RunObserver`, whose calls carry the records of
:mod:`stategraph.observe._protocol` (:class:`RunRecord`, :class:`TaskRecord`,
:class:`NodeRecord`; node code finds its run and task as a :class:`RunAndTask`).
Everything that consumes those reports lives here:

- the fan-out to a run's observers (``_fanout``) and which observers a run gets, with
  the global registry (``_registry``);
- LangChain-style callback handlers of ``config["callbacks"]`` (``_callbacks``);
- ``astream_events`` v1/v2 (``_events``) and the v3 run streams (``_stream_v3``);
- ``debug`` logging (``_logging``), ``print_mode``/``debug`` printing (``_printing``)
  and the ``tasks``/``debug`` payload shapes (``_debug``);
- the ``messages`` stream (``_messages``) and the chat-model-call hook that feeds it
  (``_model_calls``), the tool-call reports of ``ToolNode`` (``_tool_calls``);
- typed ``version="v2"`` output parts (``_typed_output``).

OpenTelemetry (:mod:`stategraph.tracing`) is one more observer and imports only this
room. Nothing here imports the loop or its tasks (an import-linter contract checks
it); to add a kind of observer, subclass :class:`RunObserver` here and register it.

The names below are imported on first use, so that a submodule (``_stream_v3`` at
compile time, ``_fanout`` when a run starts) loads without the rest of the room.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stategraph._lazy import lazy_attributes

__all__ = [
    "RunObserver",
    "RunRecord",
    "TaskRecord",
    "NodeRecord",
    "LoopRecord",
    "StepRecord",
    "RunAndTask",
    "task_run_metadata",
    "call_run_metadata",
    "call_namespace",
    "Observers",
    "ModelCallObserving",
    "observers_for",
    "register_observer",
    "unregister_observer",
    "global_observers",
    "resolve",
    "aresolve",
    "current_run_and_task",
    "ModelCall",
    "ModelCallHandler",
    "TaskScope",
    "begin_model_call",
    "run_wants_model_calls",
    "task_scopes",
]

_LAZY = {
    "ModelCallObserving": "stategraph.observe._fanout",
    "Observers": "stategraph.observe._fanout",
    "aresolve": "stategraph._sync_await",
    "current_run_and_task": "stategraph.observe._fanout",
    "global_observers": "stategraph.observe._registry",
    "observers_for": "stategraph.observe._registry",
    "register_observer": "stategraph.observe._registry",
    "resolve": "stategraph._sync_await",
    "unregister_observer": "stategraph.observe._registry",
    "ModelCall": "stategraph.observe._model_calls",
    "ModelCallHandler": "stategraph.observe._model_calls",
    "TaskScope": "stategraph.observe._task_scopes",
    "begin_model_call": "stategraph.observe._model_calls",
    "run_wants_model_calls": "stategraph.observe._model_calls",
    "task_scopes": "stategraph.observe._task_scopes",
    "LoopRecord": "stategraph.observe._protocol",
    "NodeRecord": "stategraph.observe._protocol",
    "RunAndTask": "stategraph.observe._protocol",
    "RunObserver": "stategraph.observe._protocol",
    "RunRecord": "stategraph.observe._protocol",
    "StepRecord": "stategraph.observe._protocol",
    "TaskRecord": "stategraph.observe._protocol",
    "task_run_metadata": "stategraph.observe._run_metadata",
    "call_run_metadata": "stategraph.observe._run_metadata",
    "call_namespace": "stategraph.observe._run_metadata",
}

if TYPE_CHECKING:
    from stategraph._sync_await import aresolve, resolve
    from stategraph.observe._fanout import ModelCallObserving, Observers, current_run_and_task
    from stategraph.observe._model_calls import (
        ModelCall,
        ModelCallHandler,
        begin_model_call,
        run_wants_model_calls,
    )
    from stategraph.observe._protocol import (
        LoopRecord,
        NodeRecord,
        RunAndTask,
        RunObserver,
        RunRecord,
        StepRecord,
        TaskRecord,
    )
    from stategraph.observe._run_metadata import (
        call_namespace,
        call_run_metadata,
        task_run_metadata,
    )
    from stategraph.observe._task_scopes import TaskScope, task_scopes

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
