"""The bounds of a remote client: how long it waits and how much it reads.

A server can be slow, broken or hostile; none of that may make a client wait forever
or hold unbounded memory. :class:`RemoteTimeouts` bounds durations and
:class:`RemoteLimits` bounds sizes; ``RemoteGraph(..., timeout=..., limits=...)`` and
the built-in HTTP clients take them. Every bound is checked against the clock or the
byte count of the data itself, so neither a drip of keep-alive comments nor a line that
never ends can get past it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["RemoteTimeouts", "RemoteLimits", "coerce_timeouts", "coerce_limits"]

_MiB = 1024 * 1024


def _check_seconds(owner: str, name: str, value: object, *, optional: bool = False) -> None:
    if optional and value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        hint = "a positive number of seconds" + (" or None" if optional else "")
        raise ValueError(f"{owner}.{name} must be {hint}, got {value!r}.")


def _check_count(owner: str, name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{owner}.{name} must be a positive whole number, got {value!r}.")


@dataclass(frozen=True)
class RemoteTimeouts:
    """How long a remote call may wait, in seconds.

    - ``connect``: to open the connection (TCP and TLS).
    - ``read``: for a whole JSON answer (state, history, drawing), from the request
      being sent to its last byte.
    - ``idle``: in a run stream, for each next event: the head of the answer, then
      every event. Keep-alive comments and partial events do not reset it.
    - ``total``: for the whole call, request and stream included (``None``: no limit).
      A call never outlives it, whatever the other timeouts say.
    """

    connect: float = 10.0
    read: float = 300.0
    idle: float = 300.0
    total: float | None = None

    def __post_init__(self) -> None:
        for name in ("connect", "read", "idle"):
            _check_seconds("RemoteTimeouts", name, getattr(self, name))
        _check_seconds("RemoteTimeouts", "total", self.total, optional=True)


@dataclass(frozen=True)
class RemoteLimits:
    """How much a remote call may read and hold.

    - ``max_line_bytes``: one line of a run stream (a line without an end is refused
      as soon as it grows past this).
    - ``max_event_bytes``: one event of a run stream (all its lines together).
    - ``max_body_bytes``: one JSON answer.
    - ``max_error_chars``: how much of the server's error text is quoted in an
      exception message (the rest is cut, and counted).
    - ``queue_size``: events read ahead for an async consumer; the reader waits (and the
      server with it) while the queue is full.
    """

    max_line_bytes: int = 32 * _MiB
    max_event_bytes: int = 64 * _MiB
    max_body_bytes: int = 64 * _MiB
    max_error_chars: int = 2000
    queue_size: int = 8

    def __post_init__(self) -> None:
        for name in (
            "max_line_bytes",
            "max_event_bytes",
            "max_body_bytes",
            "max_error_chars",
            "queue_size",
        ):
            _check_count("RemoteLimits", name, getattr(self, name))


def coerce_timeouts(value: object) -> RemoteTimeouts:
    """``timeout=``: None (the defaults), a number (the ``total`` deadline of each
    call) or a :class:`RemoteTimeouts`."""
    if value is None:
        return RemoteTimeouts()
    if isinstance(value, RemoteTimeouts):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_seconds("RemoteGraph", "timeout", value)
        return RemoteTimeouts(total=float(value))
    raise TypeError(
        "timeout= takes a number of seconds (the deadline of each call) or a "
        f"RemoteTimeouts(...), got {type(value).__name__}."
    )


def coerce_limits(value: object) -> RemoteLimits:
    """``limits=``: None (the defaults) or a :class:`RemoteLimits`."""
    if value is None:
        return RemoteLimits()
    if isinstance(value, RemoteLimits):
        return value
    raise TypeError(f"limits= takes a RemoteLimits(...), got {type(value).__name__}.")
