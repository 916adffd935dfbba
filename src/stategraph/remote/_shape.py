"""A remote run's events turned into the chunks a local ``stream`` call yields.

One state machine for both ``stream`` and ``astream`` (they differ only in how they
iterate the client): :meth:`RunShape.emit` takes each event in arrival order and
:meth:`RunShape.finish` runs once the client's stream is exhausted, which for the
built-in client means the server said the run ended (a cut stream raises before).
An ``error`` event is a :class:`~stategraph.remote.RemoteError`; an interrupt seen
while running as a subgraph is held until the end and raised then as
:class:`~stategraph.errors.GraphInterrupt`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterable, Iterable, Iterator, Mapping
from typing import Any

from stategraph.errors import GraphInterrupt
from stategraph.remote._decode import interrupts_of, malformed
from stategraph.remote._errors import RemoteError, Secrets
from stategraph.remote._sse import END_EVENT, StreamPart
from stategraph.types import Interrupt

__all__ = ["RunShape", "RunResult", "INTERRUPT"]

INTERRUPT = "__interrupt__"
_QUIET = ("metadata", END_EVENT)
_MAX_MESSAGE = 2000


def _part(chunk: Any, where: str) -> tuple[str, Any, Any]:
    if isinstance(chunk, Mapping):
        event, data, ident = chunk.get("event"), chunk.get("data"), chunk.get("id")
    else:
        event = getattr(chunk, "event", None)
        data, ident = getattr(chunk, "data", None), getattr(chunk, "id", None)
    if not isinstance(event, str):
        raise malformed(where, "event", "an event name (a string)", event)
    return event, data, ident


def _error_message(data: Any, secrets: Secrets) -> str:
    if isinstance(data, Mapping):
        message = data.get("message", data)
        kind = data.get("error")
        text = message if isinstance(message, str) else repr(message)
        if isinstance(kind, str) and kind and not text.startswith(kind):
            text = f"{kind}: {text}"
    else:
        text = data if isinstance(data, str) else repr(data)
    return secrets.clean(text, _MAX_MESSAGE)


@dataclasses.dataclass
class RunShape:
    """Turns server events into the chunks a local ``stream`` call would yield."""

    modes: list[str]
    single: bool
    subgraphs: bool
    caller_ns: tuple[str, ...]
    where: str = "runs.stream"
    secrets: Secrets = dataclasses.field(default_factory=Secrets)
    interrupts: list[Interrupt] = dataclasses.field(default_factory=list)

    def finish(self) -> None:
        """Called once the client's stream is exhausted: the remote run has ended (and
        saved its last checkpoint). A remote interrupt seen while running as a
        subgraph is raised now, not when its event arrives, so that the next call
        (a resume) reads the paused thread rather than racing its last save."""
        if self.interrupts:
            raise GraphInterrupt(list(self.interrupts))

    def emit(self, chunk: Any) -> Iterator[Any]:
        """The local chunks (none or one) of one server event."""
        event, data, ident = _part(chunk, self.where)
        mode, *ns_parts = event.split("|")
        if mode == "error":
            raise RemoteError(
                f"The remote run failed: {_error_message(data, self.secrets)}",
                endpoint=self.where,
            )
        if mode in _QUIET:
            return
        ns = tuple(ns_parts)
        if not ns and mode in ("updates", "values") and isinstance(data, Mapping):
            if INTERRUPT in data:
                found = interrupts_of(data[INTERRUPT], self.where, f"{mode}.{INTERRUPT}")
                if self.caller_ns and mode == "updates" and found:
                    self.interrupts.extend(found)
                    return
        if mode not in self.modes or (ns and not self.subgraphs):
            return
        if mode == "messages":
            if not isinstance(data, (list, tuple)) or len(data) != 2:
                raise malformed(self.where, "messages", "a [message, metadata] pair", data)
            data = tuple(data)
        full_ns = self.caller_ns + ns
        if self.subgraphs:
            yield (full_ns, data) if self.single else (full_ns, mode, data)
        elif self.single:
            yield data
        else:
            yield StreamPart(mode, data, ident)


@dataclasses.dataclass
class RunResult:
    """The output of ``invoke``: the last values, plus interrupts sent after them."""

    value: Any = None

    @classmethod
    def of(cls, chunks: Iterable[Any]) -> Any:
        """The output of a ``values`` stream."""
        result = cls()
        for chunk in chunks:
            result.add(chunk)
        return result.value

    @classmethod
    async def aof(cls, chunks: AsyncIterable[Any]) -> Any:
        """The output of an async ``values`` stream."""
        result = cls()
        async for chunk in chunks:
            result.add(chunk)
        return result.value

    def add(self, chunk: Any) -> None:
        """Take one ``values`` chunk."""
        if isinstance(chunk, Mapping) and set(chunk) == {INTERRUPT}:
            base = dict(self.value) if isinstance(self.value, Mapping) else {}
            base[INTERRUPT] = chunk[INTERRUPT]
            self.value = base
        else:
            self.value = chunk
