"""``DeltaChannel``: a reducer channel whose checkpoints store only what changed.

A ``BinaryOperatorAggregate`` checkpoints its whole value at every step, so a chat
history of N messages costs O(N) per step and O(N^2) over a thread. A
``DeltaChannel`` checkpoints nothing most of the time: the writes of each step are
already saved (as the pending writes of the checkpoint the step ran from), so the
value of any checkpoint is rebuilt from the nearest stored value among its ancestors
plus the writes made since, folded through the reducer. Every ``snapshot_frequency``
updates (and after an ``Overwrite``) the full value is stored again as a
:class:`~stategraph.checkpoint.serde.types._DeltaSnapshot`, which bounds the walk.

The reducer takes the current value and the *list* of one step's writes
(``reducer(value, writes) -> new value``), so a step's writes fold in one call.
It must be deterministic: the same writes replayed onto the same value give the same
result. Same public API as LangGraph's ``langgraph.channels.delta.DeltaChannel``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic

from typing_extensions import Self

from stategraph.channels.base import MISSING, Value, _ValueChannel
from stategraph.channels.binop import _operators_equal, default_value
from stategraph.errors import ErrorCode, InvalidUpdateError, create_error_message
from stategraph.types import Overwrite

__all__ = ["DeltaChannel", "overwrite_value"]

_OVERWRITE_KEY = "__overwrite__"
_NO_OVERWRITE = object()


def overwrite_value(write: Any) -> Any:
    """The value an ``Overwrite`` write carries, or a private sentinel for other writes."""
    if isinstance(write, Overwrite):
        return write.value
    if isinstance(write, dict) and len(write) == 1 and _OVERWRITE_KEY in write:
        return write[_OVERWRITE_KEY]
    return _NO_OVERWRITE


def _with_id(item: Any, convert: bool) -> Any:
    """``item`` with a fresh id if it is a message without one (a copy)."""
    import uuid

    from stategraph.messages import BaseMessage

    if isinstance(item, BaseMessage):
        if item.id is not None:
            return item
        from stategraph.messages._chunks import BaseMessageChunk, message_chunk_to_message

        if isinstance(item, BaseMessageChunk):
            item = message_chunk_to_message(item)
            if item.id is None:
                item.id = str(uuid.uuid4())
            return item
        return item._with_id(str(uuid.uuid4()))
    if convert and isinstance(item, (dict, tuple, str)):
        from stategraph.messages import convert_to_messages

        try:
            (message,) = convert_to_messages([item])
        except Exception:
            return item  # the reducer reports it, naming the channel
        if message.id is None:
            message.id = str(uuid.uuid4())
        return message
    return item


class DeltaChannel(Generic[Value], _ValueChannel[Value, Any, Any]):
    """A reducer channel stored as deltas: see the module documentation.

    ``DeltaChannel(reducer, typ=None, *, snapshot_frequency=100)``: ``reducer(value,
    writes)`` folds one step's writes (a list) into the value; ``typ`` (default
    ``list``) gives the starting value (an empty instance when it can be built);
    ``snapshot_frequency`` is the number of updates after which the full value is
    stored again. Writing ``Overwrite(x)`` replaces the value with ``x`` (writes of the
    same step before it are dropped, ordinary writes after it are ignored; two
    overwrites in one step are an error) and stores a snapshot.
    """

    __slots__ = ("overwritten", "reducer", "snapshot_frequency", "updates_since_snapshot")
    _config = ("reducer", "snapshot_frequency")

    reducer: Callable[[Any, Sequence[Any]], Any]
    snapshot_frequency: int
    updates_since_snapshot: int
    """Updates applied since the last stored value (replayed writes included)."""
    overwritten: bool
    """Whether an ``Overwrite`` was applied since the last stored value."""

    def __init__(
        self,
        reducer: Callable[[Any, Sequence[Any]], Any],
        typ: type[Value] | None = None,
        *,
        snapshot_frequency: int = 100,
    ) -> None:
        if (
            isinstance(snapshot_frequency, bool)
            or not isinstance(snapshot_frequency, int)
            or snapshot_frequency < 1
        ):
            raise ValueError(
                f"snapshot_frequency must be a positive int, got {snapshot_frequency!r}"
            )
        if not callable(reducer):
            raise TypeError(
                f"DeltaChannel needs a callable reducer(value, writes), got {reducer!r}"
            )
        super().__init__(list if typ is None else typ)
        self.reducer = reducer
        self.snapshot_frequency = snapshot_frequency
        self.updates_since_snapshot = 0
        self.overwritten = False

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, DeltaChannel)
            and other.snapshot_frequency == self.snapshot_frequency
            and _operators_equal(self.reducer, other.reducer)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        name = getattr(self.reducer, "__name__", repr(self.reducer))
        return (
            f"DeltaChannel(key={self.key!r}, reducer={name}, "
            f"snapshot_frequency={self.snapshot_frequency}, value={self.value!r})"
        )

    def _empty(self) -> Self:
        new = super()._empty()
        new.value = MISSING
        new.updates_since_snapshot = 0
        new.overwritten = False
        return new

    def copy(self) -> Self:
        """Return an independent channel with the same value and counters."""
        new = self._empty()
        new.value = self.value
        new.updates_since_snapshot = self.updates_since_snapshot
        new.overwritten = self.overwritten
        return new

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Return a new channel seeded with ``checkpoint``: a stored value, a
        ``_DeltaSnapshot`` of one, or ``MISSING`` (start from the empty value)."""
        from stategraph._delta_snapshot import _DeltaSnapshot

        new = self._empty()
        if isinstance(checkpoint, _DeltaSnapshot):
            checkpoint = checkpoint.value
        new.value = default_value(self.typ) if checkpoint is MISSING else checkpoint
        return new

    def replay_writes(self, writes: Sequence[tuple[str, str, Any]]) -> None:
        """Fold saved ``(task_id, channel, value)`` writes onto the value, in order.

        Consecutive ordinary writes fold in one reducer call; an ``Overwrite`` replaces
        the value. Used to rebuild a checkpoint's value from its ancestors' writes.
        """
        batch: list[Any] = []
        for _, _, value in writes:
            replaced = overwrite_value(value)
            if replaced is _NO_OVERWRITE:
                batch.append(value)
                continue
            if batch:
                self._fold(batch)
                batch = []
            self.value = replaced
            self.overwritten = True
        if batch:
            self._fold(batch)
        self.updates_since_snapshot += len(writes)

    def _fold(self, writes: list[Any]) -> None:
        current = self.value
        if current is MISSING:
            current = default_value(self.typ)
            if current is MISSING:
                current = None
        self.value = self.reducer(current, writes)

    def update(self, values: Sequence[Any]) -> bool:
        """Apply one step's writes; return True if there were any."""
        if not values:
            return False
        overwrite: Any = _NO_OVERWRITE
        batch: list[Any] = []
        for value in values:
            replaced = overwrite_value(value)
            if replaced is _NO_OVERWRITE:
                if overwrite is _NO_OVERWRITE:
                    batch.append(value)
                continue
            if overwrite is not _NO_OVERWRITE:
                raise InvalidUpdateError(
                    create_error_message(
                        message=f"At key '{self.key}': Can receive only one Overwrite value "
                        "per super-step. Write Overwrite(...) from a single node per step.",
                        error_code=ErrorCode.INVALID_CONCURRENT_GRAPH_UPDATE,
                    )
                )
            overwrite = replaced
        if overwrite is not _NO_OVERWRITE:
            self.value = overwrite
            self.overwritten = True
        else:
            self._fold(batch)
        self.updates_since_snapshot += 1
        return True

    def prepare_write(self, value: Any) -> Any:
        """``value`` with an id on every message in it that has none (on copies), so
        that replaying the saved write rebuilds the same messages. With the messages
        reducer (``_messages_delta_reducer``), message-like dicts, tuples and strings
        become messages first. Other values are returned as they are."""
        replaced = overwrite_value(value)
        if replaced is not _NO_OVERWRITE:
            fixed = self._with_ids(replaced)
            return value if fixed is replaced else Overwrite(fixed)
        return self._with_ids(value)

    def _with_ids(self, value: Any) -> Any:
        convert = getattr(self.reducer, "converts_messages", False)
        if isinstance(value, list):
            items = [_with_id(item, convert) for item in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return items
        return _with_id(value, convert)

    def checkpoint(self) -> Any:
        """Always ``MISSING``: the value is stored as deltas (the writes), and as a
        snapshot only when the runtime decides so (:meth:`wants_snapshot`)."""
        return MISSING

    def wants_snapshot(self) -> bool:
        """Whether the checkpoint being saved should store the full value."""
        return self.overwritten or self.updates_since_snapshot >= self.snapshot_frequency

    def snapshot(self) -> Any:
        """Return the value wrapped as a ``_DeltaSnapshot`` (``MISSING`` when empty)
        and restart the update count."""
        from stategraph._delta_snapshot import _DeltaSnapshot

        self.updates_since_snapshot = 0
        self.overwritten = False
        if self.value is MISSING:
            return MISSING
        return _DeltaSnapshot(self.value)
