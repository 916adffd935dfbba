"""Public value types of stategraph: ``Send``, ``Command``, ``Interrupt``, policies,
snapshots and stream parts, plus :func:`interrupt`.

These are plain data objects with no dependency on the runtime, so every layer can use
them. ``interrupt()`` reaches the running task through :mod:`stategraph._context`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Generic,
    Literal,
    NamedTuple,
    Protocol,
    TypeVar,
    Union,
)

from stategraph._context import current_task

if TYPE_CHECKING:
    from stategraph._state_types import (
        GraphOutput,
        PregelExecutableTask,
        PregelTask,
        StateSnapshot,
        StateUpdate,
    )
    from stategraph._stream_parts import (
        CheckpointStreamPart,
        CustomStreamPart,
        DebugStreamPart,
        MessagesStreamPart,
        StreamPart,
        TasksStreamPart,
        UpdatesStreamPart,
        ValuesStreamPart,
    )

__all__ = [
    "All",
    "StreamMode",
    "StreamWriter",
    "Durability",
    "Checkpointer",
    "RetryPolicy",
    "default_retry_on",
    "CachePolicy",
    "TimeoutPolicy",
    "TracePolicy",
    "omit_payload",
    "Interrupt",
    "Send",
    "Command",
    "Overwrite",
    "StateSnapshot",
    "StateUpdate",
    "PregelTask",
    "PregelExecutableTask",
    "CacheKey",
    "GraphOutput",
    "ValuesStreamPart",
    "UpdatesStreamPart",
    "CustomStreamPart",
    "MessagesStreamPart",
    "TasksStreamPart",
    "CheckpointStreamPart",
    "DebugStreamPart",
    "StreamPart",
    "interrupt",
]
_STREAM_PARTS = tuple(__all__[__all__.index("ValuesStreamPart") : __all__.index("interrupt")])
"""The names :mod:`stategraph._stream_parts` defines (the typed chunks of ``version="v2"``)."""

N = TypeVar("N", covariant=True)
T = TypeVar("T")

All = Literal["*"]
"""Use ``"*"`` for ``interrupt_before``/``interrupt_after`` to mean every node."""

StreamMode = Literal["values", "updates", "checkpoints", "tasks", "debug", "messages", "custom"]
"""What ``stream()`` emits: see the streaming docs for each mode's payload."""

StreamWriter = Callable[[Any], None]
"""A function that emits a chunk on the ``custom`` stream."""

Durability = Literal["sync", "async", "exit"]
"""When checkpoints are saved: before the next step, in the background, or at exit."""


class _SaverLike(Protocol):
    """A checkpoint saver as :data:`Checkpointer` names it: any
    :class:`~stategraph.checkpoint.base.BaseCheckpointSaver` (a protocol, so that this
    vocabulary module does not import the savers)."""

    def get_tuple(self, config: dict[str, Any]) -> Any:
        """The checkpoint ``config`` names (or the thread's latest), with its writes."""
        ...

    def put(
        self, config: dict[str, Any], checkpoint: Any, metadata: Any, new_versions: Any
    ) -> dict[str, Any]:
        """Save a checkpoint; returns the config that names it."""
        ...

    def put_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save the pending writes of one task against a checkpoint."""
        ...


Checkpointer = Union[None, bool, _SaverLike]
"""``None`` inherits the parent's saver, ``False`` disables, ``True`` keeps its own."""


_NOT_RETRIED: tuple[type[BaseException], ...] = (
    ValueError,
    TypeError,
    ArithmeticError,
    ImportError,
    LookupError,
    NameError,
    SyntaxError,
    RuntimeError,
    ReferenceError,
    StopIteration,
    StopAsyncIteration,
    OSError,
)


def default_retry_on(exc: Exception) -> bool:
    """Retry connection errors and errors of unknown kind; not programming errors.

    ``ConnectionError`` is an ``OSError`` but is retried. ``ValueError``, ``TypeError``,
    ``ArithmeticError``, ``ImportError``, ``LookupError``, ``NameError``, ``SyntaxError``,
    ``RuntimeError``, ``ReferenceError``, ``StopIteration`` and other ``OSError`` s are not.
    """
    if isinstance(exc, ConnectionError):
        return True
    return not isinstance(exc, _NOT_RETRIED)


class RetryPolicy(NamedTuple):
    """How a node is retried when it raises.

    ``max_attempts`` counts the first try: ``max_attempts=3`` means at most three runs.
    ``retry_on`` is an exception class, a tuple of classes, or a predicate.
    """

    initial_interval: float = 0.5
    """Seconds to wait before the first retry."""
    backoff_factor: float = 2.0
    """Multiplier applied to the interval after each retry."""
    max_interval: float = 128.0
    """Upper bound of the interval between retries, in seconds."""
    max_attempts: int = 3
    """Total number of attempts, including the first."""
    jitter: bool = True
    """Add up to one second of random jitter to each interval."""
    retry_on: type[Exception] | Sequence[type[Exception]] | Callable[[Exception], bool] = (
        default_retry_on
    )
    """Which exceptions to retry."""


def _default_cache_key(*args: Any, **kwargs: Any) -> str | bytes:
    from stategraph._cache_key import default_cache_key

    return default_cache_key(*args, **kwargs)


@dataclass(kw_only=True)
class CachePolicy(Generic[T]):
    """Cache a node's writes by a key computed from its input."""

    key_func: Callable[..., str | bytes] = _default_cache_key
    """Computes the cache key from the node's input (default: stable hash of it)."""
    ttl: int | None = None
    """Seconds a cached result stays valid; ``None`` means forever."""


@dataclass(frozen=True, kw_only=True)
class TimeoutPolicy:
    """Per-attempt time limits of a node (async nodes only).

    ``run_timeout`` bounds one attempt's wall time; ``idle_timeout`` bounds the time
    between two progress signals (stream writes). Exceeding either raises
    :class:`~stategraph.errors.NodeTimeoutError`, which the retry policy may retry.
    """

    run_timeout: float | None = None
    idle_timeout: float | None = None
    refresh_on: Literal["auto", "heartbeat"] = "auto"

    def __post_init__(self) -> None:
        for name in ("run_timeout", "idle_timeout"):
            value = getattr(self, name)
            if hasattr(value, "total_seconds"):
                object.__setattr__(self, name, value.total_seconds())
                value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"TimeoutPolicy.{name} must be positive, got {value!r}")


def coerce_timeout(value: Any, what: str) -> TimeoutPolicy | None:
    """``None``, a ``TimeoutPolicy``, seconds or a ``timedelta`` -> a policy (or ``None``).

    A number or ``timedelta`` bounds the run time of one attempt; ``what`` names the
    setting in the error raised for anything else.
    """
    if value is None or isinstance(value, TimeoutPolicy):
        return value
    if hasattr(value, "total_seconds") or (
        isinstance(value, (int, float)) and not isinstance(value, bool)
    ):
        return TimeoutPolicy(run_timeout=value)
    raise TypeError(
        f"{what}: timeout must be a TimeoutPolicy, a number of seconds or a timedelta, "
        f"got {value!r}."
    )


@dataclass(frozen=True, kw_only=True)
class TracePolicy:
    """What a node's own trace run records (``add_node(..., trace_policy=...)``).

    ``process_inputs`` / ``process_outputs`` receive the node's real input / output and
    return the value to record instead. They apply to tracers only (LangChain tracers
    such as LangSmith's, and the OpenTelemetry spans of ``stategraph.tracing``): the
    node, the state, the stream modes, ``astream_events`` and other callback handlers
    see the real values. A processor that raises is logged and the real value is
    recorded; the run is unaffected. Not a redaction tool for child runs: runs created
    inside the node (a model call, a subgraph) record their own payloads.
    """

    process_inputs: Callable[[Any], Any] | None = None
    process_outputs: Callable[[Any], Any] | None = None


def omit_payload(_value: Any) -> dict[str, Any]:
    """A :class:`TracePolicy` processor that records nothing (an empty dict) in place of
    the value: ``TracePolicy(process_inputs=omit_payload)`` keeps the node's trace run
    and its timing without its inputs."""
    return {}


@dataclass(slots=True)
class Interrupt:
    """A value surfaced to the caller when a node calls :func:`interrupt`.

    ``id`` is deterministic: it is derived from the task's checkpoint namespace, so the
    caller can answer this interrupt with ``Command(resume={id: value})``.
    """

    value: Any
    id: str = "placeholder-id"
    response_schema: dict[str, Any] | None = None

    def __init__(
        self,
        value: Any,
        id: str = "placeholder-id",
        *,
        response_schema: dict[str, Any] | None = None,
        **legacy: Any,
    ) -> None:
        """``ns``, ``resumable`` and ``when`` are accepted from interrupts saved by
        LangGraph before 1.0: the id is then derived from ``ns`` as it was then."""
        unknown = set(legacy) - {"ns", "resumable", "when"}
        if unknown:
            raise TypeError(f"Interrupt() got unexpected arguments: {', '.join(sorted(unknown))}")
        ns = legacy.get("ns")
        if ns is not None and id == "placeholder-id":
            from xxhash import xxh3_128_hexdigest

            joined = ns if isinstance(ns, str) else "|".join(ns)
            id = xxh3_128_hexdigest(joined.encode())
        self.value = value
        self.id = id
        self.response_schema = response_schema

    @property
    def interrupt_id(self) -> str:
        """Deprecated alias of :attr:`id`."""
        from stategraph.warnings import LangGraphDeprecatedSinceV10, warn_deprecated

        warn_deprecated(
            LangGraphDeprecatedSinceV10, "`interrupt_id` is deprecated. Use `id` instead."
        )
        return self.id

    @classmethod
    def from_ns(
        cls, value: Any, ns: str, response_schema: dict[str, Any] | None = None
    ) -> Interrupt:
        """Build an interrupt whose id is the xxh3-128 hex digest of ``ns``."""
        from xxhash import xxh3_128_hexdigest

        return cls(value=value, id=xxh3_128_hexdigest(ns.encode()), response_schema=response_schema)


class Send:
    """A message to run ``node`` once with ``arg`` as its input (a PUSH task).

    Return a list of ``Send`` from a conditional edge to fan out dynamically; each packet
    becomes one task whose writes merge into the state through the reducers.
    """

    __slots__ = ("arg", "node", "timeout")

    node: str
    arg: Any
    timeout: TimeoutPolicy | None

    def __init__(self, /, node: str, arg: Any, *, timeout: Any = None) -> None:
        self.node = node
        self.arg = arg
        self.timeout = coerce_timeout(timeout, f"Send to '{node}'")

    def __hash__(self) -> int:
        return hash((self.node, repr(self.arg)))

    def __repr__(self) -> str:
        if self.timeout is not None:
            return f"Send(node={self.node!r}, arg={self.arg!r}, timeout={self.timeout!r})"
        return f"Send(node={self.node!r}, arg={self.arg!r})"

    def __eq__(self, value: object) -> bool:
        return (
            isinstance(value, Send)
            and self.node == value.node
            and self.arg == value.arg
            and self.timeout == value.timeout
        )


@dataclass(kw_only=True, slots=True)
class Command(Generic[N]):
    """Update state and/or route, or resume an interrupted graph.

    Returned from a node: ``update`` is applied like a dict return, ``goto`` adds
    dynamic edges (node name, list, ``Send`` or ``END``) *in addition to* static
    edges, and ``graph=Command.PARENT`` sends the command to the parent graph.
    Passed as input: ``resume`` answers pending interrupts (a value, or a mapping
    from interrupt id to value) and ``update``/``goto`` apply before resuming.
    """

    graph: str | None = None
    update: Any | None = None
    resume: dict[str, Any] | Any | None = None
    goto: Send | Sequence[Send | N] | N = ()

    PARENT: ClassVar[Literal["__parent__"]] = "__parent__"

    def __repr__(self) -> str:
        parts = ", ".join(
            f"{f.name}={getattr(self, f.name)!r}"
            for f in dataclasses.fields(self)
            if getattr(self, f.name) not in (None, ())
        )
        return f"Command({parts})"

    def _update_as_tuples(self) -> Sequence[tuple[str, Any]]:
        """The update as ``(key, value)`` pairs, whatever its shape."""
        update = self.update
        if update is None:
            return ()
        if isinstance(update, dict):
            return list(update.items())
        if isinstance(update, (list, tuple)) and all(
            isinstance(t, tuple) and len(t) == 2 and isinstance(t[0], str) for t in update
        ):
            return list(update)
        from stategraph._fields import object_update_items

        items = object_update_items(update)
        if items is not None:
            return items
        return [("__root__", update)]


@dataclass(slots=True)
class Overwrite:
    """Write ``value`` to a reducer channel directly, bypassing the reducer."""

    value: Any
    type: Literal["__overwrite__"] = "__overwrite__"
    """Marks the object as an overwrite (also in its serialized form)."""


class CacheKey(NamedTuple):
    """Where a task's cached writes live: namespace, key and time to live."""

    ns: tuple[str, ...]
    key: str
    ttl: int | None


def interrupt(value: Any, *, response_schema: dict[str, Any] | type | None = None) -> Any:
    """Pause the graph and surface ``value`` to the caller; return the resume value.

    The first call in a task raises :class:`~stategraph.errors.GraphInterrupt`. When the
    caller resumes with ``Command(resume=...)``, the node runs again from its start and
    each ``interrupt()`` call returns the resume value given for it, in call order.

    ``response_schema`` may be a JSON-schema dict (shown to the caller, not enforced) or
    a pydantic model, ``TypedDict`` or dataclass: then the resume value is validated and
    the validated object is returned; an invalid value raises ``pydantic.ValidationError``
    and nothing is saved, so the interrupt can be answered again.
    """
    ctx = current_task("interrupt()")
    return ctx.scratchpad.interrupt(ctx, value, response_schema)


_LAZY = dict.fromkeys(
    ("StateSnapshot", "StateUpdate", "PregelTask", "PregelExecutableTask", "GraphOutput"),
    "stategraph._state_types",
) | dict.fromkeys(_STREAM_PARTS, "stategraph._stream_parts")


def __getattr__(name: str) -> Any:
    """Snapshots, v2 output and stream parts, defined in two modules of their own that
    load on first use (the runtime needs none of them to build or run a graph).

    Loading one installs all of its module's names here, so that annotations naming
    each other (``StateSnapshot.tasks: tuple[PregelTask, ...]``) resolve in this
    module, the ``__module__`` of those classes.
    """
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'stategraph.types' has no attribute {name!r}")
    import importlib

    loaded = importlib.import_module(module)
    for each in loaded.__all__:
        globals()[each] = getattr(loaded, each)
    return globals()[name]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
