"""What every runnable graph offers, and the stream sink type (LangGraph's
``langgraph.pregel.protocol`` path).

:class:`PregelProtocol` is the surface shared by a local graph
(:class:`~stategraph.pregel.Pregel`) and any other object that behaves like one:
running it (``invoke``/``stream`` and their async twins), reading and editing a
thread's state, drawing it and binding config. Code that accepts "a graph" should
annotate with it, so a class of its own that implements these methods can stand in.
It is a :class:`typing.Protocol`: a class matches it by having the methods (checked by
type checkers, and by ``isinstance`` for the names); a class that names it as a base
must implement every method before it can be instantiated.

:class:`StreamProtocol` is a stream sink: a callable that takes one
:data:`StreamChunk` ``(namespace, mode, payload)``, with the stream modes it wants.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from typing_extensions import Self

from stategraph.types import StateSnapshot, StateUpdate

if TYPE_CHECKING:
    from stategraph.drawing._graph import Graph

__all__ = ["PregelProtocol", "StreamProtocol", "StreamChunk"]

StreamChunk = tuple[tuple[str, ...], str, Any]
"""One chunk of a run's output: ``(namespace, mode, payload)``; the namespace is ``()``
for the root graph and names the subgraph task path otherwise."""


@runtime_checkable
class PregelProtocol(Protocol):
    """A runnable graph: run it, read and edit its threads' state, draw it.

    Both :class:`~stategraph.pregel.Pregel` (and every compiled ``StateGraph``) and
    any class that implements these methods match it.
    """

    @abstractmethod
    def with_config(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> Self:
        """A copy of the graph whose runs merge ``config`` into theirs."""

    @abstractmethod
    def get_graph(
        self, config: Mapping[str, Any] | None = None, *, xray: int | bool = False
    ) -> Graph:
        """The drawable graph (nodes and edges); ``xray`` expands subgraphs."""

    @abstractmethod
    async def aget_graph(
        self, config: Mapping[str, Any] | None = None, *, xray: int | bool = False
    ) -> Graph:
        """Async twin of :meth:`get_graph`."""

    @abstractmethod
    def get_state(self, config: Mapping[str, Any], *, subgraphs: bool = False) -> StateSnapshot:
        """The state of the thread ``config`` names, at its latest checkpoint or the one
        ``checkpoint_id`` names."""

    @abstractmethod
    async def aget_state(
        self, config: Mapping[str, Any], *, subgraphs: bool = False
    ) -> StateSnapshot:
        """Async twin of :meth:`get_state`."""

    @abstractmethod
    def get_state_history(
        self,
        config: Mapping[str, Any],
        *,
        filter: dict[str, Any] | None = None,
        before: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[StateSnapshot]:
        """The thread's snapshots, newest first (``filter`` matches metadata, ``before``
        names a checkpoint, ``limit`` caps the count)."""

    @abstractmethod
    def aget_state_history(
        self,
        config: Mapping[str, Any],
        *,
        filter: dict[str, Any] | None = None,
        before: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[StateSnapshot]:
        """Async twin of :meth:`get_state_history`."""

    @abstractmethod
    def update_state(
        self,
        config: Mapping[str, Any],
        values: dict[str, Any] | Any | None,
        as_node: str | None = None,
        task_id: str | None = None,
    ) -> dict[str, Any]:
        """Write ``values`` to the thread as if node ``as_node`` returned them; returns
        the config of the new checkpoint."""

    @abstractmethod
    async def aupdate_state(
        self,
        config: Mapping[str, Any],
        values: dict[str, Any] | Any | None,
        as_node: str | None = None,
        task_id: str | None = None,
    ) -> dict[str, Any]:
        """Async twin of :meth:`update_state`."""

    @abstractmethod
    def bulk_update_state(
        self, config: Mapping[str, Any], supersteps: Sequence[Sequence[StateUpdate]]
    ) -> dict[str, Any]:
        """Apply several updates, one checkpoint per superstep; returns the last config."""

    @abstractmethod
    async def abulk_update_state(
        self, config: Mapping[str, Any], supersteps: Sequence[Sequence[StateUpdate]]
    ) -> dict[str, Any]:
        """Async twin of :meth:`bulk_update_state`."""

    @abstractmethod
    def stream(
        self, input: Any, config: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """Run the graph on ``input``, yielding chunks of the asked stream modes."""

    @abstractmethod
    def astream(
        self, input: Any, config: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """Async twin of :meth:`stream`."""

    @abstractmethod
    def invoke(self, input: Any, config: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """Run the graph on ``input`` to the end (or an interrupt); returns its output."""

    @abstractmethod
    async def ainvoke(
        self, input: Any, config: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        """Async twin of :meth:`invoke`."""


class StreamProtocol:
    """A stream sink: called with each :data:`StreamChunk` of the ``modes`` it wants.

    ``StreamProtocol(queue.put, {"values", "updates"})`` forwards chunks to ``queue``.
    """

    __slots__ = ("_send", "modes")

    def __init__(self, send: Callable[[StreamChunk], None], modes: set[str]) -> None:
        self._send = send
        self.modes = modes
        """The stream modes this sink receives."""

    def __call__(self, chunk: StreamChunk) -> None:
        """Hand one chunk to the sink."""
        self._send(chunk)

    def __repr__(self) -> str:
        return f"StreamProtocol({self._send!r}, modes={sorted(self.modes)!r})"
