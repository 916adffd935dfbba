"""Values whose type and value a serializer (and every saver) must preserve.

:func:`fidelity_cases` returns ``(name, value, types_to_allow)`` triples built fresh on
each call; :func:`assert_same` compares two values recursively, type by type. The
saver test suite loads this file by path, so it imports only the standard library,
pydantic and stategraph, and it does not use ``from __future__ import annotations``
(pydantic must resolve the field annotations without importing this module by name).
"""

import collections
import dataclasses
import datetime
import decimal
import enum
import pathlib
import re
import sys
import uuid
import zoneinfo
from typing import Any, Generic, NamedTuple, Optional, TypeVar

import pydantic

from stategraph.types import Command, Interrupt, Overwrite, Send

T = TypeVar("T")


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


if sys.version_info >= (3, 11):

    class Mode(enum.StrEnum):
        FAST = "fast"
        SAFE = "safe"

else:

    class Mode(str, enum.Enum):
        FAST = "fast"
        SAFE = "safe"


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: int = 0


@dataclasses.dataclass
class Line:
    start: Point
    end: Point
    label: Optional[str] = None


@dataclasses.dataclass
class Tagged:
    name: str
    tags: dict[str, Color] = dataclasses.field(default_factory=dict)


class Item(pydantic.BaseModel):
    name: str
    price: decimal.Decimal
    when: Optional[datetime.datetime] = None


class Page(pydantic.BaseModel, Generic[T]):
    items: list[T]
    total: int


@dataclasses.dataclass
class Cart:
    """A dataclass holding pydantic models."""

    owner: str
    items: list[Item]


class Shipment(pydantic.BaseModel):
    """A pydantic model holding dataclasses."""

    origin: Point
    route: list[Point]
    priority: Priority = Priority.LOW


class Pair(NamedTuple):
    left: int
    right: str = "r"


def _std_cases() -> list[tuple[str, Any, list[type]]]:
    tz_plus = datetime.timezone(datetime.timedelta(hours=5, minutes=30))
    tz_named = datetime.timezone(datetime.timedelta(hours=-3), "BRT")
    paris = zoneinfo.ZoneInfo("Europe/Paris")
    return [
        ("plain_json", {"a": [1, 2.5, "x", None, True], "b": {"c": {}}}, []),
        ("int_and_tuple_keys", {1: "one", (1, 2): "pair", (1, (2, 3)): "nested"}, []),
        ("tuple", (1, "a", None), []),
        ("nested_tuples", (1, (2, (3,)), ()), []),
        ("tuple_in_list", [(1, 2), [(3,)], {"t": (4, 5)}], []),
        ("set", {1, 2, "three"}, []),
        ("frozenset", frozenset({(1, 2), "x"}), []),
        ("bytes_nested", {"raw": b"\x00\xff"}, []),
        ("datetime_naive", datetime.datetime(2024, 5, 6, 7, 8, 9, 123456), []),
        ("datetime_utc", datetime.datetime(2024, 5, 6, 7, 8, tzinfo=datetime.timezone.utc), []),
        ("datetime_offset", datetime.datetime(2024, 1, 2, 3, 4, tzinfo=tz_plus), []),
        ("datetime_named_offset", datetime.datetime(2024, 1, 2, tzinfo=tz_named), []),
        ("datetime_zoneinfo", datetime.datetime(2024, 7, 1, 12, tzinfo=paris), []),
        (
            "datetime_zoneinfo_fold",
            datetime.datetime(2024, 10, 27, 2, 30, fold=1, tzinfo=paris),
            [],
        ),
        ("date", datetime.date(1999, 12, 31), []),
        ("time", datetime.time(23, 59, 1, 5), []),
        ("time_tz", datetime.time(8, 0, tzinfo=tz_plus), []),
        ("timedelta", datetime.timedelta(days=-2, seconds=7, microseconds=9), []),
        ("timezone", tz_named, []),
        ("zoneinfo", paris, []),
        ("uuid", uuid.UUID("12345678-1234-5678-1234-567812345678"), []),
        ("decimal", decimal.Decimal("-12.3400"), []),
        ("big_int", [2**100, -(2**90), 2**64, -(2**63) - 1], []),
        ("complex", 1.5 - 2j, []),
        ("pure_posix_path", pathlib.PurePosixPath("/etc/hosts"), []),
        ("pure_windows_path", pathlib.PureWindowsPath("C:\\Users\\x"), []),
        ("concrete_path", pathlib.Path("relative/dir"), []),
        ("pattern", re.compile(r"^a+\d{2}$", re.IGNORECASE | re.MULTILINE), []),
        ("bytes_pattern", re.compile(rb"\x00+"), []),
        ("defaultdict_list", collections.defaultdict(list, {"a": [1], "b": []}), []),
        ("defaultdict_int", collections.defaultdict(int, {(1, 2): 3}), []),
        ("ordered_dict", collections.OrderedDict([("z", 1), ("a", 2)]), []),
        ("deque", collections.deque([1, (2, 3)], maxlen=5), []),
        ("deque_unbounded", collections.deque(["a"]), []),
        ("counter", collections.Counter("abracadabra"), []),
        ("send", Send("node", {"arg": (1, 2)}), []),
        ("interrupt", Interrupt(value={"q": "ok?"}, id="abc"), []),
        ("command", Command(update={"x": 1}, goto=[Send("a", 1), "b"], resume=None), []),
        ("overwrite", Overwrite(value=[1, 2]), []),
    ]


def _user_cases() -> list[tuple[str, Any, list[type]]]:
    item = Item(name="pen", price=decimal.Decimal("1.50"), when=datetime.datetime(2024, 1, 1))
    return [
        ("enum", Color.GREEN, [Color]),
        ("int_enum", Priority.HIGH, [Priority]),
        ("str_enum", Mode.SAFE, [Mode]),
        ("enum_keys", {Color.RED: 1, Priority.LOW: [Mode.FAST]}, [Color, Priority, Mode]),
        ("uuid_and_date_keys", {uuid.UUID(int=7): {datetime.date(2020, 1, 1): "d"}}, []),
        ("frozen_dataclass", Point(1, 2), [Point]),
        ("dataclass_defaults", Line(Point(0), Point(3, 4)), [Line]),
        ("enum_in_dict_in_dataclass", Tagged("t", {"c": Color.RED}), [Tagged]),
        ("pydantic", item, [Item]),
        ("pydantic_generic", Page[Item](items=[item], total=1), [Page[Item]]),
        ("pydantic_in_dataclass", Cart("ann", [item]), [Cart]),
        ("dataclass_in_pydantic", Shipment(origin=Point(1), route=[Point(2, 3)]), [Shipment]),
        ("namedtuple", Pair(1), [Pair]),
        ("namedtuple_in_list", [Pair(2, "x"), (Pair(3), 4)], [Pair]),
        ("defaultdict_of_class", collections.defaultdict(Tagged, {"k": Tagged("v")}), [Tagged]),
    ]


def _message_cases() -> list[tuple[str, Any, list[type]]]:
    try:
        from stategraph.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
    except ImportError:
        return []
    ai = AIMessage(
        content="calling", id="m2", tool_calls=[{"name": "t", "args": {"a": 1}, "id": "c1"}]
    )
    return [
        (
            "messages",
            [
                HumanMessage(content="hi", id="m1"),
                ai,
                ToolMessage(content="done", tool_call_id="c1", id="m3"),
                RemoveMessage(id="m1"),
            ],
            [],
        )
    ]


def fidelity_cases() -> list[tuple[str, Any, list[type]]]:
    """``(name, value, types to allow)`` for every value whose type must survive a save."""
    return _std_cases() + _user_cases() + _message_cases()


def assert_same(expected: Any, actual: Any, path: str = "value") -> None:
    """Assert ``actual`` equals ``expected`` with the same type at every level."""
    assert type(actual) is type(expected), (
        f"{path}: type {type(actual).__qualname__} != {type(expected).__qualname__}"
    )
    if isinstance(expected, dict):
        assert list(actual) == list(expected), f"{path}: keys {list(actual)} != {list(expected)}"
        for (k1, v1), (k2, v2) in zip(expected.items(), actual.items(), strict=True):
            assert_same(k1, k2, f"{path}.key({k1!r})")
            assert_same(v1, v2, f"{path}[{k1!r}]")
        if isinstance(expected, collections.defaultdict):
            assert actual.default_factory is expected.default_factory, f"{path}: factory"
    elif isinstance(expected, (list, tuple, collections.deque)):
        assert len(actual) == len(expected), f"{path}: length"
        for index, (a, b) in enumerate(zip(expected, actual, strict=True)):
            assert_same(a, b, f"{path}[{index}]")
        if isinstance(expected, collections.deque):
            assert actual.maxlen == expected.maxlen, f"{path}: maxlen"
    elif dataclasses.is_dataclass(expected):
        for field in dataclasses.fields(expected):
            assert_same(
                getattr(expected, field.name), getattr(actual, field.name), f"{path}.{field.name}"
            )
    elif isinstance(expected, pydantic.BaseModel):
        for name in type(expected).model_fields:
            assert_same(getattr(expected, name), getattr(actual, name), f"{path}.{name}")
        assert actual.model_fields_set == expected.model_fields_set, f"{path}: fields set"
    elif isinstance(expected, Send):
        assert actual.node == expected.node, f"{path}.node"
        assert_same(expected.arg, actual.arg, f"{path}.arg")
    elif isinstance(expected, datetime.datetime):
        assert actual == expected and actual.fold == expected.fold, f"{path}: {actual!r}"
        assert actual.tzinfo == expected.tzinfo or actual.tzinfo is expected.tzinfo, f"{path}: tz"
    assert actual == expected, f"{path}: {actual!r} != {expected!r}"
