"""Checking a graph input against the state's reducers before anything is saved.

The START task folds the input into the state one step after the input checkpoint is
saved. A value a reducer cannot take (``{"items": 5}`` for ``Annotated[list,
operator.add]``) would then fail that step and stay behind as a pending write that
breaks every later read of the thread. :func:`check_input_writes` runs each reducer on
the input first: against the channel's default value, and, when that fails, against a
deep copy of the current value (a reducer may need existing state, e.g. removing a
message by id). The live state is never touched.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from stategraph.channels.base import MISSING, BaseChannel
from stategraph.channels.binop import BinaryOperatorAggregate
from stategraph.errors import InvalidUpdateError

__all__ = ["check_input_writes"]


def _reducer_name(fn: Any) -> str:
    module = getattr(fn, "__module__", None)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{module}.{name}" if module and module != "builtins" else str(name)


def _folds(channel: BinaryOperatorAggregate, value: Any) -> BaseException | None:
    """``None`` if ``channel``'s reducer takes ``value``, else the error it raised."""
    trial = channel.from_checkpoint(MISSING)
    try:
        trial.update([value])
        return None
    except Exception:
        pass
    try:
        current = channel.checkpoint()
        trial = channel.from_checkpoint(copy.deepcopy(current))
    except Exception:
        return None  # cannot make a safe copy: leave the decision to the step
    try:
        trial.update([value])
    except Exception as exc:
        return exc
    return None


def _plain_reduce(self: BaseException) -> tuple[Any, ...]:
    return (InvalidUpdateError, self.args)


_DUAL_CLASSES: dict[type[BaseException], type[InvalidUpdateError]] = {}


def _error_class(error: BaseException) -> type[InvalidUpdateError]:
    """:class:`InvalidUpdateError`, also a subclass of the reducer's own error type when
    that is a built-in one (``TypeError``, ``ValueError``...): code written for
    LangGraph, where the reducer's error reaches the caller as it is, still catches it."""
    kind = type(error)
    if kind.__module__ != "builtins" or not issubclass(kind, Exception):
        return InvalidUpdateError
    dual = _DUAL_CLASSES.get(kind)
    if dual is None:
        try:
            dual = type(
                "InvalidUpdateError",
                (InvalidUpdateError, kind),
                {
                    "__module__": InvalidUpdateError.__module__,
                    "__doc__": InvalidUpdateError.__doc__,
                    # pickled (e.g. sent between processes) as the plain error
                    "__reduce__": _plain_reduce,
                },
            )
        except TypeError:  # a built-in type that cannot be combined (layout conflict)
            return InvalidUpdateError
        _DUAL_CLASSES[kind] = dual
    return dual


def check_input_writes(
    writes: Iterable[tuple[str, Any]], channels: Mapping[str, BaseChannel], what: str = "input"
) -> None:
    """Raise :class:`InvalidUpdateError` if a reducer channel cannot take its input value.

    The message names the key, the reducer and the value's type (``what`` names the
    call: ``"input"``, or e.g. ``"update_state(as_node='a') value"``); the original
    error is the cause. The error is also an instance of the reducer's built-in error type.
    """
    for key, value in writes:
        channel = channels.get(key)
        if not isinstance(channel, BinaryOperatorAggregate):
            continue
        error = _folds(channel, value)
        if error is not None:
            raise _error_class(error)(
                f"Invalid {what} for key '{key}': its reducer {_reducer_name(channel.operator)} "
                f"cannot fold a value of type {type(value).__name__} ({value!r:.80}) into the "
                f"state: {type(error).__name__}: {error}. Nothing was saved; pass a value "
                f"the reducer accepts (for operator.add on a list, a list)."
            ) from error
