"""``BinaryOperatorAggregate``: folds every write into the value with a reducer."""

from __future__ import annotations

import collections.abc
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Generic, get_args, get_origin

from typing_extensions import Self

from stategraph.channels.base import MISSING, Value, _ValueChannel
from stategraph.errors import (
    ErrorCode,
    InvalidUpdateError,
    create_error_message,
)
from stategraph.types import Overwrite

__all__ = ["BinaryOperatorAggregate", "default_value"]

_OVERWRITE_KEY = "__overwrite__"

# Abstract container types a state key may be annotated with, and the concrete type
# whose empty instance is the channel's starting value.
_CONCRETE: dict[Any, type] = {
    collections.abc.Sequence: list,
    collections.abc.MutableSequence: list,
    collections.abc.Set: set,
    collections.abc.MutableSet: set,
    collections.abc.Mapping: dict,
    collections.abc.MutableMapping: dict,
}


def default_value(typ: Any) -> Any:
    """Return an empty instance of ``typ`` to start a reduction from, or ``MISSING``.

    ``Annotated`` is unwrapped, generic aliases such as ``list[str]`` give their origin
    (``list()``), abstract sequences, sets and mappings give ``list``, ``set`` and
    ``dict``. Types that cannot be called without arguments (unions, ``Any``, classes
    with required parameters) give ``MISSING``: the first write becomes the value.
    """
    origin = get_origin(typ)
    while origin is Annotated:
        typ = get_args(typ)[0]
        origin = get_origin(typ)
    if origin is not None:
        typ = origin
    try:
        typ = _CONCRETE.get(typ, typ)
    except TypeError:  # unhashable annotation object
        pass
    try:
        return typ()
    except Exception:
        return MISSING


def _operators_equal(a: Callable[..., Any], b: Callable[..., Any]) -> bool:
    # A lambda cannot be recognised by identity when the same schema is read twice, so
    # it matches any operator; named callables must be the same object.
    if a is b:
        return True
    return getattr(a, "__name__", None) == "<lambda>" or getattr(b, "__name__", None) == "<lambda>"


class BinaryOperatorAggregate(Generic[Value], _ValueChannel[Value, Value, Value]):
    """Stores ``operator(value, write)`` folded over every write, in order.

    This is the channel of a state key annotated with a reducer, e.g.
    ``Annotated[list, operator.add]``. The value starts as an empty instance of
    ``typ`` when one can be built (see :func:`default_value`), else the first write.

    Writing ``Overwrite(x)`` (or ``{"__overwrite__": x}``) sets the value to ``x``
    without calling the reducer; later ordinary writes of the same step are ignored,
    and a second overwrite in one step raises :class:`InvalidUpdateError`.
    """

    __slots__ = ("operator",)
    _config = ("operator",)

    operator: Callable[[Value, Value], Value]

    def __init__(self, typ: Any, operator: Callable[[Value, Value], Value], key: str = "") -> None:
        super().__init__(typ, key)
        self.operator = operator
        self.value = default_value(typ)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BinaryOperatorAggregate) and _operators_equal(
            self.operator, other.operator
        )

    def __repr__(self) -> str:
        name = getattr(self.operator, "__name__", repr(self.operator))
        return f"BinaryOperatorAggregate(key={self.key!r}, operator={name}, value={self.value!r})"

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Return a new channel holding ``checkpoint``, or a fresh default for ``MISSING``."""
        new = self._empty()
        if type(checkpoint).__name__ == "_DeltaSnapshot":
            checkpoint = checkpoint.value  # written by a DeltaChannel of the same key
        new.value = default_value(self.typ) if checkpoint is MISSING else checkpoint
        return new

    def update(self, values: Sequence[Value]) -> bool:
        """Fold the step's writes into the value; return True if anything was written."""
        if not values:
            return False
        overwritten = False
        for value in values:
            if isinstance(value, Overwrite):
                new_value = value.value
            elif isinstance(value, dict) and len(value) == 1 and _OVERWRITE_KEY in value:
                new_value = value[_OVERWRITE_KEY]
            else:
                if overwritten:
                    continue
                if self.value is MISSING:
                    self.value = value
                else:
                    self.value = self.operator(self.value, value)
                continue
            if overwritten:
                raise InvalidUpdateError(
                    create_error_message(
                        message=f"At key '{self.key}': Can receive only one Overwrite "
                        "value per super-step. Write Overwrite(...) from a single node "
                        "per step.",
                        error_code=ErrorCode.INVALID_CONCURRENT_GRAPH_UPDATE,
                    )
                )
            overwritten = True
            self.value = new_value
        return True
