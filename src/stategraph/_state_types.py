"""What reading a thread's state returns: ``StateSnapshot``, ``PregelTask``,
``StateUpdate``, ``PregelExecutableTask`` and ``GraphOutput``.

Part of :mod:`stategraph.types`, which exports these names on first use (building and
running a graph needs none of them). Import them from ``stategraph.types``: the classes
say ``__module__ = "stategraph.types"``, the name they are pickled, serialized and
documented under.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from stategraph.types import CacheKey, Interrupt, RetryPolicy, TimeoutPolicy

__all__ = ["StateSnapshot", "StateUpdate", "PregelTask", "PregelExecutableTask", "GraphOutput"]

T = TypeVar("T")


class StateSnapshot(NamedTuple):
    """The state of a graph at one checkpoint, as returned by ``get_state``."""

    values: dict[str, Any] | Any
    next: tuple[str, ...]
    config: dict[str, Any]
    metadata: dict[str, Any] | None
    created_at: str | None
    parent_config: dict[str, Any] | None
    tasks: tuple[PregelTask, ...]
    interrupts: tuple[Interrupt, ...] = ()


class StateUpdate(NamedTuple):
    """One update for ``bulk_update_state``: values applied as if ``as_node`` returned them."""

    values: dict[str, Any] | None
    as_node: str | None = None
    task_id: str | None = None


class PregelTask(NamedTuple):
    """A task of a snapshot: what will run (or ran) next, and how it ended."""

    id: str
    name: str
    path: tuple[str | int | tuple, ...]
    error: Exception | str | None = None
    """The task's error (its repr, for a task read back from a checkpoint)."""
    interrupts: tuple[Interrupt, ...] = ()
    state: Any = None
    result: Any | None = None


@dataclass(slots=True, eq=False)
class PregelExecutableTask:
    """A task ready to run in the current step (internal to the runtime, but public)."""

    name: str
    input: Any
    proc: Any
    writes: list[tuple[str, Any]]
    config: dict[str, Any]
    triggers: Sequence[str]
    retry_policy: Sequence[RetryPolicy]
    cache_key: CacheKey | None
    id: str
    path: tuple[str | int | tuple, ...]
    writers: Sequence[Any] = ()
    subgraphs: Sequence[Any] = ()
    timeout: TimeoutPolicy | None = None


@dataclass(slots=True)
class GraphOutput(Generic[T]):
    """The result of ``invoke(..., version="v2")``: the value and any interrupts."""

    value: T
    interrupts: tuple[Interrupt, ...] = ()

    def _legacy(self, how: str) -> dict[str, Any]:
        from stategraph.warnings import LangGraphDeprecatedSinceV11, warn_deprecated

        warn_deprecated(
            LangGraphDeprecatedSinceV11,
            f"Accessing GraphOutput via `{how}` is deprecated. Use `result.value` to access "
            "the output value directly, or `result.interrupts` for interrupts.",
            stacklevel=4,
        )
        out: dict[str, Any] = dict(self.value) if isinstance(self.value, dict) else {}
        if self.interrupts:
            out["__interrupt__"] = self.interrupts
        return out

    def __getitem__(self, key: str) -> Any:
        """Deprecated: the output as a v1 dict (``result.value[key]``, or the
        interrupts under ``"__interrupt__"``)."""
        return self._legacy("result[key]")[key]

    def __contains__(self, key: object) -> bool:
        """Deprecated: whether the v1 dict form of the output has ``key``."""
        return key in self._legacy("key in result")


for _cls in (StateSnapshot, StateUpdate, PregelTask, PregelExecutableTask, GraphOutput):
    _cls.__module__ = "stategraph.types"  # their public home
