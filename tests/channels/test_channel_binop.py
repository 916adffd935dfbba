"""Tests of BinaryOperatorAggregate: defaults, reduction order, Overwrite, equality."""

from __future__ import annotations

import collections.abc
import operator
import typing
from typing import Annotated, Any, Literal, Optional, Union

import pytest

from stategraph.channels import BinaryOperatorAggregate, LastValue
from stategraph.channels.base import MISSING
from stategraph.channels.binop import default_value
from stategraph.errors import EmptyChannelError, ErrorCode, InvalidUpdateError
from stategraph.types import Overwrite

CONCURRENT_URL = ErrorCode.INVALID_CONCURRENT_GRAPH_UPDATE.docs_url


class NoDefault:
    """A type that cannot be built without arguments."""

    def __init__(self, x: int) -> None:
        self.x = x

    def __add__(self, other: NoDefault) -> NoDefault:
        return NoDefault(self.x + other.x)


@pytest.mark.parametrize(
    ("typ", "expected"),
    [
        (int, 0),
        (float, 0.0),
        (str, ""),
        (list, []),
        (tuple, ()),
        (list[str], []),
        (dict[str, int], {}),
        (typing.List[int], []),
        (typing.Tuple[int, ...], ()),
        (Annotated[list, "meta"], []),
        (Annotated[Annotated[set, 1], 2], set()),
        (collections.abc.Sequence, []),
        (collections.abc.MutableSequence[int], []),
        (typing.Sequence[int], []),
        (collections.abc.Set, set()),
        (collections.abc.MutableSet[int], set()),
        (collections.abc.Mapping, {}),
        (typing.MutableMapping[str, int], {}),
    ],
)
def test_default_value_for_constructible_types(typ: Any, expected: Any) -> None:
    value = default_value(typ)
    assert value == expected
    assert type(value) is type(expected)
    ch = BinaryOperatorAggregate(typ, operator.add)
    assert ch.is_available() is True
    assert ch.get() == expected
    assert ch.checkpoint() == expected


@pytest.mark.parametrize(
    "typ",
    [
        NoDefault,
        Optional[list],
        Annotated[Optional[list], 1],
        Union[int, str],
        int | str,
        Literal[1],
        Any,
        None,
        collections.abc.Iterable,
        typing.Callable[[int], int],
    ],
)
def test_default_value_missing_for_unbuildable_types(typ: Any) -> None:
    assert default_value(typ) is MISSING
    ch = BinaryOperatorAggregate(typ, operator.add)
    assert ch.is_available() is False
    assert ch.checkpoint() is MISSING
    with pytest.raises(EmptyChannelError):
        ch.get()


def test_defaults_are_fresh_instances() -> None:
    a = BinaryOperatorAggregate(list, operator.add)
    b = BinaryOperatorAggregate(list, operator.add)
    assert a.get() is not b.get()
    assert a.from_checkpoint(MISSING).get() is not a.get()


def test_reduces_in_order() -> None:
    calls: list[tuple[int, int]] = []

    def record(a: int, b: int) -> int:
        calls.append((a, b))
        return a * 10 + b

    ch = BinaryOperatorAggregate(int, record, key="n")
    assert ch.update([]) is False
    assert ch.update([1, 2]) is True
    assert calls == [(0, 1), (1, 2)]
    assert ch.get() == 12
    assert ch.update([3]) is True
    assert ch.get() == 123


def test_list_concatenation_and_zero_result_still_updates() -> None:
    ch = BinaryOperatorAggregate(list, operator.add)
    assert ch.update([[1]]) is True
    assert ch.update([[2], [3]]) is True
    assert ch.get() == [1, 2, 3]
    num = BinaryOperatorAggregate(int, operator.add)
    assert num.update([0]) is True
    assert num.get() == 0


def test_first_value_becomes_value_when_no_default() -> None:
    ch = BinaryOperatorAggregate(NoDefault, operator.add)
    assert ch.update([NoDefault(1)]) is True
    assert ch.get().x == 1
    ch.update([NoDefault(2), NoDefault(3)])
    assert ch.get().x == 6


@pytest.mark.parametrize("wrap", [Overwrite, lambda v: {"__overwrite__": v}])
def test_overwrite_replaces_and_ignores_later_writes(wrap: Any) -> None:
    seen: list[tuple[int, int]] = []

    def add(a: int, b: int) -> int:
        seen.append((a, b))
        return a + b

    ch = BinaryOperatorAggregate(int, add)
    ch.update([5])
    seen.clear()
    assert ch.update([1, wrap(10), 2, 3]) is True
    assert ch.get() == 10
    assert seen == [(5, 1)]  # writes before the overwrite are reduced, later ones skipped
    assert ch.update([1]) is True  # next step reduces normally again
    assert ch.get() == 11


def test_overwrite_at_end_and_on_lists() -> None:
    ch = BinaryOperatorAggregate(list, operator.add)
    ch.update([[1]])
    ch.update([[2], [3], Overwrite([10])])
    assert ch.get() == [10]
    ch.update([Overwrite([]), [4]])
    assert ch.get() == []


def test_overwrite_of_empty_channel_stores_unwrapped_value() -> None:
    ch = BinaryOperatorAggregate(NoDefault, operator.add)
    item = NoDefault(4)
    assert ch.update([Overwrite(item), NoDefault(1)]) is True
    assert ch.get() is item


def test_overwrite_unwraps_once_and_accepts_none() -> None:
    ch = BinaryOperatorAggregate(int, operator.add)
    ch.update([Overwrite(None)])
    assert ch.is_available() is True
    assert ch.get() is None
    inner = Overwrite(3)
    ch.update([Overwrite(inner)])
    assert ch.get() is inner


def test_dict_with_more_keys_is_an_ordinary_value() -> None:
    ch = BinaryOperatorAggregate(dict, operator.or_)
    ch.update([{"__overwrite__": 1, "x": 2}])
    assert ch.get() == {"__overwrite__": 1, "x": 2}
    ch.update([{"__overwrite__": {"y": 1}}])
    assert ch.get() == {"y": 1}


@pytest.mark.parametrize("second", [Overwrite(2), {"__overwrite__": 2}], ids=["Overwrite", "dict"])
def test_two_overwrites_in_one_step_raise(second: Any) -> None:
    ch = BinaryOperatorAggregate(int, operator.add, key="total")
    with pytest.raises(InvalidUpdateError) as info:
        ch.update([5, Overwrite(1), 7, second])
    assert str(info.value) == (
        "At key 'total': Can receive only one Overwrite value per super-step. "
        "Write Overwrite(...) from a single node per step.\n"
        f"For troubleshooting, visit: {CONCURRENT_URL}"
    )


def test_overwrites_in_different_steps_are_fine() -> None:
    ch = BinaryOperatorAggregate(int, operator.add)
    assert ch.update([Overwrite(10)]) is True
    assert ch.update([Overwrite(3)]) is True
    assert ch.update([]) is False
    assert ch.get() == 3


def test_reducer_error_propagates() -> None:
    ch = BinaryOperatorAggregate(int, operator.add)
    with pytest.raises(TypeError):
        ch.update(["a"])
    assert ch.get() == 0


def test_checkpoint_roundtrip_keeps_operator_typ_key() -> None:
    ch = BinaryOperatorAggregate(int, operator.add, key="total")
    ch.update([3])
    restored = ch.from_checkpoint(ch.checkpoint())
    assert restored.get() == 3
    assert restored.operator is operator.add
    assert restored.typ is int and restored.key == "total"
    restored.update([4])
    assert restored.get() == 7 and ch.get() == 3
    fresh = ch.from_checkpoint(MISSING)
    assert fresh.get() == 0
    missing = BinaryOperatorAggregate(NoDefault, operator.add).from_checkpoint(MISSING)
    assert missing.is_available() is False


def test_copy_is_independent_but_shares_value() -> None:
    ch = BinaryOperatorAggregate(list, operator.add, key="items")
    ch.update([[1]])
    clone = ch.copy()
    assert clone.get() is ch.get()  # values are not copied
    clone.update([[2]])
    assert ch.get() == [1] and clone.get() == [1, 2]
    assert clone.key == "items" and clone.operator is operator.add


def _named_add(a: int, b: int) -> int:
    return a + b


def _make_add() -> Any:
    def _named_add(a: int, b: int) -> int:
        return a + b

    return _named_add


def test_equality_compares_operator_only() -> None:
    add = BinaryOperatorAggregate(int, operator.add)
    assert add == BinaryOperatorAggregate(int, operator.add)
    assert add == BinaryOperatorAggregate(list, operator.add)  # typ is not compared
    assert add != BinaryOperatorAggregate(int, operator.mul)
    assert add != BinaryOperatorAggregate(int, _named_add)
    assert add != LastValue(int)
    assert BinaryOperatorAggregate(int, _named_add) == BinaryOperatorAggregate(int, _named_add)
    # distinct function objects differ even with the same name and code
    assert BinaryOperatorAggregate(int, _make_add()) != BinaryOperatorAggregate(int, _make_add())
    # a lambda matches any operator (a schema read twice rebuilds lambdas)
    assert BinaryOperatorAggregate(int, lambda a, b: a * b) == add
    assert add == BinaryOperatorAggregate(int, lambda a, b: a - b)


def test_equality_with_callable_objects() -> None:
    class Adder:
        def __call__(self, a: int, b: int) -> int:
            return a + b

    adder = Adder()
    assert BinaryOperatorAggregate(int, adder) == BinaryOperatorAggregate(int, adder)
    assert BinaryOperatorAggregate(int, adder) != BinaryOperatorAggregate(int, Adder())


def test_types_and_repr() -> None:
    ch = BinaryOperatorAggregate(int, operator.add, key="total")
    assert ch.ValueType is int and ch.UpdateType is int
    assert ch.consume() is False and ch.finish() is False
    assert repr(ch) == "BinaryOperatorAggregate(key='total', operator=add, value=0)"
