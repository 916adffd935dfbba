"""The checkpoint model and the contract every checkpoint saver implements.

A *checkpoint* is the state of every channel of a graph at a super-step boundary; a
*saver* persists checkpoints per ``(thread_id, checkpoint_ns)`` plus the *pending
writes* of the step in flight. A third party writes a saver against this module alone;
the full contract (ordering, atomicity, versions, write indexes) is in
``docs/checkpointer.md``.

This module is imported by the runtime on every run, so it stays light: the default
serializer, :mod:`asyncio` and the channel classes are imported only where used.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Generic, Literal, NamedTuple, TypeVar, Union

from typing_extensions import TypedDict

from stategraph.checkpoint._delta_history import DeltaChannelHistory
from stategraph.checkpoint._ids import uuid6, uuid6_str
from stategraph.checkpoint.lease import LeaseSupport
from stategraph.checkpoint.serde.base import SerializerProtocol, maybe_add_typed_methods
from stategraph.constants import CALL_RESUME, CONF, ERROR, INTERRUPT, RESUME, RESUME_ASKED

if TYPE_CHECKING:
    from stategraph.channels.base import BaseChannel

__all__ = [
    "V",
    "ChannelVersions",
    "PendingWrite",
    "Checkpoint",
    "CheckpointMetadata",
    "CheckpointTuple",
    "SerializerProtocol",
    "BaseCheckpointSaver",
    "WRITES_IDX_MAP",
    "empty_checkpoint",
    "dump_channel_value",
    "copy_checkpoint",
    "create_checkpoint",
    "get_checkpoint_id",
    "get_checkpoint_metadata",
    "EXCLUDED_METADATA_KEYS",
    "uuid6",
    "DeltaChannelHistory",
]

V = TypeVar("V", int, float, str)
"""The type of the channel versions a saver produces (``int`` by default)."""

ChannelVersions = dict[str, Union[str, int, float]]
"""Channel name -> version. Versions of one channel only ever grow (compared with ``>``)."""

PendingWrite = tuple[str, str, Any]
"""``(task_id, channel, value)``: one write of an unfinished step saved by ``put_writes``."""

Config = dict[str, Any]
"""A run config as the saver methods take it (``{"configurable": {...}}``)."""

Filter = Union[dict[str, Any], None]
"""The metadata filter of ``list`` (``None``: every checkpoint)."""

Writes = Sequence[tuple[str, Any]]
"""The ``(channel, value)`` writes of one task, as ``put_writes`` takes them."""

SCHEDULED = "__scheduled__"

WRITES_IDX_MAP: dict[str, int] = {
    ERROR: -1,
    SCHEDULED: -2,
    INTERRUPT: -3,
    RESUME: -4,
    RESUME_ASKED: -5,
    CALL_RESUME: -6,
}
"""Fixed (negative) write indexes of the special channels.

A write to one of these channels is stored under this index instead of its position,
so that saving it again for the same task *replaces* the previous one (a task's latest
error, interrupt or resume value wins). Regular writes use their position (``0..n-1``)
and are insert-if-absent: a re-run task cannot duplicate them.
"""


class Checkpoint(TypedDict):
    """The state of a graph's channels at one super-step boundary."""

    v: int
    """Format version of this structure (currently 4)."""
    id: str
    """Unique, time-ordered id (a version-6 UUID string): newer checkpoints sort higher."""
    ts: str
    """Creation time, ISO 8601 in UTC."""
    channel_values: dict[str, Any]
    """Channel name -> the channel's checkpointed value (empty channels are absent)."""
    channel_versions: ChannelVersions
    """Channel name -> the channel's current version."""
    versions_seen: dict[str, ChannelVersions]
    """Node name -> the channel versions that node had seen when it last ran."""
    updated_channels: list[str] | None
    """Channels updated in the step that produced this checkpoint, if known."""


class CheckpointMetadata(TypedDict, total=False):
    """Information saved alongside a checkpoint. User keys from the run config's
    ``metadata`` are kept too, and ``list(filter=...)`` matches any key by equality."""

    source: Literal["input", "loop", "update", "fork"]
    """What produced the checkpoint: input, a loop step, ``update_state`` or a fork."""
    step: int
    """Step number: ``-1`` for the input checkpoint, then ``0, 1, ...``."""
    parents: dict[str, str]
    """Parent graph namespace -> checkpoint id, for checkpoints of subgraphs."""
    run_id: str
    """Id of the run that produced the checkpoint."""


class CheckpointTuple(NamedTuple):
    """A checkpoint as read back from a saver, with everything needed to resume it."""

    config: dict[str, Any]
    """``{"configurable": {"thread_id", "checkpoint_ns", "checkpoint_id"}}`` of this checkpoint."""
    checkpoint: Checkpoint
    metadata: CheckpointMetadata
    parent_config: dict[str, Any] | None = None
    """Config of the checkpoint this one was created from, if any."""
    pending_writes: list[PendingWrite] | None = None
    """Writes saved against this checkpoint by tasks of the next step."""


def dump_channel_value(serde: Any, channel: str, value: Any) -> tuple[str, bytes]:
    """``serde.dumps_typed(value)``, with errors naming the channel and the value's type.

    Savers serialize channel values and pending writes through this helper so that a
    value that cannot be saved is reported as "the value of channel 'x' ...".
    """
    from stategraph.checkpoint.serde.base import SerializationError

    try:
        result: tuple[str, bytes] = serde.dumps_typed(value)
        return result
    except Exception as exc:
        detail = getattr(exc, "detail", None) or str(exc)
        tp = type(value)
        if not isinstance(exc, (SerializationError, TypeError)):
            # a custom serializer's own error keeps its type; the note names the channel
            from stategraph._notes import add_note

            add_note(
                exc,
                f"While saving the value of channel '{channel}' "
                f"(a {tp.__module__}.{tp.__qualname__}).",
            )
            raise
        raise SerializationError(
            f"Cannot save the value of channel '{channel}' (a {tp.__module__}.{tp.__qualname__}): "
            f"{detail}",
            detail=detail,
        ) from exc


def empty_checkpoint() -> Checkpoint:
    """Return a new checkpoint with no channels (fresh id and timestamp)."""
    from stategraph import _clock

    return Checkpoint(
        v=4,
        id=uuid6_str(),
        ts=_clock.utc_now().isoformat(),
        channel_values={},
        channel_versions={},
        versions_seen={},
        updated_channels=None,
    )


def copy_checkpoint(checkpoint: Checkpoint) -> Checkpoint:
    """Return a copy of ``checkpoint`` whose dicts can be changed without touching it.

    ``channel_values`` and ``channel_versions`` are copied shallowly, ``versions_seen``
    one level deeper; the channel values themselves are shared.
    """
    updated = checkpoint.get("updated_channels")
    return Checkpoint(
        v=checkpoint["v"],
        id=checkpoint["id"],
        ts=checkpoint["ts"],
        channel_values=dict(checkpoint["channel_values"]),
        channel_versions=dict(checkpoint["channel_versions"]),
        versions_seen={k: dict(v) for k, v in checkpoint["versions_seen"].items()},
        updated_channels=None if updated is None else list(updated),
    )


def create_checkpoint(
    checkpoint: Checkpoint,
    channels: Mapping[str, BaseChannel] | None,
    step: int,
    *,
    id: str | None = None,
    updated_channels: Sequence[str] | None = None,
) -> Checkpoint:
    """Build the checkpoint that follows ``checkpoint`` after ``step``.

    It gets a new id (or ``id``; the step goes into the UUID's clock sequence) and
    timestamp, and copies of the versions. Channel
    values come from ``channels[k].checkpoint()`` for every channel that is not empty;
    with ``channels=None`` the values of ``checkpoint`` are kept.
    """
    from stategraph import _clock

    if channels is None:
        values = dict(checkpoint["channel_values"])
    else:
        from stategraph.channels.base import MISSING

        values = {}
        for name, channel in channels.items():
            value = channel.checkpoint()
            if value is not MISSING:
                values[name] = value
    return Checkpoint(
        v=4,
        id=id or uuid6_str(clock_seq=step),
        ts=_clock.utc_now().isoformat(),
        channel_values=values,
        channel_versions=dict(checkpoint["channel_versions"]),
        versions_seen={k: dict(v) for k, v in checkpoint["versions_seen"].items()},
        updated_channels=None if updated_channels is None else list(updated_channels),
    )


EXCLUDED_METADATA_KEYS: frozenset[str] = frozenset(
    {
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "checkpoint_map",
        "langgraph_step",
        "langgraph_node",
        "langgraph_triggers",
        "langgraph_path",
        "langgraph_checkpoint_ns",
    }
)
"""Config keys that are never copied into checkpoint metadata."""


def _plain_scalar(value: Any) -> str | int | float | bool | None:
    """``value`` as a plain ``str``/``int``/``float``/``bool`` (enums become their
    value), or ``None`` when it is not a scalar."""
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return None


def get_checkpoint_metadata(
    config: Mapping[str, Any], metadata: CheckpointMetadata
) -> CheckpointMetadata:
    """Return ``metadata`` plus the scalar user keys of ``config["metadata"]`` and
    ``config["configurable"]`` (what savers store on ``put``).

    Keys already in ``metadata`` win, then ``config["metadata"]``, then
    ``config["configurable"]``. Keys starting with ``__``, the keys in
    :data:`EXCLUDED_METADATA_KEYS` and values that are not ``str``/``int``/``float``/
    ``bool`` are left out, so ``list(filter={"user_id": ...})`` finds checkpoints by
    the config they ran with.
    """
    merged: dict[str, Any] = dict(metadata)
    for source in (config.get("metadata"), config.get(CONF)):
        if not source:
            continue
        for key, value in source.items():
            if (
                not isinstance(key, str)
                or key in merged
                or key.startswith("__")
                or key in EXCLUDED_METADATA_KEYS
            ):
                continue
            plain = _plain_scalar(value)
            if plain is not None:
                merged[key] = plain
    return merged  # type: ignore[return-value]


def get_checkpoint_id(config: Mapping[str, Any]) -> str | None:
    """Return ``config["configurable"]["checkpoint_id"]``, or ``None`` when absent."""
    return (config.get(CONF) or {}).get("checkpoint_id")


_List = list  # ``list`` is shadowed by the method of the same name inside the class.


class _DefaultSerde:
    """Class-level default for ``serde``: a saver whose ``__init__`` does not call
    ``super().__init__()`` still gets a ``JsonPlusSerializer`` on first use."""

    def __get__(self, obj: object, owner: type | None = None) -> SerializerProtocol:
        from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        serde = JsonPlusSerializer()
        attrs = getattr(obj, "__dict__", None)
        if attrs is not None:
            attrs["serde"] = serde
        return serde


class BaseCheckpointSaver(LeaseSupport, Generic[V]):
    """Base class of checkpoint savers: subclass it and implement the methods.

    Implement the sync methods (``get_tuple``, ``list``, ``put``, ``put_writes``,
    ``delete_thread``), the async ones (``aget_tuple``, ``alist``, ``aput``,
    ``aput_writes``, ``adelete_thread``), or both. When only the sync ones exist, the
    async twins run them on a worker thread (:func:`asyncio.to_thread`); when only the
    async ones exist, the sync methods raise an error that says to use the ``a``
    methods. ``get_next_version`` decides the version scheme (ints by default).

    Every method receives a run config; ``config["configurable"]`` carries
    ``thread_id``, ``checkpoint_ns`` (default ``""``) and optionally ``checkpoint_id``.
    See ``docs/checkpointer.md`` for the guarantees a saver must give. The per-thread
    lease primitives (``lease_*``) come from
    :class:`~stategraph.checkpoint.lease.LeaseSupport`.
    """

    if TYPE_CHECKING:
        serde: SerializerProtocol
        """Serializer used for checkpoints, metadata, channel values and writes."""
    else:
        serde = _DefaultSerde()

    def __init__(self, *, serde: SerializerProtocol | None = None) -> None:
        """Use ``serde`` or, by default, a new ``JsonPlusSerializer``.

        A serializer with only ``dumps``/``loads`` is wrapped to get the typed methods.
        """
        if serde is None:
            from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer

            serde = JsonPlusSerializer()
        self.serde = maybe_add_typed_methods(serde)

    # -- helpers ---------------------------------------------------------------

    def _overrides(self, name: str) -> bool:
        """Whether the concrete class implements method ``name`` itself, or its hook
        ``_name`` (see "implementation hooks" below)."""
        hook = f"_{name}"
        names = (name, hook) if hasattr(BaseCheckpointSaver, hook) else (name,)
        return any(getattr(type(self), n) is not getattr(BaseCheckpointSaver, n) for n in names)

    def _missing_sync(self, name: str) -> NotImplementedError:
        cls = type(self).__name__
        if self._overrides(f"a{name}"):
            return NotImplementedError(
                f"{cls} is async-only: call `await saver.a{name}(...)` instead of "
                f"`saver.{name}(...)` (for a graph: use ainvoke/astream instead of "
                "invoke/stream)."
            )
        return NotImplementedError(f"{cls} must implement {name}() or a{name}().")

    def _missing_async(self, name: str) -> NotImplementedError:
        return NotImplementedError(f"{type(self).__name__} must implement {name}() or a{name}().")

    # -- sync API --------------------------------------------------------------

    def get(self, config: dict[str, Any]) -> Checkpoint | None:
        """Return the checkpoint named by ``config`` (or the latest one), or ``None``."""
        saved = self.get_tuple(config)
        return saved.checkpoint if saved is not None else None

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """Return the checkpoint tuple named by ``config``, or ``None`` if there is none.

        With ``checkpoint_id`` in ``config["configurable"]`` return that checkpoint of
        ``(thread_id, checkpoint_ns)``; without it return the latest one (highest id).
        The tuple carries the pending writes saved against the checkpoint.
        """
        raise self._missing_sync("get_tuple")

    def list(
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Yield saved checkpoints, newest (highest id) first.

        ``config`` narrows the search: without ``thread_id`` every thread is listed;
        without the ``checkpoint_ns`` key every namespace, with it only that one; with
        ``checkpoint_id`` only that checkpoint. ``filter`` keeps checkpoints whose
        metadata has every given key equal to the given value, ``before`` (a config
        with a ``checkpoint_id``) keeps checkpoints with a smaller id, and ``limit``
        caps the number yielded.
        """
        return self._list(config, filter, before, limit)

    def put(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        """Save ``checkpoint`` with ``metadata`` and return the config that names it.

        ``config["configurable"]["checkpoint_id"]``, when present, is the id of the
        *parent* checkpoint. ``new_versions`` lists the channels whose version changed
        since the parent: only their values need to be stored again. The metadata
        stored is ``get_checkpoint_metadata(config, metadata)``. Returns
        ``{"configurable": {"thread_id", "checkpoint_ns", "checkpoint_id"}}``.
        """
        return self._put(config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save the ``(channel, value)`` writes of task ``task_id`` against the
        checkpoint named by ``config`` (its ``checkpoint_id``).

        Each write is stored under index ``WRITES_IDX_MAP.get(channel, position)``:
        special-channel writes replace an earlier one of the same task and index,
        regular writes are kept only if none exists yet (first write wins).
        """
        self._put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and value of ``thread_id`` (all namespaces)."""
        raise self._missing_sync("delete_thread")

    # -- async API -------------------------------------------------------------

    async def aget(self, config: dict[str, Any]) -> Checkpoint | None:
        """Async twin of :meth:`get`."""
        saved = await self.aget_tuple(config)
        return saved.checkpoint if saved is not None else None

    async def aget_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """Async twin of :meth:`get_tuple`."""
        if not self._overrides("get_tuple"):
            raise self._missing_async("get_tuple")
        import asyncio

        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: Config | None,
        *,
        filter: Filter = None,
        before: Config | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Async twin of :meth:`list` (an async iterator)."""
        async for item in self._alist(config, filter, before, limit):
            yield item

    async def aput(
        self,
        config: Config,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        """Async twin of :meth:`put`."""
        return await self._aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: Config,
        writes: Writes,
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Async twin of :meth:`put_writes`."""
        await self._aput_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """Async twin of :meth:`delete_thread`."""
        if not self._overrides("delete_thread"):
            raise self._missing_async("delete_thread")
        import asyncio

        await asyncio.to_thread(self.delete_thread, thread_id)

    # -- implementation hooks ------------------------------------------------------
    # ``list``/``put``/``put_writes`` and their ``a`` twins call these, with the
    # arguments as given: a saver implements the hooks (or overrides the public
    # methods themselves, as LangGraph's savers do). By default the sync hooks raise
    # and the async ones run the sync methods on a worker thread.

    def _list(
        self, config: Config | None, filter: Filter, before: Config | None, limit: int | None
    ) -> Iterator[CheckpointTuple]:
        """What :meth:`list` yields."""
        raise self._missing_sync("list")

    def _put(
        self, config: Config, checkpoint: Checkpoint, meta: CheckpointMetadata, new: ChannelVersions
    ) -> dict[str, Any]:
        """:meth:`put` (``meta``: its ``metadata``, ``new``: its ``new_versions``)."""
        raise self._missing_sync("put")

    def _put_writes(self, config: Config, writes: Writes, task_id: str, task_path: str) -> None:
        """:meth:`put_writes`."""
        raise self._missing_sync("put_writes")

    async def _alist(
        self, config: Config | None, filter: Filter, before: Config | None, limit: int | None
    ) -> AsyncIterator[CheckpointTuple]:
        """What :meth:`alist` yields: by default :meth:`list`'s items, read on a worker
        thread 64 at a time."""
        if not self._overrides("list"):
            raise self._missing_async("list")
        import asyncio
        import itertools

        it = self.list(config, filter=filter, before=before, limit=limit)

        def take() -> _List[CheckpointTuple]:
            return _List(itertools.islice(it, 64))

        while True:
            chunk = await asyncio.to_thread(take)
            for item in chunk:
                yield item
            if len(chunk) < 64:
                return

    async def _aput(
        self, config: Config, checkpoint: Checkpoint, meta: CheckpointMetadata, new: ChannelVersions
    ) -> dict[str, Any]:
        """:meth:`aput`: by default :meth:`put` on a worker thread."""
        if not self._overrides("put"):
            raise self._missing_async("put")
        import asyncio

        return await asyncio.to_thread(self.put, config, checkpoint, meta, new)

    async def _aput_writes(
        self, config: Config, writes: Writes, task_id: str, task_path: str
    ) -> None:
        """:meth:`aput_writes`: by default :meth:`put_writes` on a worker thread."""
        if not self._overrides("put_writes"):
            raise self._missing_async("put_writes")
        import asyncio

        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    # -- delta channels ----------------------------------------------------------

    def get_delta_channel_history(
        self, *, config: dict[str, Any], channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Return, per channel in ``channels``, what rebuilds its value at the
        checkpoint ``config`` names: ``{"writes": [...], "seed": value}``.

        ``seed`` is the nearest value stored for the channel at that checkpoint or an
        ancestor (absent when none is: start empty); ``writes`` are the
        ``(task_id, channel, value)`` writes made to it since, oldest first, in the
        order the runtime applied them. Used by the runtime for ``DeltaChannel``
        values. This implementation walks parents with :meth:`get_tuple`; savers may
        override it with a faster one.
        """
        from stategraph.checkpoint import _delta_history as dh

        gen = dh.walk(self.get_tuple(config), channels)
        value: Any = None
        try:
            while True:
                kind, arg = gen.send(value)
                value = self.get_tuple(arg) if kind == dh.TUPLE else self._task_paths(arg)
        except StopIteration as stop:
            result: Mapping[str, DeltaChannelHistory] = stop.value
            return result

    async def aget_delta_channel_history(
        self, *, config: dict[str, Any], channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Async twin of :meth:`get_delta_channel_history`."""
        from stategraph.checkpoint import _delta_history as dh

        gen = dh.walk(await self.aget_tuple(config), channels)
        value: Any = None
        try:
            while True:
                kind, arg = gen.send(value)
                if kind == dh.TUPLE:
                    value = await self.aget_tuple(arg)
                else:
                    value = await self._atask_paths(arg)
        except StopIteration as stop:
            result: Mapping[str, DeltaChannelHistory] = stop.value
            return result

    def _task_paths(self, saved: CheckpointTuple) -> Mapping[str, str]:
        """Task id -> saved task path of the pending writes of ``saved`` (empty when
        the saver does not keep paths: writes then keep their saved order)."""
        return {}

    async def _atask_paths(self, saved: CheckpointTuple) -> Mapping[str, str]:
        """Async twin of :meth:`_task_paths`."""
        return self._task_paths(saved)

    # -- versions --------------------------------------------------------------

    def batch(self) -> AbstractContextManager[None]:
        """A block whose ``put``/``put_writes`` calls (on the calling thread) the saver
        may save in one transaction, each call still applied or failing on its own,
        in order. The runtime's background saver thread wraps the calls it finds
        queued together in it. This default does nothing special; ``SqliteSaver``
        commits the block once."""
        return nullcontext()

    def get_next_version(self, current: V | None, channel: None) -> V:
        """Return the version that follows ``current`` (``None`` = no version yet).

        The default scheme counts with ints: ``None -> 1``, ``n -> n + 1``. The
        runtime compares versions with ``>``; the result must be greater than
        ``current``. Savers that use string versions override this method.
        """
        if current is None:
            return 1  # type: ignore[return-value]
        if isinstance(current, str):
            raise TypeError(
                f"{type(self).__name__}.get_next_version got the string version "
                f"{current!r}: the default scheme counts with ints. A saver that uses "
                "string versions must override get_next_version()."
            )
        return int(current) + 1
