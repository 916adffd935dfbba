"""Deprecated location of the public value types: import them from
:mod:`stategraph.types`. Importing this module warns."""

from __future__ import annotations

from stategraph.types import (
    All,
    CachePolicy,
    PregelExecutableTask,
    PregelTask,
    RetryPolicy,
    StateSnapshot,
    StateUpdate,
    StreamMode,
    StreamWriter,
)
from stategraph.warnings import LangGraphDeprecatedSinceV10, warn_deprecated

__all__ = [
    "All",
    "CachePolicy",
    "PregelExecutableTask",
    "PregelTask",
    "RetryPolicy",
    "StateSnapshot",
    "StateUpdate",
    "StreamMode",
    "StreamWriter",
]

warn_deprecated(
    LangGraphDeprecatedSinceV10,
    "Importing from stategraph.pregel.types is deprecated. Please use 'from "
    "stategraph.types import ...' instead.",
    stacklevel=2,
)
