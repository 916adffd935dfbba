"""What the run machinery reads of the compiled graph it is handed: :class:`PregelGraph`.

The parts under :class:`~stategraph.pregel.main.Pregel` (reading input and output,
the run context and its loop, reading and editing saved state, drawing, debug
payloads) are given the graph they work for. Typing that parameter with the ``Pregel``
class would make each of them import ``pregel.main`` back, the module that assembles
them from those very parts; this protocol names only what they read, so the modules
keep a one-way order (issue 21). ``Pregel`` and every compiled ``StateGraph`` match it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from stategraph.channels.base import BaseChannel
    from stategraph.pregel._task import Task
    from stategraph.pregel.node import PregelNode
    from stategraph.types import Command, RetryPolicy

__all__ = ["PregelGraph"]


class PregelGraph(Protocol):
    """A compiled graph as the runtime reads it: its nodes, channels and the hooks the
    loop calls (see :class:`~stategraph.pregel._pregel.base.PregelBase`)."""

    nodes: dict[str, PregelNode]
    channels: dict[str, BaseChannel]
    input_channels: str | Sequence[str]
    output_channels: str | Sequence[str]
    interrupt_before_nodes: Sequence[str] | str
    interrupt_after_nodes: Sequence[str] | str
    checkpointer: Any
    store: Any
    retry_policy: tuple[RetryPolicy, ...]
    trigger_to_nodes: dict[str, list[str]]
    node_order: dict[str, int]
    pull_id_keys: dict[str, str]
    """Per node, the constant tail of its pull task's id key (``_task_ids.task_id_key``)."""
    step_scoped: tuple[str, ...]

    @property
    def stream_keys(self) -> str | Sequence[str]:
        """The channels whose values ``stream_mode="values"`` emits."""
        ...

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        """The graph's name, with ``suffix`` appended in the name's style."""
        ...

    def get_subgraphs(
        self, *, namespace: str | None = None, recurse: bool = False
    ) -> Iterator[tuple[str, PregelGraph]]:
        """Yield ``(namespace, graph)`` for each subgraph of the graph."""
        ...

    def task_update(self, task: Task, keys: str | Sequence[str] | None = None) -> Any:
        """What ``stream_mode="updates"`` shows for a finished task."""
        ...

    def command_update_writes(self, cmd: Command[Any]) -> list[tuple[str, Any]]:
        """Writes made by the ``update`` of a ``Command`` given as input."""
        ...

    def goto_writes(self, goto: Any) -> list[tuple[str, Any]]:
        """Writes made by the ``goto`` of a ``Command`` given as input."""
        ...

    def check_input(self, value: Any, channels: Mapping[str, BaseChannel]) -> None:
        """Raise before the input checkpoint is saved if ``value`` cannot be applied."""
        ...
