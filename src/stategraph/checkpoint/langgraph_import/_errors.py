"""Why an import from LangGraph stopped, and where: the source thread, checkpoint and channel.

Every failure of :func:`~stategraph.checkpoint.langgraph_import.import_langgraph` is a
:class:`LangGraphImportError` raised before anything was written, or after what was
written had been removed again (see the module docstring of the package):

* :class:`LangGraphSourceError`: the source is not a LangGraph checkpoint database
  that can be read (not SQLite, a table missing, a column of the wrong type...);
* :class:`LangGraphNotFound`: a thread asked for with ``threads=`` is not there, or the
  PostgreSQL source cannot be reached;
* :class:`LangGraphValueError`: a stored value cannot be loaded safely or converted
  (also a :class:`~stategraph.checkpoint.serde.base.DeserializationError`);
* :class:`LangGraphTargetError`: the target refused the import (a thread already
  there with other checkpoints) or failed while it was written.
"""

from __future__ import annotations

from dataclasses import dataclass

from stategraph.checkpoint.serde.base import DeserializationError

__all__ = [
    "Where",
    "LangGraphImportError",
    "LangGraphSourceError",
    "LangGraphNotFound",
    "LangGraphValueError",
    "LangGraphTargetError",
]


@dataclass(frozen=True)
class Where:
    """A place in the source: thread, namespace, checkpoint, then what inside it."""

    thread_id: str | None = None
    checkpoint_ns: str | None = None
    checkpoint_id: str | None = None
    channel: str | None = None
    """The channel of a value or pending write."""
    part: str | None = None
    """What else: ``"metadata"``, ``"checkpoint body"``, ``"pending write 3 of task t"``."""

    def at(
        self,
        *,
        channel: str | None = None,
        part: str | None = None,
    ) -> Where:
        """This place, narrowed to a channel or a part."""
        return Where(
            self.thread_id,
            self.checkpoint_ns,
            self.checkpoint_id,
            channel if channel is not None else self.channel,
            part if part is not None else self.part,
        )

    def __str__(self) -> str:
        parts = []
        if self.thread_id is not None:
            parts.append(f"thread {self.thread_id!r}")
        if self.checkpoint_ns:
            parts.append(f"namespace {self.checkpoint_ns!r}")
        if self.checkpoint_id is not None:
            parts.append(f"checkpoint {self.checkpoint_id!r}")
        if self.part is not None:
            parts.append(self.part)
        if self.channel is not None:
            parts.append(f"channel {self.channel!r}")
        return ", ".join(parts) or "the source"


class LangGraphImportError(ValueError):
    """An import from LangGraph failed; nothing it wrote is left in the target.

    ``where`` names the source thread, namespace, checkpoint and channel concerned (the
    fields are ``None`` when the failure is not about one of them).
    """

    def __init__(self, message: str, where: Where | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where or Where()

    @property
    def thread_id(self) -> str | None:
        """The source thread concerned, if any."""
        return self.where.thread_id

    @property
    def checkpoint_id(self) -> str | None:
        """The source checkpoint concerned, if any."""
        return self.where.checkpoint_id

    @property
    def channel(self) -> str | None:
        """The channel concerned, if any."""
        return self.where.channel


class LangGraphSourceError(LangGraphImportError):
    """The source cannot be read as a LangGraph checkpoint database."""


class LangGraphNotFound(LangGraphSourceError):
    """A thread asked for is not in the source, or the source server cannot be reached."""


class LangGraphValueError(LangGraphImportError, DeserializationError):
    """A value stored in the source cannot be loaded safely, or does not fit stategraph."""


class LangGraphTargetError(LangGraphImportError):
    """The target refused the import, or writing to it failed (and was undone)."""
