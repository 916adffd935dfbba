"""The :class:`Runtime` object a node can receive: context, store, writer, previous."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from stategraph._context import current_task

if TYPE_CHECKING:
    from stategraph.store.base import BaseStore
    from stategraph.types import StreamWriter

__all__ = ["Runtime", "get_runtime", "ExecutionInfo", "ServerInfo", "RunControl", "SignalDrain"]

ContextT = TypeVar("ContextT")


def _no_op_writer(_chunk: Any) -> None:
    """Stream writer used when no ``custom`` stream is being consumed."""


def _no_op_heartbeat() -> None:
    """Heartbeat used when the node has no idle timeout."""


@dataclass(frozen=True, slots=True)
class ExecutionInfo:
    """Read-only facts about the node attempt that is running.

    ``checkpoint_id`` is the checkpoint the step's tasks were prepared from;
    ``checkpoint_ns`` the task's namespace (``node:task_id``, nested with ``|`` in
    subgraphs); ``node_attempt`` counts attempts from 1 (retries add one);
    ``node_first_attempt_time`` is the ``time.time()`` of the first attempt.
    """

    checkpoint_id: str
    checkpoint_ns: str
    task_id: str
    thread_id: str | None = None
    run_id: str | None = None
    node_attempt: int = 1
    node_first_attempt_time: float | None = None

    def patch(self, **changes: Any) -> ExecutionInfo:
        """Return a copy with ``changes`` applied; this object is unchanged."""
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """Who runs the graph when it is served: assistant, graph and authenticated user.

    Built from the ``assistant_id``, ``graph_id`` and ``langgraph_auth_user`` keys of
    ``config["configurable"]`` (set by a server); ``None`` on ``Runtime`` otherwise.
    """

    assistant_id: str
    graph_id: str
    user: Any = None


class RunControl:
    """Lets code outside a run ask it to stop cleanly at its next step boundary.

    Pass one to ``invoke``/``stream``/``ainvoke``/``astream`` as ``control=``; the
    running nodes can also reach it as ``runtime.control``. After
    :meth:`request_drain` the run finishes the step in flight, saves its checkpoint and
    raises :class:`~stategraph.errors.GraphDrained`; ``invoke(None, config)`` later
    continues from there. A drain asked for during the last step lets the run finish
    normally. Safe to call from any thread or signal handler (one attribute write).
    Use one control per run: a drained control stays drained.
    """

    __slots__ = ("_drain_reason",)

    def __init__(self) -> None:
        self._drain_reason: str | None = None

    @property
    def drain_requested(self) -> bool:
        """Whether :meth:`request_drain` was called."""
        return self._drain_reason is not None

    @property
    def drain_reason(self) -> str | None:
        """The reason given to the first :meth:`request_drain` call, or ``None``."""
        return self._drain_reason

    def request_drain(self, reason: str = "shutdown") -> None:
        """Ask the run to stop at its next step boundary (the first reason is kept)."""
        if self._drain_reason is None:
            self._drain_reason = str(reason)

    def __repr__(self) -> str:
        return f"RunControl(drain_reason={self._drain_reason!r})"


@dataclass(frozen=True, slots=True, kw_only=True)
class Runtime(Generic[ContextT]):
    """Run-scoped dependencies handed to nodes that declare a ``runtime`` parameter.

    ``context`` is the object passed as ``invoke(..., context=...)`` (typed by the
    graph's ``context_schema``); ``store`` the graph's long-term memory store;
    ``stream_writer`` emits ``custom`` stream chunks; ``previous`` is the value the
    functional API's entrypoint returned on the previous run of the thread;
    ``heartbeat()`` keeps a node with an idle timeout alive.
    """

    context: ContextT = field(default=None)  # type: ignore[assignment]
    store: BaseStore | None = None
    stream_writer: StreamWriter = _no_op_writer
    previous: Any = None
    heartbeat: Callable[[], None] = _no_op_heartbeat
    """Record progress for the node's ``TimeoutPolicy.idle_timeout`` (long work that
    writes nothing should call it now and then)."""
    execution_info: ExecutionInfo | None = None
    """The running node attempt (ids, namespace, attempt number); ``None`` outside a node."""
    server_info: ServerInfo | None = None
    """The assistant, graph and user when a server runs the graph, else ``None``."""
    control: RunControl | None = None
    """The run's :class:`RunControl` (request a graceful drain from inside a node)."""

    def override(self, **overrides: Any) -> Runtime[ContextT]:
        """Return a copy with the given fields replaced; this runtime is unchanged."""
        return replace(self, **overrides)

    def merge(self, other: Runtime[ContextT]) -> Runtime[ContextT]:
        """Return a copy where every field set (non-default) on ``other`` wins."""
        return Runtime(
            context=other.context if other.context is not None else self.context,
            store=other.store or self.store,
            stream_writer=(
                other.stream_writer
                if other.stream_writer is not _no_op_writer
                else self.stream_writer
            ),
            previous=other.previous if other.previous is not None else self.previous,
            heartbeat=(
                other.heartbeat if other.heartbeat is not _no_op_heartbeat else self.heartbeat
            ),
            execution_info=other.execution_info or self.execution_info,
            server_info=other.server_info or self.server_info,
            control=other.control or self.control,
        )


DEFAULT_RUNTIME: Runtime[Any] = Runtime()


def get_runtime(context_schema: type[ContextT] | None = None) -> Runtime[ContextT]:
    """The :class:`Runtime` of the running task.

    ``context_schema`` only helps type checkers; it is not validated here.
    """
    runtime: Runtime[ContextT] = current_task("get_runtime()").runtime
    return runtime


class SignalDrain:
    """Turns process signals (SIGTERM by default) into graceful drains of runs.

    For worker processes: a run started with ``control=drain.control()`` stops at its
    next step boundary once the process receives one of ``signals``, saves its
    checkpoint and raises :class:`~stategraph.errors.GraphDrained`; another worker
    continues the thread later with ``invoke(None, config)``. Controls handed out after
    the signal arrived are drained from the start, so no new work begins.

    Use it as a context manager in the main thread (Python delivers signals there); the
    previous handlers come back on exit::

        with SignalDrain() as drain:
            while not drain.received:
                job = next_job()
                graph.invoke(job.input, job.config, control=drain.control())

    The handler only writes one attribute, so it is safe whatever the process is doing.
    """

    def __init__(self, signals: Sequence[int] | None = None) -> None:
        import signal as _signal

        self.signals: tuple[int, ...] = (
            tuple(signals) if signals is not None else (_signal.SIGTERM,)
        )
        if not self.signals:
            raise ValueError("SignalDrain needs at least one signal, e.g. signal.SIGTERM.")
        self.received: str | None = None
        self._previous: dict[int, Any] = {}

    def control(self) -> RunControl:
        """A new :class:`RunControl` that drains when a signal arrives (or already has)."""
        return _SignalControl(self)

    def _handle(self, signum: int, frame: Any) -> None:
        import signal as _signal

        if self.received is None:
            self.received = _signal.Signals(signum).name

    def install(self) -> SignalDrain:
        """Install the handlers (main thread only); returns ``self``."""
        import signal as _signal
        import threading

        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError(
                "SignalDrain.install() must run in the main thread: Python delivers "
                "signals only there. Install it at worker start-up, before starting threads."
            )
        for sig in self.signals:
            self._previous[sig] = _signal.signal(sig, self._handle)
        return self

    def uninstall(self) -> None:
        """Restore the handlers that were in place before :meth:`install`."""
        import signal as _signal

        previous, self._previous = self._previous, {}
        for sig, handler in previous.items():
            _signal.signal(sig, handler)

    def __enter__(self) -> SignalDrain:
        return self.install()

    def __exit__(self, *exc: Any) -> None:
        self.uninstall()


class _SignalControl(RunControl):
    """A :class:`RunControl` that also drains when its :class:`SignalDrain` fired."""

    __slots__ = ("_source",)

    def __init__(self, source: SignalDrain) -> None:
        super().__init__()
        self._source = source

    @property
    def drain_requested(self) -> bool:
        return self._drain_reason is not None or self._source.received is not None

    @property
    def drain_reason(self) -> str | None:
        return self._drain_reason if self._drain_reason is not None else self._source.received
