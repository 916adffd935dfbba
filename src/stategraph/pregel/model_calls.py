"""Moved to :mod:`stategraph.observe`: this path re-exports the chat-model-call hook."""

from __future__ import annotations

from stategraph.observe._model_calls import (
    ModelCall,
    ModelCallHandler,
    TaskScope,
    begin_model_call,
    run_wants_model_calls,
    task_metadata,
    task_scopes,
)

__all__ = [
    "ModelCallHandler",
    "ModelCall",
    "begin_model_call",
    "run_wants_model_calls",
    "task_metadata",
    "task_scopes",
    "TaskScope",
]
