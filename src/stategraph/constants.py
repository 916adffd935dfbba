"""Names shared by every layer: the graph's entry and exit, tags, reserved channels.

Everything here is a plain string constant so that importing it costs nothing.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = [
    "START",
    "END",
    "TAG_HIDDEN",
    "TAG_NOSTREAM",
    "INPUT",
    "INTERRUPT",
    "RESUME",
    "ERROR",
    "ERROR_SOURCE",
    "ERROR_HANDLER_PREFIX",
    "DEFAULT_ERROR_HANDLER",
    "NO_WRITES",
    "TASKS",
    "RETURN",
    "RESUME_ASKED",
    "CALL_RESUME",
    "CALL_RESULT",
    "TASK_BOOKKEEPING",
    "PUSH",
    "PULL",
    "NULL_TASK_ID",
    "NS_SEP",
    "NS_END",
    "RESERVED",
    "CONF",
]

START: Final = "__start__"
"""The virtual first node of a graph: edges from ``START`` mark entry points."""

END: Final = "__end__"
"""The virtual last node of a graph: routing to ``END`` finishes that branch."""

TAG_HIDDEN: Final = "langsmith:hidden"
"""Tag that hides a node from tracing/observability output."""

TAG_NOSTREAM: Final = "nostream"
"""Tag that keeps a node's chat-model tokens out of the ``messages`` stream."""

# Reserved pseudo-channels. Writes to them are control signals, not state.
INPUT: Final = "__input__"
INTERRUPT: Final = "__interrupt__"
RESUME: Final = "__resume__"
ERROR: Final = "__error__"
ERROR_SOURCE: Final = "__error_source_node__"
"""Saved with a failed task whose error handler takes over: the failed node's name."""
ERROR_HANDLER_PREFIX: Final = "__error_handler__"
"""Name prefix of the node that runs a node's own ``error_handler``."""
DEFAULT_ERROR_HANDLER: Final = "__default_error_handler__"
"""Name of the node running the ``set_node_defaults(error_handler=...)`` handler."""
NO_WRITES: Final = "__no_writes__"
TASKS: Final = "__pregel_tasks"
RETURN: Final = "__return__"
CALL_RESULT: Final = "__call_result__"
"""Pseudo-channel holding the results of ``@task`` calls made inside a node."""
RESUME_ASKED: Final = "__resume_asked__"
CALL_RESUME: Final = "__call_resume__"
"""Answers given to interrupts raised inside ``@task`` calls: ``{call_id: [answers]}``."""
"""Pseudo-channel recording which interrupt values a task's resume answers were given for."""

PUSH: Final = "__pregel_push"
"""Task-path marker for tasks created from ``Send`` packets."""
PULL: Final = "__pregel_pull"
"""Task-path marker for tasks triggered by channel updates."""

NULL_TASK_ID: Final = "00000000-0000-0000-0000-000000000000"
"""Task id used for writes that do not come from a node (input, update_state)."""

NS_SEP: Final = "|"
"""Separates levels of a checkpoint namespace (``parent:task|child:task``)."""
NS_END: Final = ":"
"""Separates a node name from its task id inside one namespace level."""

CONF: Final = "configurable"
"""The key of the ``configurable`` section of a run config."""

RESERVED: Final = frozenset(
    {
        INPUT,
        INTERRUPT,
        RESUME,
        RESUME_ASKED,
        CALL_RESUME,
        CALL_RESULT,
        ERROR,
        ERROR_SOURCE,
        NO_WRITES,
        TASKS,
        RETURN,
        PUSH,
        PULL,
        START,
        END,
    }
)
"""Names that no node or state key may use."""

TASK_BOOKKEEPING: Final = frozenset({RESUME, RESUME_ASKED, CALL_RESUME, CALL_RESULT})
"""Writes a task keeps across retries and saves with its interrupts and errors."""


_MOVED_TO_TYPES = ("Send", "Interrupt")
_PRIVATE = {"PREVIOUS": "__previous__"}


def __getattr__(name: str) -> Any:
    """Names LangGraph used to export from here, kept with a deprecation warning."""
    from stategraph.warnings import LangGraphDeprecatedSinceV10, warn_deprecated

    if name in _MOVED_TO_TYPES:
        warn_deprecated(
            LangGraphDeprecatedSinceV10,
            f"Importing {name} from stategraph.constants is deprecated. Please use 'from "
            f"stategraph.types import {name}' instead.",
        )
        import stategraph.types

        return getattr(stategraph.types, name)
    if name in _PRIVATE:
        warn_deprecated(
            LangGraphDeprecatedSinceV10,
            f"Importing {name} from stategraph.constants is deprecated. This constant is now "
            "private and should not be used directly.",
        )
        return _PRIVATE[name]
    raise AttributeError(f"module 'stategraph.constants' has no attribute {name!r}")
