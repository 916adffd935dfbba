"""The channel contract every state container of the Pregel runtime implements.

A channel holds one value (or nothing), takes the writes of one super-step at a time
through :meth:`BaseChannel.update`, and turns itself into a serializable checkpoint and
back. Channels know nothing of graphs, tasks or savers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Final, Generic, TypeVar

from typing_extensions import Self

from stategraph.errors import EmptyChannelError

__all__ = ["BaseChannel", "MISSING", "Value", "Update", "Checkpoint"]

Value = TypeVar("Value")
Update = TypeVar("Update")
Checkpoint = TypeVar("Checkpoint")


class _MissingType:
    """Type of :data:`MISSING`; there is exactly one instance."""

    __slots__ = ()
    _instance: _MissingType | None = None

    def __new__(cls) -> _MissingType:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        # Pickling, copy() and deepcopy() all give back the singleton.
        return "MISSING"


MISSING: Final[Any] = _MissingType()
"""Sentinel meaning "no value": what an empty channel checkpoints to and what
``from_checkpoint`` turns back into an empty channel. Compare with ``is``."""


class BaseChannel(Generic[Value, Update, Checkpoint], ABC):
    """A named state container updated once per super-step.

    ``typ`` is the type annotation the channel was built from (informational, also used
    to build default values); ``key`` is the channel's name, assigned by the runtime
    when left empty, and appears in every error message the channel raises.
    """

    __slots__ = ("key", "typ")

    key: str
    typ: Any

    _config: ClassVar[tuple[str, ...]] = ()
    """The attributes besides ``typ`` and ``key`` that configure the channel (as opposed
    to its state): what :meth:`_empty` carries over to a new channel."""

    def __init__(self, typ: Any, key: str = "") -> None:
        self.typ = typ
        self.key = key

    def _empty(self) -> Self:
        """A new channel of this class with this one's configuration and no state yet.

        ``__init__`` is not run (it may rebuild what the configuration already holds):
        the caller sets the state attributes before the channel is used.
        """
        cls = self.__class__
        new = cls.__new__(cls)
        new.typ = self.typ
        new.key = self.key
        for name in self._config:
            setattr(new, name, getattr(self, name))
        return new

    @property
    @abstractmethod
    def ValueType(self) -> Any:
        """The type of the value :meth:`get` returns."""

    @property
    @abstractmethod
    def UpdateType(self) -> Any:
        """The type of one value passed to :meth:`update`."""

    def copy(self) -> Self:
        """Return an independent channel with the same configuration and value.

        Updating the copy never changes this channel and vice versa. Values themselves
        are shared, not deep-copied.
        """
        return self.from_checkpoint(self.checkpoint())

    def checkpoint(self) -> Checkpoint | Any:
        """Return a serializable snapshot of the value, or :data:`MISSING` when empty."""
        try:
            return self.get()
        except EmptyChannelError:
            return MISSING

    @abstractmethod
    def from_checkpoint(self, checkpoint: Checkpoint | Any) -> Self:
        """Return a new channel with this one's configuration, restored from ``checkpoint``.

        ``MISSING`` gives an empty channel. This channel is left untouched.
        """

    @abstractmethod
    def get(self) -> Value:
        """Return the current value; raise :class:`EmptyChannelError` when there is none."""

    def is_available(self) -> bool:
        """Return True if :meth:`get` would return a value."""
        try:
            self.get()
        except EmptyChannelError:
            return False
        return True

    @abstractmethod
    def update(self, values: Sequence[Update]) -> bool:
        """Apply the writes of one super-step (possibly none); return True if changed."""

    def consume(self) -> bool:
        """Called after a task subscribed to this channel ran; return True if changed."""
        return False

    def finish(self) -> bool:
        """Called when the graph is about to finish; return True if changed."""
        return False

    def __repr__(self) -> str:
        try:
            value = self.checkpoint()
        except Exception:  # repr must never raise
            value = "<unavailable>"
        return f"{type(self).__name__}(key={self.key!r}, value={value!r})"


class _ValueChannel(BaseChannel[Value, Update, Checkpoint]):
    """Base of the channels whose state is one ``value`` (``MISSING`` when empty).

    Both the value and a write are of type ``typ``; the value is saved as it is and
    shared, not copied, by :meth:`copy`. Subclasses write :meth:`update` and override
    what they store differently.
    """

    __slots__ = ("value",)

    value: Any

    def __init__(self, typ: Any, key: str = "") -> None:
        super().__init__(typ, key)
        self.value = MISSING

    @property
    def ValueType(self) -> Any:
        """The type of the stored value."""
        return self.typ

    @property
    def UpdateType(self) -> Any:
        """The type of a written value."""
        return self.typ

    def copy(self) -> Self:
        """Return an independent channel holding the same value."""
        new = self._empty()
        new.value = self.value
        return new

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Return a new channel holding ``checkpoint`` (empty for ``MISSING``)."""
        # (_empty inlined: a run makes one channel per state key and per node, so for
        # a wide state or a long graph this call is a per-run cost)
        cls = self.__class__
        new = cls.__new__(cls)
        new.typ = self.typ
        new.key = self.key
        config = self._config
        if config:  # (most value channels have none: the loop is skipped)
            for name in config:
                setattr(new, name, getattr(self, name))
        new.value = checkpoint
        return new

    def get(self) -> Value:
        """Return the value; raise :class:`EmptyChannelError` when empty."""
        if self.value is MISSING:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        """Return True if the channel holds a value."""
        return self.value is not MISSING

    def checkpoint(self) -> Any:
        """Return the value, or ``MISSING`` when empty."""
        return self.value

    def _clear(self) -> bool:
        """Empty the channel (a step that wrote nothing to a per-step channel); return
        True if that changed anything."""
        if self.value is MISSING:
            return False
        self.value = MISSING
        return True
