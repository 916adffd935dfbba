"""The protocol event shape and the :class:`StreamTransformer` extension point."""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from typing_extensions import NotRequired, TypedDict

if TYPE_CHECKING:
    import asyncio

__all__ = ["ProtocolEvent", "ProtocolParams", "StreamTransformer"]

logger = logging.getLogger("stategraph.stream")


class ProtocolParams(TypedDict):
    """``params`` of a protocol event."""

    namespace: list[str]
    timestamp: int
    data: Any
    interrupts: NotRequired[tuple[Any, ...]]


class ProtocolEvent(TypedDict):
    """One event of a v3 run: ``{"type": "event", "method", "params", "seq"}``.

    ``method`` is the stream mode it came from (``values``, ``updates``,
    ``messages``, ``custom``, ``tasks``, ``checkpoints``, ``debug``), ``lifecycle``,
    or a transformer channel's name; ``params.namespace`` the subgraph path (``[]``
    at the root); ``seq`` the position in the run's main event stream.
    """

    type: Literal["event"]
    method: str
    params: ProtocolParams
    seq: NotRequired[int]


class StreamTransformer:
    """Builds derived projections from a run's protocol events (LangGraph's extension point).

    Subclass it, return the projections from :meth:`init` (a dict of name to
    :class:`~stategraph.stream.StreamChannel` or any object), and observe events in
    :meth:`process` (return ``False`` to keep an event off the main event stream; every
    transformer still sees it). Pass the *class* (or any factory taking the scope) in
    ``stream_events(..., transformers=[...])`` or ``compile(transformers=[...])``: one
    instance is made per scope, the root run and each subgraph handle.

    ``_native = True`` exposes the projections as attributes of the run
    (``run.<name>``), not only in ``run.extensions``. ``required_stream_modes`` names
    the stream modes the run must produce for this transformer. Channels are closed or
    failed by the run, so ``finalize`` / ``fail`` are optional.

    Async work: override ``aprocess`` (awaited before the next transformer sees the
    event), ``afinalize`` / ``afail``, call :meth:`schedule` from ``process``, or set
    ``requires_async = True``; such transformers work only with ``astream_events``
    (``supports_sync = True`` lets one that also has sync methods run in sync runs).
    ``before_builtins = True`` puts the transformer ahead of the built-in ones.
    """

    requires_async: ClassVar[bool] = False
    supports_sync: ClassVar[bool] = False
    required_stream_modes: ClassVar[tuple[str, ...]] = ()
    before_builtins: ClassVar[bool] = False
    _native: ClassVar[bool] = False
    scope: tuple[str, ...] = ()

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        self.scope = tuple(scope)

    def init(self) -> dict[str, Any]:
        """Return this transformer's projections (name -> channel or object)."""
        raise NotImplementedError(f"{type(self).__name__} must implement init()")

    def _on_register(self, mux: Any) -> None:
        """Called once the mux registered the transformer."""

    def process(self, event: ProtocolEvent) -> bool:
        """Observe ``event``; ``False`` keeps it off the main event stream."""
        return True

    async def aprocess(self, event: ProtocolEvent) -> bool:
        """Async twin of :meth:`process` (the default calls it)."""
        return self.process(event)

    def finalize(self) -> None:
        """The run ended normally."""

    async def afinalize(self) -> None:
        """Async twin of :meth:`finalize` (the default calls it)."""
        self.finalize()

    def fail(self, err: BaseException) -> None:
        """The run ended with ``err``."""

    async def afail(self, err: BaseException) -> None:
        """Async twin of :meth:`fail` (the default calls it)."""
        self.fail(err)

    def schedule(
        self, coro: Coroutine[Any, Any, Any], *, on_error: Literal["log", "raise"] = "log"
    ) -> asyncio.Task[Any]:
        """Run ``coro`` in the background; the run waits for it before finalizing.

        ``on_error="log"`` logs its exception; ``"raise"`` fails the run with it.
        Needs a running event loop (an ``astream_events`` run).
        """
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                f"{type(self).__name__}.schedule() requires a running event loop: use the "
                "transformer with astream_events(version='v3')."
            ) from None
        task = loop.create_task(self._wrap_scheduled(coro, on_error, type(self).__name__))
        self._scheduled_task_set().add(task)
        return task

    @staticmethod
    async def _wrap_scheduled(coro: Coroutine[Any, Any, Any], on_error: str, owner: str) -> Any:
        try:
            return await coro
        except Exception:
            if on_error == "raise":
                raise
            logger.exception("Work scheduled by %s failed; the run goes on.", owner)
            return None

    def _scheduled_task_set(self) -> set[asyncio.Task[Any]]:
        tasks: set[asyncio.Task[Any]] | None = self.__dict__.get("_scheduled_tasks")
        if tasks is None:
            tasks = self.__dict__["_scheduled_tasks"] = set()
        return tasks


def needs_async(transformer: StreamTransformer) -> bool:
    """Whether the transformer uses the async lane (see :class:`StreamTransformer`)."""
    cls = type(transformer)
    if transformer.requires_async:
        return True
    return any(
        getattr(cls, name) is not getattr(StreamTransformer, name)
        for name in ("aprocess", "afinalize", "afail")
    )
